import WeftCore

// The seed's `CombineWrapper` offers each call twice: a future, and an `async` form of the same name.
// Swift picks the async one in async code (`try await wrapper.set(v)`) and the future elsewhere. The
// operators `<-` and `+=` come in both forms too, as on `DataNode`.

extension DataNode.CombineWrapper {
    // MARK: Reads

    /// The node's value; see ``DataNode/value()``.
    ///
    /// ```swift
    /// let value = try await node.forCombine.value()
    /// ```
    public func value() async throws -> Value { try await dataNode.value() }

    /// The node's value decoded as `T`; see ``DataNode/decodedValue(as:)``.
    ///
    /// ```swift
    /// let user: User = try await alice.forCombine.decodedValue()
    /// ```
    nonisolated(nonsending) public func decodedValue<T: Decodable>(as type: T.Type = T.self) async throws -> T {
        try await dataNode.decodedValue(as: type)
    }

    /// The children's keys in key order; see ``DataNode/childrenKeys()``.
    ///
    /// ```swift
    /// let keys = try await users.forCombine.childrenKeys()
    /// ```
    public func childrenKeys() async throws -> [String] { try await dataNode.childrenKeys() }

    // MARK: Writes

    /// Sets an `Encodable` value; see ``DataNode/set(_:at:waitingFor:)``.
    ///
    /// ```swift
    /// try await alice.forCombine.set(User(name: "Alice", age: 31))
    /// ```
    @discardableResult
    nonisolated(nonsending) public func set(
        _ value: (some Encodable)?, at time: WeftTime = .now, waitingFor target: WriteStatus = .durable
    ) async throws -> WriteReceipt {
        try await dataNode.set(value, at: time, waitingFor: target)
    }

    /// Sets a JSON object graph; see ``DataNode/set(_:_:at:waitingFor:)``.
    ///
    /// ```swift
    /// try await alice.forCombine.set(.raw, ["name": "Alice"])
    /// ```
    @discardableResult
    nonisolated(nonsending) public func set(
        _ raw: RawMarker, _ json: Any?, at time: WeftTime = .now, waitingFor target: WriteStatus = .durable
    ) async throws -> WriteReceipt {
        try await dataNode.set(raw, json, at: time, waitingFor: target)
    }

    /// Deletes the node; see ``DataNode/clear(at:waitingFor:)``.
    ///
    /// ```swift
    /// try await drafts.forCombine.clear()
    /// ```
    @discardableResult
    public func clear(at time: WeftTime = .now, waitingFor target: WriteStatus = .durable) async throws
        -> WriteReceipt
    {
        try await dataNode.clear(at: time, waitingFor: target)
    }

    /// Merges an `Encodable` object; see ``DataNode/merge(with:at:waitingFor:)``.
    ///
    /// ```swift
    /// try await alice.forCombine.merge(with: ["age": 32])
    /// ```
    @discardableResult
    nonisolated(nonsending) public func merge(
        with value: some Encodable, at time: WeftTime = .now, waitingFor target: WriteStatus = .durable
    ) async throws -> WriteReceipt {
        try await dataNode.merge(with: value, at: time, waitingFor: target)
    }

    /// Merges a raw dictionary whose keys may be deeper paths; see ``DataNode/merge(_:with:at:waitingFor:)``.
    ///
    /// ```swift
    /// try await alice.forCombine.merge(.raw, with: ["address/city": "Lyon"])
    /// ```
    @discardableResult
    nonisolated(nonsending) public func merge(
        _ raw: RawMarker, with json: [String: Any], at time: WeftTime = .now,
        waitingFor target: WriteStatus = .durable
    ) async throws -> WriteReceipt {
        try await dataNode.merge(raw, with: json, at: time, waitingFor: target)
    }

    /// Adds a child under a new push id and returns it; see ``DataNode/push(_:at:waitingFor:)``.
    ///
    /// ```swift
    /// let message = try await chat.forCombine.push(Message(author: "alice", text: "hi"))
    /// ```
    @discardableResult
    nonisolated(nonsending) public func push(
        _ value: (some Encodable)?, at time: WeftTime = .now, waitingFor target: WriteStatus = .durable
    ) async throws -> DataNode {
        try await dataNode.push(value, at: time, waitingFor: target)
    }

