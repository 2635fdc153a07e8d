import WeftCore

/// The writes of one `performChanges` call, collected and then applied as one op: all or nothing, and
/// seen all at once by every observer (Dflat's `TransactionContext`).
///
/// Every method has one shape: what to write first, with the labels of the `DataNode` method of the same
/// name, then the node last, labelled `at:` (`under:` for `push`, whose node is the parent). There is no
/// time argument: every write of a batch shares the batch's stamp (`performChanges(at:)`).
///
/// Each method checks its input at once and throws without recording anything when it is invalid; the
/// batch itself is submitted only when the closure returns.
///
/// ```swift
/// try await replica.performChanges { batch in
///     try batch.set(Order(total: 42), at: order)
///     try batch.increment(by: 1, at: stats.child("orders"))
///     try batch.clear(at: cart)
/// }
/// ```
public final class WriteBatch {
    var recorder: WriteRecorder
    private(set) var isAborted = false

    init(access: ReplicaAccess, time: WeftTime) {
        recorder = WriteRecorder(access: access, time: time)
    }

    var access: ReplicaAccess { recorder.access }
    var time: WeftTime { recorder.time }
    var writes: [Write] { recorder.writes }
    var blindPaths: [Path] { recorder.blindPaths }

    /// Sets a node to an `Encodable` value (nil deletes it); see ``DataNode/set(_:at:waitingFor:)``.
    ///
    /// ```swift
    /// try batch.set(Order(total: 42), at: order)
    /// ```
    /// - Throws: `WeftError` as ``DataNode/set(_:at:waitingFor:)``, or `invalidPath` for a node of another
    ///   replica, or `valueTooLarge` when the batch grows beyond one op.
    public func set(_ value: (some Encodable)?, at node: DataNode) throws { try recorder.set(value, at: node) }

    /// Sets a node to a JSON object graph; see ``DataNode/set(_:_:at:waitingFor:)``.
    ///
    /// ```swift
    /// try batch.set(.raw, ["total": 42], at: order)
    /// ```
    /// - Throws: `WeftError` as ``DataNode/set(_:_:at:waitingFor:)``.
    public func set(_ raw: RawMarker, _ json: Any?, at node: DataNode) throws { try recorder.set(raw, json, at: node) }

    /// Deletes a node; see ``DataNode/clear(at:waitingFor:)``.
    ///
    /// ```swift
    /// try batch.clear(at: cart)
    /// ```
    /// - Throws: `WeftError` with code `invalidPath` for a node of another replica.
    public func clear(at node: DataNode) throws { try recorder.clear(at: node) }

    /// Merges the members of an `Encodable` object into a node; see ``DataNode/merge(with:at:waitingFor:)``.
    ///
    /// ```swift
    /// try batch.merge(with: ["status": "paid"], at: order)
    /// ```
    /// - Throws: `WeftError` as ``DataNode/merge(with:at:waitingFor:)``.
    public func merge(with value: some Encodable, at node: DataNode) throws { try recorder.merge(with: value, at: node) }

    /// Merges a raw dictionary (keys may be deeper paths) into a node; see
    /// ``DataNode/merge(_:with:at:waitingFor:)``.
    ///
    /// ```swift
    /// try batch.merge(.raw, with: ["address/city": "Lyon"], at: alice)
    /// ```
    /// - Throws: `WeftError` as ``DataNode/merge(_:with:at:waitingFor:)``.
    public func merge(_ raw: RawMarker, with json: [String: Any], at node: DataNode) throws {
        try recorder.merge(raw, with: json, at: node)
    }

    /// Increments the number at a node; see ``DataNode/increment(from:by:at:waitingFor:)``. If the node
    /// holds something other than a number when the batch applies, the whole batch is rejected.
    ///
    /// ```swift
    /// try batch.increment(by: -1, at: stock)
    /// ```
    /// - Throws: `WeftError` with code `invalidValue` for a non-finite operand.
    public func increment(from start: Number = 0, by step: Number = 1, at node: DataNode) throws {
        try recorder.increment(from: start, by: step, at: node)
    }

    /// Adds a child under a new push id with an `Encodable` value; see ``DataNode/push(_:at:waitingFor:)``.
    ///
    /// ```swift
    /// let line = try batch.push(Line(item: "book"), under: order.child("lines"))
    /// ```
    /// - Returns: the new child (written when the batch applies).
    /// - Throws: `WeftError` as ``DataNode/push(_:at:waitingFor:)``.
    @discardableResult
    public func push(_ value: (some Encodable)?, under node: DataNode) throws -> DataNode {
        try recorder.push(value, under: node)
    }

    /// Adds a child under a new push id with a JSON object graph; see ``DataNode/push(_:_:at:waitingFor:)``.
    ///
    /// ```swift
    /// try batch.push(.raw, ["item": "book"], under: lines)
    /// ```
    /// - Returns: the new child (written when the batch applies).
    /// - Throws: `WeftError` as ``DataNode/push(_:_:at:waitingFor:)``.
    @discardableResult
    public func push(_ raw: RawMarker, _ json: Any?, under node: DataNode) throws -> DataNode {
        try recorder.push(raw, json, under: node)
    }

    /// Discards every write of the batch: nothing is applied, and `performChanges` throws
    /// `transactionAborted`.
    ///
    /// ```swift
    /// guard stockLeft > 0 else { return batch.abort() }
    /// ```
    public func abort() { isAborted = true }
}
