import Dispatch
import Foundation
import WeftCore

/// Writes to several nodes, built up over time, handed around, merged with other transactions, and then
/// committed as one op: all or nothing, under one stamp, seen all at once by every observer (the Realtime
/// ORM's `Transaction`).
///
/// Every write method has the shape of ``WriteBatch``'s (what to write first, the node last) and checks
/// its input at once, recording nothing when it throws. A transaction commits once: a write, a read, a
/// merge or a commit after that throws `WeftError` with code `transactionCommitted`. A transaction that
/// is never committed writes nothing.
///
/// ```swift
/// let transaction = replica.transaction()
/// try transaction.set(Order(total: 42), at: order)
/// try transaction.increment(by: 1, at: stats.child("orders"))
/// try transaction.merge(otherTransaction)
/// let receipt = try await transaction.commit()
/// ```
///
/// It is safe to use from several threads: its state is behind a lock.
public final class Transaction: @unchecked Sendable {
    // Sendable: every mutable field is guarded by `lock`.
    private let lock = NSLock()
    let access: ReplicaAccess
    /// The writes, the reads and the state the reads come from (taken at the first read).
    private var recorder: WriteRecorder
    private var isCommitted = false

    /// A transaction on `replica`'s data.
    ///
    /// ```swift
    /// let transaction = Transaction(replica: replica)
    /// ```
    /// - Parameter time: when the commit happens (and what push ids created in it sort by).
    public convenience init(replica: Replica, at time: WeftTime = .now) {
        self.init(access: replica.access, time: time)
    }

    init(access: ReplicaAccess, time: WeftTime) {
        self.access = access
        self.recorder = WriteRecorder(access: access, time: time)
    }

    /// True when nothing was written nor read yet: committing it writes nothing.
    public var isEmpty: Bool { lock.withLock { recorder.isEmpty } }

    /// The writes recorded so far, as core writes.
    var writes: [Write] { lock.withLock { recorder.writes } }

    /// The paths read so far.
    var reads: [Path] { lock.withLock { recorder.reads } }

    // MARK: - Writes

    /// Sets a node to an `Encodable` value (a `Value` too; nil deletes it); see
    /// ``DataNode/set(_:at:waitingFor:)``.
    ///
    /// ```swift
    /// try transaction.set(Order(total: 42), at: order)
    /// ```
    /// - Throws: `WeftError` as ``WriteBatch/set(_:at:)``, or `transactionCommitted`.
    public func set(_ value: (some Encodable)?, at node: DataNode) throws {
        try recording { try $0.set(value, at: node) }
    }

    /// Sets a node to a JSON object graph; see ``DataNode/set(_:_:at:waitingFor:)``.
    ///
    /// ```swift
    /// try transaction.set(.raw, ["total": 42], at: order)
    /// ```
    /// - Throws: `WeftError` as ``WriteBatch/set(_:_:at:)``, or `transactionCommitted`.
    public func set(_ raw: RawMarker, _ json: Any?, at node: DataNode) throws {
        try recording { try $0.set(raw, json, at: node) }
    }

    /// Deletes a node; see ``DataNode/clear(at:waitingFor:)``.
    ///
    /// ```swift
    /// try transaction.clear(at: cart)
    /// ```
    /// - Throws: `WeftError` with code `invalidPath` for a node of another replica, or `transactionCommitted`.
    public func clear(at node: DataNode) throws {
        try recording { try $0.clear(at: node) }
    }

    /// Merges the members of an `Encodable` object into a node; see ``DataNode/merge(with:at:waitingFor:)``.
    ///
    /// ```swift
    /// try transaction.merge(with: ["status": "paid"], at: order)
    /// ```
    /// - Throws: `WeftError` as ``WriteBatch/merge(with:at:)``, or `transactionCommitted`.
    public func merge(with value: some Encodable, at node: DataNode) throws {
        try recording { try $0.merge(with: value, at: node) }
    }

    /// Merges a raw dictionary (keys may be deeper paths) into a node; see
    /// ``DataNode/merge(_:with:at:waitingFor:)``.
    ///
    /// ```swift
    /// try transaction.merge(.raw, with: ["address/city": "Lyon"], at: alice)
    /// ```
    /// - Throws: `WeftError` as ``WriteBatch/merge(_:with:at:)``, or `transactionCommitted`.
    public func merge(_ raw: RawMarker, with json: [String: Any], at node: DataNode) throws {
        try recording { try $0.merge(raw, with: json, at: node) }
    }

    /// Increments the number at a node; see ``DataNode/increment(from:by:at:waitingFor:)``. If the node
    /// holds something other than a number when the transaction applies, nothing of it is written.
    ///
    /// ```swift
    /// try transaction.increment(by: -1, at: stock)
    /// ```
    /// - Throws: `WeftError` with code `invalidValue` for a non-finite operand, or `transactionCommitted`.
    public func increment(from start: Number = 0, by step: Number = 1, at node: DataNode) throws {
        try recording { try $0.increment(from: start, by: step, at: node) }
    }

