import WeftCore

// The async forms of the writes: the primary API. Each write is applied to the replica's state at once
// (status `.pending`, observers see it), then the call waits until the write reaches `target` (by default
// `.durable`: in the local database file).

extension DataNode {
    /// Replaces the node's value (and all its children) with an `Encodable` value; nil deletes the node.
    ///
    /// The value is encoded with the replica's `jsonEncoder`. Arrays are stored as objects keyed `"0"`,
    /// `"1"`, …; null members and empty objects vanish.
    ///
    /// ```swift
    /// try await (replica.root / "users/alice")?.set(User(name: "Alice", age: 31))
    /// let receipt = try await score.set(42, waitingFor: .acknowledged)
    /// ```
    /// - Parameters:
    ///   - value: the new value, or nil to delete the node.
    ///   - time: when the write happens: now, or an explicit wall time (checked against the clock rules).
    ///   - target: the status to wait for: `.pending` returns at once, `.durable` (the default) once the
    ///     write is in the local database file, `.acknowledged` or `.stable` later.
    /// - Returns: the write's receipt, to follow its status further.
    /// - Throws: `WeftError` with code `encodingFailed`, `invalidValue` (a non-finite number, a string too
    ///   long), `invalidKey`, `invalidPath` (too deep), `valueTooLarge`, `clockRefused` or `shutDown`;
    ///   nothing is written then.
    @discardableResult
    nonisolated(nonsending) public func set(
        _ value: (some Encodable)?, at time: WeftTime = .now, waitingFor target: WriteStatus = .durable
    ) async throws -> WriteReceipt {
        try target.checkIsTarget()
        return try await finish(try submitSet(encoded(value), at: time), waitingFor: target)
    }

    /// Replaces the node's value with a JSON object graph: `[String: Any]`, `[Any]`, `String`, numbers,
    /// `Bool`, `NSNull` or nil.
    ///
    /// Prefer ``set(_:at:waitingFor:)`` with an `Encodable` value; this form takes what
    /// `JSONSerialization` produces.
    ///
    /// ```swift
    /// try await node.set(.raw, ["name": "Alice", "tags": ["a", "b"]])
    /// ```
    /// - Parameters:
    ///   - raw: `.raw`, to pick this overload.
    ///   - json: the new value; nil or `NSNull()` deletes the node.
    ///   - time: when the write happens.
    ///   - target: the status to wait for (default `.durable`).
    /// - Throws: `WeftError` with code `invalidJSON` (a type JSON cannot hold), `invalidValue`, `invalidKey`,
    ///   `invalidPath`, `valueTooLarge`, `clockRefused` or `shutDown`; nothing is written then.
    @discardableResult
    nonisolated(nonsending) public func set(
        _ raw: RawMarker, _ json: Any?, at time: WeftTime = .now, waitingFor target: WriteStatus = .durable
    ) async throws -> WriteReceipt {
        try target.checkIsTarget()
        return try await finish(try submitSet(rawValue(json), at: time), waitingFor: target)
    }

    /// Replaces the node's value with the value of JSON text.
    ///
    /// ```swift
    /// try await node.set(json: #"{"name":"Alice","age":31}"#)
    /// ```
    /// - Parameters:
    ///   - json: JSON text (any JSON value; `null` deletes the node).
    ///   - time: when the write happens.
    ///   - target: the status to wait for (default `.durable`).
    /// - Throws: `WeftError` with code `invalidJSON` (saying at which byte), `invalidValue`, `invalidKey`,
    ///   `invalidPath`, `valueTooLarge`, `clockRefused` or `shutDown`; nothing is written then.
    @discardableResult
    public func set(json: String, at time: WeftTime = .now, waitingFor target: WriteStatus = .durable)
        async throws -> WriteReceipt
    {
        try target.checkIsTarget()
        return try await finish(try submitSet(parsedValue(json), at: time), waitingFor: target)
    }

    /// Deletes the node and all its children: the same as setting null.
    ///
    /// ```swift
    /// try await (replica.root / "drafts")?.clear()
    /// ```
    /// - Parameters:
    ///   - time: when the write happens.
    ///   - target: the status to wait for (default `.durable`).
    /// - Throws: `WeftError` with code `clockRefused` or `shutDown`.
    @discardableResult
    public func clear(at time: WeftTime = .now, waitingFor target: WriteStatus = .durable) async throws
        -> WriteReceipt
    {
        try target.checkIsTarget()
        return try await finish(try submitSet(.null, at: time), waitingFor: target)
    }

