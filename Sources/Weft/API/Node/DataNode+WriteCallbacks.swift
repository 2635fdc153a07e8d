import Dispatch
import WeftCore

// The completion-callback forms of the writes. Each submits its write before it returns (so the write is
// applied, and visible to reads and observers, at once), and calls the completion once the write reaches
// `target`. They return the write's receipt (or, for a push, the new child) at once, or nil when the
// write could not be submitted; the completion then gets the error.
//
// The completion is required here: with it optional, `try await node.set(v)` in top-level code would
// pick this synchronous overload and not wait. The seed's forms without a completion are separate
// `noasync` overloads (DataNode+FireAndForget.swift).

extension DataNode {
    /// The completion form of ``set(_:at:waitingFor:)``.
    ///
    /// ```swift
    /// node.set(User(name: "Alice")) { result in if case .failure(let error) = result { print(error) } }
    /// ```
    /// - Parameters:
    ///   - value: the new value, or nil to delete the node.
    ///   - time: when the write happens.
    ///   - target: the status to wait for before calling `completion` (default `.durable`).
    ///   - queue: where `completion` runs; nil for the replica's `callbackQueue`.
    ///   - completion: called once with the receipt or a `WeftError`.
    /// - Returns: the receipt, or nil when the write failed before it was submitted.
    @discardableResult
    public func set(
        _ value: (some Encodable)?, at time: WeftTime = .now, waitingFor target: WriteStatus = .durable,
        queue: DispatchQueue? = nil, then completion: @escaping @Sendable (Result<WriteReceipt, WeftError>) -> Void
    ) -> WriteReceipt? {
        callback(target, queue, completion) { try submitSet(encoded(value), at: time) }
    }

    /// The completion form of ``set(_:_:at:waitingFor:)``.
    ///
    /// ```swift
    /// node.set(.raw, ["name": "Alice"], queue: .main) { _ in }
    /// ```
    /// - Parameters:
    ///   - raw: `.raw`, to pick this overload.
    ///   - json: the new value as a JSON object graph.
    ///   - time: when the write happens.
    ///   - target: the status to wait for before calling `completion` (default `.durable`).
    ///   - queue: where `completion` runs; nil for the replica's `callbackQueue`.
    ///   - completion: called once with the receipt or a `WeftError`.
    /// - Returns: the receipt, or nil when the write failed before it was submitted.
    @discardableResult
    public func set(
        _ raw: RawMarker, _ json: Any?, at time: WeftTime = .now, waitingFor target: WriteStatus = .durable,
        queue: DispatchQueue? = nil, then completion: @escaping @Sendable (Result<WriteReceipt, WeftError>) -> Void
    ) -> WriteReceipt? {
        callback(target, queue, completion) { try submitSet(rawValue(json), at: time) }
    }

    /// The completion form of ``set(json:at:waitingFor:)``.
    ///
    /// ```swift
    /// node.set(json: "[1,2,3]") { _ in }
    /// ```
    /// - Parameters:
    ///   - json: JSON text.
    ///   - time: when the write happens.
    ///   - target: the status to wait for before calling `completion` (default `.durable`).
    ///   - queue: where `completion` runs; nil for the replica's `callbackQueue`.
    ///   - completion: called once with the receipt or a `WeftError`.
    /// - Returns: the receipt, or nil when the write failed before it was submitted.
    @discardableResult
    public func set(
        json: String, at time: WeftTime = .now, waitingFor target: WriteStatus = .durable,
        queue: DispatchQueue? = nil, then completion: @escaping @Sendable (Result<WriteReceipt, WeftError>) -> Void
    ) -> WriteReceipt? {
        callback(target, queue, completion) { try submitSet(parsedValue(json), at: time) }
    }