    /// Adds a child under a new push id with an `Encodable` value; see ``DataNode/push(_:at:waitingFor:)``.
    ///
    /// ```swift
    /// let line = try transaction.push(Line(item: "book"), under: lines)
    /// ```
    /// - Returns: the new child (written when the transaction commits).
    /// - Throws: `WeftError` as ``WriteBatch/push(_:under:)``, or `transactionCommitted`.
    @discardableResult
    public func push(_ value: (some Encodable)?, under node: DataNode) throws -> DataNode {
        try recording { try $0.push(value, under: node) }
    }

    /// Adds a child under a new push id with a JSON object graph; see ``DataNode/push(_:_:at:waitingFor:)``.
    ///
    /// ```swift
    /// try transaction.push(.raw, ["item": "book"], under: lines)
    /// ```
    /// - Returns: the new child (written when the transaction commits).
    /// - Throws: `WeftError` as ``WriteBatch/push(_:_:under:)``, or `transactionCommitted`.
    @discardableResult
    public func push(_ raw: RawMarker, _ json: Any?, under node: DataNode) throws -> DataNode {
        try recording { try $0.push(raw, json, under: node) }
    }

    /// Records a write built by WeftCore code (paths and values), with the checks of the API's forms.
    ///
    /// - Throws: `WeftError` as the write's API form, or `transactionCommitted`.
    func record(_ write: Write) throws {
        try recording { try $0.record(write) }
    }

    /// Appends the writes and the reads of `other`, in their order, after this one's (the seed's
    /// `merge(_:)`). `other` is left as it was, and may be dropped.
    ///
    /// ```swift
    /// let transaction = replica.transaction()
    /// try post.delete(in: transaction)
    /// try transaction.merge(counterUpdates)
    /// ```
    /// - Throws: `WeftError` with code `invalidPath` when `other` belongs to another replica,
    ///   `valueTooLarge` when the union no longer fits one op, `transactionCommitted` when either was
    ///   committed, or `invalidValue` when both read, from two different states.
    public func merge(_ other: Transaction) throws {
        guard other !== self else {
            throw WeftError(.invalidValue, "a transaction cannot be merged into itself")
        }
        guard access.isSame(as: other.access) else {
            throw WeftError(.invalidPath, "the transaction merged belongs to another replica")
        }
        let theirs = try other.lock.withLock {
            try other.checkOpen()
            return other.recorder
        }
        try recording { try $0.append(contentsOf: theirs) }
    }

    // MARK: - Commit

    /// Commits every write recorded as one op, once, and waits for it to reach `target`.
    ///
    /// A transaction without reads is a plain batch (as ``Replica/performChanges(at:waitingFor:_:)``): it
    /// waits for `.durable` by default. One that read (``read(_:)``) commits only if nothing changed
    /// under what it read since its first read, here or on any other replica: by default it waits, as
    /// ``DataNode/runTransaction(at:waitingFor:timeout:_:)``, until it is `.stable` on a replica that
    /// syncs, so that a later rejection by a remote write is reported too.
    ///
    /// ```swift
    /// let receipt = try await transaction.commit()
    /// ```
    /// - Parameters:
    ///   - target: the status to wait for; nil for the defaults above.
    ///   - timeout: how long to wait for `target`; past it the receipt is returned as it is (`.pending`
    ///     or better), and still reports the final outcome.
    /// - Returns: the op's receipt, or nil when nothing was written.
    /// - Throws: `WeftError` with code `rejected` when the op was rejected (a part failed, or something
    ///   read changed: nothing was written), `transactionCommitted` on a second commit, `clockRefused`
    ///   or `shutDown`.
    @discardableResult
    nonisolated(nonsending) public func commit(
        waitingFor target: WriteStatus? = nil,
        timeout: Duration = .seconds(WeftLimits.transactionWaitSecondsDefault)
    ) async throws -> WriteReceipt? {
        let (receipt, target) = try submit(waitingFor: target, timeout: timeout)
        guard let receipt else { return nil }
        return try await Self.settle(receipt, waitingFor: target, timeout: timeout)
    }