    /// Sets the members of an `Encodable` value as children of the node, keeping the children it does not
    /// list, atomically.
    ///
    /// The value must encode to a JSON object (or array) with at least one member; each member replaces
    /// the child of that key (null deletes it).
    ///
    /// ```swift
    /// try await alice.merge(with: ["age": 32, "city": "Lyon"])   // "name" stays
    /// ```
    /// - Parameters:
    ///   - value: the members to set.
    ///   - time: when the write happens.
    ///   - target: the status to wait for (default `.durable`).
    /// - Throws: `WeftError` with code `invalidValue` when the value is not an object, and the errors of
    ///   ``set(_:at:waitingFor:)``; nothing is written then.
    @discardableResult
    nonisolated(nonsending) public func merge(
        with value: some Encodable, at time: WeftTime = .now, waitingFor target: WriteStatus = .durable
    ) async throws -> WriteReceipt {
        try target.checkIsTarget()
        let children = try mergeChildren(of: encoded(value))
        return try await finish(try submitMerge(children, at: time), waitingFor: target)
    }

    /// Sets the members of a raw JSON dictionary below the node, keeping what it does not list, atomically.
    ///
    /// Keys may be deeper relative paths: `"address/city"` sets that grandchild and keeps its siblings.
    /// Two listed paths may not overlap.
    ///
    /// ```swift
    /// try await alice.merge(.raw, with: ["age": 32, "address/city": "Lyon"])
    /// ```
    /// - Parameters:
    ///   - raw: `.raw`, to pick this overload.
    ///   - json: relative paths and their new values (nil or `NSNull()` deletes).
    ///   - time: when the write happens.
    ///   - target: the status to wait for (default `.durable`).
    /// - Throws: `WeftError` with code `invalidValue` (no member, or overlapping paths), `invalidKey`,
    ///   `invalidJSON`, `invalidPath`, `valueTooLarge`, `clockRefused` or `shutDown`; nothing is written then.
    @discardableResult
    nonisolated(nonsending) public func merge(
        _ raw: RawMarker, with json: [String: Any], at time: WeftTime = .now,
        waitingFor target: WriteStatus = .durable
    ) async throws -> WriteReceipt {
        try target.checkIsTarget()
        return try await finish(try submitMerge(rawMergeChildren(json), at: time), waitingFor: target)
    }

    /// Adds a child under a new push id with an `Encodable` value, and returns it.
    ///
    /// Push ids sort chronologically across replicas, so pushed children read in the order they were
    /// written. To follow the write's status past `target`, create the child with ``createChild()`` and
    /// ``set(_:at:waitingFor:)`` it instead: that returns the receipt.
    ///
    /// ```swift
    /// let message = try await chat.push(Message(author: "alice", text: "hi"))
    /// print(message.key!)   // "-NxY3k0a---8Hq2V0pZc"
    /// ```
    /// - Parameters:
    ///   - value: the child's value.
    ///   - time: when the write happens.
    ///   - target: the status to wait for (default `.durable`).
    /// - Returns: the new child.
    /// - Throws: the errors of ``set(_:at:waitingFor:)``; nothing is written then.
    @discardableResult
    nonisolated(nonsending) public func push(
        _ value: (some Encodable)?, at time: WeftTime = .now, waitingFor target: WriteStatus = .durable
    ) async throws -> DataNode {
        try target.checkIsTarget()
        return try await finish(try submitPush(encoded(value), at: time), waitingFor: target)
    }

    /// Adds a child under a new push id with a JSON object graph, and returns it.
    ///
    /// ```swift
    /// let message = try await chat.push(.raw, ["author": "alice", "text": "hi"])
    /// ```
    /// - Parameters:
    ///   - raw: `.raw`, to pick this overload.
    ///   - json: the child's value.
    ///   - time: when the write happens.
    ///   - target: the status to wait for (default `.durable`).
    /// - Throws: the errors of ``set(_:_:at:waitingFor:)``; nothing is written then.
    @discardableResult
    nonisolated(nonsending) public func push(
        _ raw: RawMarker, _ json: Any?, at time: WeftTime = .now, waitingFor target: WriteStatus = .durable
    ) async throws -> DataNode {
        try target.checkIsTarget()
        return try await finish(try submitPush(rawValue(json), at: time), waitingFor: target)
    }