    /// The completion form of ``clear(at:waitingFor:)``.
    ///
    /// ```swift
    /// drafts.clear { _ in }
    /// ```
    /// - Parameters:
    ///   - time: when the write happens.
    ///   - target: the status to wait for before calling `completion` (default `.durable`).
    ///   - queue: where `completion` runs; nil for the replica's `callbackQueue`.
    ///   - completion: called once with the receipt or a `WeftError`.
    /// - Returns: the receipt, or nil when the write failed before it was submitted.
    @discardableResult
    public func clear(
        at time: WeftTime = .now, waitingFor target: WriteStatus = .durable, queue: DispatchQueue? = nil,
        then completion: @escaping @Sendable (Result<WriteReceipt, WeftError>) -> Void
    ) -> WriteReceipt? {
        callback(target, queue, completion) { try submitSet(.null, at: time) }
    }

    /// The completion form of ``merge(with:at:waitingFor:)``.
    ///
    /// ```swift
    /// alice.merge(with: ["age": 32]) { _ in }
    /// ```
    /// - Parameters:
    ///   - value: the members to set.
    ///   - time: when the write happens.
    ///   - target: the status to wait for before calling `completion` (default `.durable`).
    ///   - queue: where `completion` runs; nil for the replica's `callbackQueue`.
    ///   - completion: called once with the receipt or a `WeftError`.
    /// - Returns: the receipt, or nil when the write failed before it was submitted.
    @discardableResult
    public func merge(
        with value: some Encodable, at time: WeftTime = .now, waitingFor target: WriteStatus = .durable,
        queue: DispatchQueue? = nil, then completion: @escaping @Sendable (Result<WriteReceipt, WeftError>) -> Void
    ) -> WriteReceipt? {
        callback(target, queue, completion) { try submitMerge(mergeChildren(of: encoded(value)), at: time) }
    }

    /// The completion form of ``merge(_:with:at:waitingFor:)``.
    ///
    /// ```swift
    /// alice.merge(.raw, with: ["address/city": "Lyon"]) { _ in }
    /// ```
    /// - Parameters:
    ///   - raw: `.raw`, to pick this overload.
    ///   - json: relative paths and their new values.
    ///   - time: when the write happens.
    ///   - target: the status to wait for before calling `completion` (default `.durable`).
    ///   - queue: where `completion` runs; nil for the replica's `callbackQueue`.
    ///   - completion: called once with the receipt or a `WeftError`.
    /// - Returns: the receipt, or nil when the write failed before it was submitted.
    @discardableResult
    public func merge(
        _ raw: RawMarker, with json: [String: Any], at time: WeftTime = .now,
        waitingFor target: WriteStatus = .durable, queue: DispatchQueue? = nil,
        then completion: @escaping @Sendable (Result<WriteReceipt, WeftError>) -> Void
    ) -> WriteReceipt? {
        callback(target, queue, completion) { try submitMerge(rawMergeChildren(json), at: time) }
    }

    /// The completion form of ``push(_:at:waitingFor:)``.
    ///
    /// ```swift
    /// let message = chat.push(Message(text: "hi")) { _ in }   // DataNode?
    /// ```
    /// - Parameters:
    ///   - value: the child's value.
    ///   - time: when the write happens.
    ///   - target: the status to wait for before calling `completion` (default `.durable`).
    ///   - queue: where `completion` runs; nil for the replica's `callbackQueue`.
    ///   - completion: called once with the new child or a `WeftError`.
    /// - Returns: the new child, or nil when the write failed before it was submitted.
    @discardableResult
    public func push(
        _ value: (some Encodable)?, at time: WeftTime = .now, waitingFor target: WriteStatus = .durable,
        queue: DispatchQueue? = nil, then completion: @escaping @Sendable (Result<DataNode, WeftError>) -> Void
    ) -> DataNode? {
        callback(target, queue, completion) { try submitPush(encoded(value), at: time) }
    }

    /// The completion form of ``push(_:_:at:waitingFor:)``.
    ///
    /// ```swift
    /// chat.push(.raw, ["text": "hi"]) { _ in }
    /// ```
    /// - Parameters:
    ///   - raw: `.raw`, to pick this overload.
    ///   - json: the child's value as a JSON object graph.
    ///   - time: when the write happens.
    ///   - target: the status to wait for before calling `completion` (default `.durable`).
    ///   - queue: where `completion` runs; nil for the replica's `callbackQueue`.
    ///   - completion: called once with the new child or a `WeftError`.
    /// - Returns: the new child, or nil when the write failed before it was submitted.
    @discardableResult
    public func push(
        _ raw: RawMarker, _ json: Any?, at time: WeftTime = .now, waitingFor target: WriteStatus = .durable,
        queue: DispatchQueue? = nil, then completion: @escaping @Sendable (Result<DataNode, WeftError>) -> Void
    ) -> DataNode? {
        callback(target, queue, completion) { try submitPush(rawValue(json), at: time) }
    }

