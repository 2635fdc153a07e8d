import Dispatch
import WeftCore

// The seed's callback writes whose completion is optional: `node.set(v)` from synchronous code writes
// and returns. Here the form without a completion is a separate overload, unavailable in async code
// (`noasync`): there `try await node.set(v)` must keep meaning the async form, and with the completion
// merely optional, top-level code could pick this form and not wait. The forms with a completion stay
// usable everywhere.

extension DataNode {
    /// Sets the value without waiting, from synchronous code; a failure is logged (see ``Replica/logLevel``).
    ///
    /// ```swift
    /// score.set(42)                      // applied before it returns
    /// ```
    /// - Returns: the receipt, or nil when the write failed validation (the error is logged).
    @available(*, noasync, message: "in async code use try await node.set(value), or pass a completion")
    @discardableResult
    public func set(_ value: (some Encodable)?, at time: WeftTime = .now) -> WriteReceipt? {
        set(value, at: time, waitingFor: .pending, then: logFailure("set"))
    }

    /// Sets a JSON object graph without waiting, from synchronous code; a failure is logged.
    ///
    /// ```swift
    /// node.set(.raw, ["name": "Alice"])
    /// ```
    @available(*, noasync, message: "in async code use try await node.set(.raw, json), or pass a completion")
    @discardableResult
    public func set(_ raw: RawMarker, _ json: Any?, at time: WeftTime = .now) -> WriteReceipt? {
        set(raw, json, at: time, waitingFor: .pending, then: logFailure("set"))
    }

    /// Deletes the node without waiting, from synchronous code; a failure is logged.
    ///
    /// ```swift
    /// drafts.clear()
    /// ```
    @available(*, noasync, message: "in async code use try await node.clear(), or pass a completion")
    @discardableResult
    public func clear(at time: WeftTime = .now) -> WriteReceipt? {
        clear(at: time, waitingFor: .pending, then: logFailure("clear"))
    }

    /// Merges an `Encodable` object without waiting, from synchronous code; a failure is logged.
    ///
    /// ```swift
    /// alice.merge(with: ["age": 32])
    /// ```
    @available(*, noasync, message: "in async code use try await node.merge(with: value), or pass a completion")
    @discardableResult
    public func merge(with value: some Encodable, at time: WeftTime = .now) -> WriteReceipt? {
        merge(with: value, at: time, waitingFor: .pending, then: logFailure("merge"))
    }

    /// Merges a raw dictionary without waiting, from synchronous code; a failure is logged.
    ///
    /// ```swift
    /// alice.merge(.raw, with: ["address/city": "Lyon"])
    /// ```
    @available(*, noasync, message: "in async code use try await node.merge(.raw, with: json), or pass a completion")
    @discardableResult
    public func merge(_ raw: RawMarker, with json: [String: Any], at time: WeftTime = .now) -> WriteReceipt? {
        merge(raw, with: json, at: time, waitingFor: .pending, then: logFailure("merge"))
    }

    /// Adds a child under a new push id without waiting, from synchronous code; a failure is logged.
    ///
    /// ```swift
    /// let message = chat.push(Message(author: "alice", text: "hi"))   // DataNode?
    /// ```
    @available(*, noasync, message: "in async code use try await node.push(value), or pass a completion")
    @discardableResult
    public func push(_ value: (some Encodable)?, at time: WeftTime = .now) -> DataNode? {
        push(value, at: time, waitingFor: .pending, then: logFailure("push"))
    }

    /// Adds a child with a JSON object graph without waiting, from synchronous code; a failure is logged.
    ///
    /// ```swift
    /// chat.push(.raw, ["text": "hi"])
    /// ```
    @available(*, noasync, message: "in async code use try await node.push(.raw, json), or pass a completion")
    @discardableResult
    public func push(_ raw: RawMarker, _ json: Any?, at time: WeftTime = .now) -> DataNode? {
        push(raw, json, at: time, waitingFor: .pending, then: logFailure("push"))
    }

    /// Increments the number at the node without waiting, from synchronous code; a failure is logged.
    ///
    /// ```swift
    /// likes.increment(by: 1)
    /// ```
    /// - Returns: the number just after the increment applied locally and the write's receipt, or nil when
    ///   it failed.
    @available(*, noasync, message: "in async code use try await node.increment(by: step), or pass a completion")
    @discardableResult
    public func increment(from start: Number = 0, by step: Number = 1, at time: WeftTime = .now)
        -> IncrementResult?
    {
        increment(from: start, by: step, at: time, waitingFor: .pending, then: logFailure("increment"))
    }

    /// A completion that logs a failure at `error` level: there is no caller to tell.
    private func logFailure<Output>(_ operation: String) -> @Sendable (Result<Output, WeftError>) -> Void {
        let path = path
        return { result in
            if case .failure(let error) = result { Self.logger.error("\(operation) at \(path) failed: \(error)") }
        }
    }

    // MARK: - Deprecated seed names

    /// The children's keys: the seed's deprecated name of ``childrenKeys()``.
    @available(*, deprecated, renamed: "childrenKeys()")
    public func keys() async throws -> [String] { try await childrenKeys() }

    /// The completion form of ``keys()``: the seed's deprecated name of ``childrenKeys(queue:then:)``.
    @available(*, deprecated, renamed: "childrenKeys(queue:then:)")
    public func keys(
        queue: DispatchQueue? = nil, then completion: @escaping @Sendable (Result<[String], WeftError>) -> Void
    ) {
        childrenKeys(queue: queue, then: completion)
    }
}