    /// Adds `step` to the number at the node, counting an absent node as `start`; concurrent increments
    /// from every replica all count.
    ///
    /// Integers stay exact; an overflow, or a double operand, gives a double (as Firebase does). When the
    /// node holds something other than a number the increment has no effect and is reported rejected.
    ///
    /// ```swift
    /// let likes = try await post.relativeNode(for: "likes")!.increment().value       // +1 from 0
    /// let sold = try await item.increment(from: 100, by: -1)
    /// try await sold.receipt.wait(for: .stable)
    /// ```
    /// - Parameters:
    ///   - start: the value an absent node counts as (default 0).
    ///   - step: what to add; negative to decrement (default 1).
    ///   - time: when the write happens.
    ///   - target: the status to wait for (default `.durable`).
    /// - Returns: the node's number just after the increment applied locally (other writes, local or
    ///   merged, may change it afterwards: subscribe to follow it), with the write's receipt.
    /// - Throws: `WeftError` with code `rejected` when the node is not a number (or the sum would not be
    ///   finite), `invalidValue` for a non-finite operand, `clockRefused` or `shutDown`.
    @discardableResult
    public func increment(
        from start: Number = 0, by step: Number = 1, at time: WeftTime = .now,
        waitingFor target: WriteStatus = .durable
    ) async throws -> IncrementResult {
        try target.checkIsTarget()
        return try await finish(try submitIncrement(from: start, by: step, at: time), waitingFor: target)
    }

    /// Copies the node's value (as this replica sees it now) to another node, replacing its value.
    ///
    /// ```swift
    /// try await (replica.root / "drafts/42")?.copyValue(to: (replica.root / "posts/42")!)
    /// ```
    /// - Parameters:
    ///   - destination: the node to set, on the same replica.
    ///   - time: when the write happens.
    ///   - target: the status to wait for (default `.durable`).
    /// - Returns: the copied value.
    /// - Throws: `WeftError` with code `invalidPath` (another replica's node, or too deep at the
    ///   destination), `valueTooLarge`, `clockRefused` or `shutDown`.
    @discardableResult
    public func copyValue(
        to destination: DataNode, at time: WeftTime = .now, waitingFor target: WriteStatus = .durable
    ) async throws -> Value {
        try target.checkIsTarget()
        return try await finish(try submitCopy(to: destination, at: time), waitingFor: target)
    }

    /// Copies the node's value to the node at an absolute path of the same replica.
    ///
    /// ```swift
    /// try await draft.copyValue(to: "/posts/42")
    /// ```
    /// - Parameters:
    ///   - destinationPath: the destination's path, resolved from the root.
    ///   - time: when the write happens.
    ///   - target: the status to wait for (default `.durable`).
    /// - Returns: the copied value.
    /// - Throws: `WeftError` with code `invalidPath` when the path is ill-formed, and the errors of
    ///   ``copyValue(to:at:waitingFor:)-(DataNode,_,_)``.
    @discardableResult
    public func copyValue(
        to destinationPath: String, at time: WeftTime = .now, waitingFor target: WriteStatus = .durable
    ) async throws -> Value {
        try await copyValue(to: try destination(destinationPath), at: time, waitingFor: target)
    }

    // MARK: - Helpers

    /// Waits for a submitted write to reach `target`, then returns its output.
    func finish<Output>(_ submitted: Submitted<Output>, waitingFor target: WriteStatus) async throws -> Output {
        try await submitted.receipt.settle(waitingFor: target, path: path)
        return submitted.output
    }

    /// The node at an absolute path of this replica.
    func destination(_ absolutePath: String) throws -> DataNode {
        guard let node = access.node(for: absolutePath) else {
            throw WeftError(.invalidPath, "\"\(absolutePath.prefix(200))\" is not a valid path", path: absolutePath)
        }
        return node
    }
}