    /// The completion form of ``commit(waitingFor:timeout:)``: the op is submitted before this returns.
    ///
    /// ```swift
    /// transaction.commit { result in print(result) }
    /// ```
    /// - Parameters:
    ///   - target: the status to wait for; nil for the defaults of ``commit(waitingFor:timeout:)``.
    ///   - timeout: how long to wait for `target`.
    ///   - queue: where `completion` runs; nil for the replica's `callbackQueue`.
    ///   - completion: called once with the receipt (nil when nothing was written) or a `WeftError`.
    public func commit(
        waitingFor target: WriteStatus? = nil,
        timeout: Duration = .seconds(WeftLimits.transactionWaitSecondsDefault), queue: DispatchQueue? = nil,
        completion: @escaping @Sendable (Result<WriteReceipt?, WeftError>) -> Void
    ) {
        let queue = queue ?? access.state.callbackQueue
        let receipt: WriteReceipt?
        let awaited: WriteStatus
        do {
            (receipt, awaited) = try submit(waitingFor: target, timeout: timeout)
        } catch {
            queue.async { completion(.failure(WeftError.from(error))) }
            return
        }
        guard let receipt else {
            queue.async { completion(.success(nil)) }
            return
        }
        Completion.run(queue: queue, completion: completion) {
            try await Self.settle(receipt, waitingFor: awaited, timeout: timeout) as WriteReceipt?
        }
    }

    /// Closes the transaction and submits its op; returns the receipt (nil when nothing was written)
    /// and the status to wait for.
    private func submit(waitingFor target: WriteStatus?, timeout: Duration) throws -> (WriteReceipt?, WriteStatus) {
        if let target { try target.checkIsTarget() }
        guard timeout >= .zero else { throw WeftError(.invalidValue, "a commit timeout is not negative") }
        let recorded = try lock.withLock {
            try checkOpen()
            isCommitted = true
            return recorder
        }
        let guarded = !recorded.reads.isEmpty
        let awaited = target ?? (guarded && access.backend.isReplicating ? .stable : .durable)
        return (try access.submitRecorded(recorded), awaited)
    }

    /// Waits for `target` at most `timeout`; throws `rejected` for a rejected op.
    private static func settle(_ receipt: WriteReceipt, waitingFor target: WriteStatus, timeout: Duration)
        async throws -> WriteReceipt
    {
        let status = try await receipt.wait(for: target, timeout: timeout)
        if case .rejected(let rejection) = status {
            throw WeftError(.rejected, rejection.description, path: rejection.path?.description)
        }
        return receipt
    }

    // MARK: - State

    /// Runs `body` on the open recorder, under the lock.
    func recording<T>(_ body: (inout WriteRecorder) throws -> T) throws -> T {
        try lock.withLock {
            try checkOpen()
            return try body(&recorder)
        }
    }

    /// Fails once the transaction was committed. Call under the lock.
    private func checkOpen() throws {
        guard !isCommitted else {
            throw WeftError(
                .transactionCommitted, "this transaction was committed already; start a new one with replica.transaction()")
        }
    }
}

extension Replica {
    /// A new, empty transaction on this replica's data; see ``Transaction``.
    ///
    /// ```swift
    /// let transaction = replica.transaction()
    /// try transaction.clear(at: cart)
    /// try await transaction.commit()
    /// ```
    /// - Parameter time: when the commit happens (and what push ids created in it sort by).
    public func transaction(at time: WeftTime = .now) -> Transaction {
        Transaction(access: access, time: time)
    }
}

extension ReplicaAccess {
    /// A new transaction on this replica.
    func transaction(at time: WeftTime = .now) -> Transaction { Transaction(access: self, time: time) }

    /// The current state and the version vector it reflects, for the reads of a transaction or a batch.
    /// The vector is read first: the state read after it holds at least what it covers, so an op the
    /// reads did not see is never recorded as seen (at worst one seen is not: a needless rejection).
    /// Calls waiting for a function are left out of it: they are known, but not in the state.
    func consistentState() -> (tree: Value, read: VersionVector) {
        let read = backend.appliedVersionVector(for: .root)
        return (backend.snapshot(), read)
    }

    /// Submits recorded writes as one op: a batch, or, when paths were read, a guarded batch that
    /// applies only if nothing changed under them since the reads' snapshot. Nil when nothing was
    /// written (reads alone write nothing, and check nothing).
    func submitRecorded(_ recorded: WriteRecorder) throws -> WriteReceipt? {
        try checkOpen()
        guard let first = recorded.writes.first else { return nil }
        let receipt: WriteReceipt
        if let snapshot = recorded.snapshot, !recorded.reads.isEmpty {
            let (path, kind) = try WeftError.mapping(path: first.path.description) {
                try OpKind.guarded(read: snapshot.read, reads: recorded.reads, writes: recorded.writes)
            }
            receipt = try submit(path: path, kind: kind, at: recorded.time)
        } else {
            let common = recorded.writes.dropFirst().reduce(first.path) { $0.commonAncestor(with: $1.path) }
            receipt = try submit(path: common, kind: .batch(recorded.writes), at: recorded.time)
        }
        state.noteBlindWrite(at: recorded.blindPaths)
        return receipt
    }
}