    /// The completion form of ``increment(from:by:at:waitingFor:)``.
    ///
    /// ```swift
    /// likes.increment(by: 1) { result in if case .success(let added) = result { print(added.value) } }
    /// ```
    /// - Parameters:
    ///   - start: the value an absent node counts as (default 0).
    ///   - step: what to add (default 1).
    ///   - time: when the write happens.
    ///   - target: the status to wait for before calling `completion` (default `.durable`).
    ///   - queue: where `completion` runs; nil for the replica's `callbackQueue`.
    ///   - completion: called once with the number after the increment and its receipt, or a `WeftError`
    ///     (`rejected` when the node is not a number).
    /// - Returns: the number just after the increment applied locally and the receipt, or nil when the
    ///   write failed before it was submitted.
    @discardableResult
    public func increment(
        from start: Number = 0, by step: Number = 1, at time: WeftTime = .now,
        waitingFor target: WriteStatus = .durable, queue: DispatchQueue? = nil,
        then completion: @escaping @Sendable (Result<IncrementResult, WeftError>) -> Void
    ) -> IncrementResult? {
        callback(target, queue, completion) { try submitIncrement(from: start, by: step, at: time) }
    }

    /// The completion form of ``copyValue(to:at:waitingFor:)-(DataNode,_,_)``.
    ///
    /// ```swift
    /// draft.copyValue(to: published) { _ in }
    /// ```
    /// - Parameters:
    ///   - destination: the node to set, on the same replica.
    ///   - time: when the write happens.
    ///   - target: the status to wait for before calling `completion` (default `.durable`).
    ///   - queue: where `completion` runs; nil for the replica's `callbackQueue`.
    ///   - completion: called once with the copied value or a `WeftError`.
    /// - Returns: the copied value, or nil when the write failed before it was submitted.
    @discardableResult
    public func copyValue(
        to destination: DataNode, at time: WeftTime = .now, waitingFor target: WriteStatus = .durable,
        queue: DispatchQueue? = nil, then completion: @escaping @Sendable (Result<Value, WeftError>) -> Void
    ) -> Value? {
        callback(target, queue, completion) { try submitCopy(to: destination, at: time) }
    }

    /// The completion form of ``copyValue(to:at:waitingFor:)-(String,_,_)``.
    ///
    /// ```swift
    /// draft.copyValue(to: "/posts/42") { _ in }
    /// ```
    /// - Parameters:
    ///   - destinationPath: the destination's absolute path.
    ///   - time: when the write happens.
    ///   - target: the status to wait for before calling `completion` (default `.durable`).
    ///   - queue: where `completion` runs; nil for the replica's `callbackQueue`.
    ///   - completion: called once with the copied value or a `WeftError`.
    /// - Returns: the copied value, or nil when the write failed before it was submitted.
    @discardableResult
    public func copyValue(
        to destinationPath: String, at time: WeftTime = .now, waitingFor target: WriteStatus = .durable,
        queue: DispatchQueue? = nil, then completion: @escaping @Sendable (Result<Value, WeftError>) -> Void
    ) -> Value? {
        callback(target, queue, completion) { try submitCopy(to: destination(destinationPath), at: time) }
    }

    private func callback<Output: Sendable>(
        _ target: WriteStatus, _ queue: DispatchQueue?,
        _ completion: @escaping @Sendable (Result<Output, WeftError>) -> Void,
        submit: () throws -> Submitted<Output>
    ) -> Output? {
        Completion.write(
            waitingFor: target, path: path, queue: queue ?? access.state.callbackQueue, completion: completion,
            submit: submit)
    }
}