    /// Adds a child with a JSON object graph and returns it; see ``DataNode/push(_:_:at:waitingFor:)``.
    ///
    /// ```swift
    /// let message = try await chat.forCombine.push(.raw, ["text": "hi"])
    /// ```
    @discardableResult
    nonisolated(nonsending) public func push(
        _ raw: RawMarker, _ json: Any?, at time: WeftTime = .now, waitingFor target: WriteStatus = .durable
    ) async throws -> DataNode {
        try await dataNode.push(raw, json, at: time, waitingFor: target)
    }

    /// Increments the number at the node; see ``DataNode/increment(from:by:at:waitingFor:)``.
    ///
    /// ```swift
    /// let likes = try await post.forCombine.increment(by: 1).value
    /// ```
    @discardableResult
    public func increment(
        from start: Number = 0, by step: Number = 1, at time: WeftTime = .now,
        waitingFor target: WriteStatus = .durable
    ) async throws -> IncrementResult {
        try await dataNode.increment(from: start, by: step, at: time, waitingFor: target)
    }

    /// Runs a transaction with the defaults of ``DataNode/runTransaction(at:waitingFor:_:)``.
    ///
    /// ```swift
    /// let result = try await seats.forCombine.runTransaction { .set(.int(($0.intValue ?? 1) - 1)) }
    /// ```
    @discardableResult
    nonisolated(nonsending) public func runTransaction(_ function: (Value) throws -> TransactionOperation)
        async throws -> TransactionResult
    {
        try await dataNode.runTransaction(function)
    }

    /// Copies the node's value to another node; see ``DataNode/copyValue(to:at:waitingFor:)-(DataNode,_,_)``.
    ///
    /// ```swift
    /// try await draft.forCombine.copyValue(to: published.forCombine)
    /// ```
    @discardableResult
    public func copyValue(
        to destination: DataNode.CombineWrapper, at time: WeftTime = .now, waitingFor target: WriteStatus = .durable
    ) async throws -> Value {
        try await dataNode.copyValue(to: destination.dataNode, at: time, waitingFor: target)
    }

    /// Copies the node's value to the node at an absolute path; see
    /// ``DataNode/copyValue(to:at:waitingFor:)-(String,_,_)``.
    ///
    /// ```swift
    /// try await draft.forCombine.copyValue(to: "/posts/42")
    /// ```
    @discardableResult
    public func copyValue(
        to destinationPath: String, at time: WeftTime = .now, waitingFor target: WriteStatus = .durable
    ) async throws -> Value {
        try await dataNode.copyValue(to: destinationPath, at: time, waitingFor: target)
    }

    // MARK: Operators

    /// Sets the value without waiting: `wrapper <- value`; see ``DataNode/<-(_:_:)-(DataNode,_)``.
    ///
    /// ```swift
    /// score.forCombine <- 42
    /// ```
    @available(*, noasync, message: "in async code (top-level code too) use try await node.set(value)")
    public static func <- (node: DataNode.CombineWrapper, value: (some Encodable)?) {
        node.dataNode.set(value, waitingFor: .pending) { result in
            if case .failure(let error) = result { DataNode.logger.error("\(node.path) <- value failed: \(error)") }
        }
    }

    /// Sets the value and waits until it is durable: `try await wrapper <- value`.
    ///
    /// ```swift
    /// try await score.forCombine <- 42
    /// ```
    nonisolated(nonsending) public static func <- (node: DataNode.CombineWrapper, value: (some Encodable)?)
        async throws
    {
        try await node.dataNode.set(value)
    }

    /// Adds a child under a new push id without waiting: `wrapper += value`.
    ///
    /// ```swift
    /// chat.forCombine += Message(author: "alice", text: "hi")
    /// ```
    @available(*, noasync, message: "in async code (top-level code too) use try await node.push(value)")
    public static func += (node: DataNode.CombineWrapper, value: (some Encodable)?) {
        node.dataNode.push(value, waitingFor: .pending) { result in
            if case .failure(let error) = result { DataNode.logger.error("\(node.path) += value failed: \(error)") }
        }
    }

    /// Adds a child under a new push id and waits until it is durable: `try await wrapper += value`.
    ///
    /// ```swift
    /// try await chat.forCombine += Message(author: "alice", text: "hi")
    /// ```
    nonisolated(nonsending) public static func += (node: DataNode.CombineWrapper, value: (some Encodable)?)
        async throws
    {
        try await node.dataNode.push(value)
    }

    /// The node's path.
    var path: String { dataNode.path }
}
