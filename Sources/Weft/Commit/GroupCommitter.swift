import Foundation
import WeftCore
import WeftStore

/// The background writer of a replica: it takes every entry waiting, writes them as few
/// ``StoreBatch``es as the size bound allows (one SQLite transaction each), then moves the durable
/// frontier of the replica's receipts. It is the store's only committer.
///
/// Memory is bounded: ``reserve(ops:)`` holds writers back while ``Settings/pendingOpsMax`` ops wait.
/// A failed commit (a full disk) fails the receipts of its entries and of every later one, and the
/// committer refuses to write again: the store keeps what it had, and the replica must be reopened.
///
/// ```swift
/// let committer = GroupCommitter(store: store, settings: settings, receipts: book, origin: id)
/// committer.start()
/// committer.enqueue(entry)
/// try await committer.flush()
/// await committer.stop()
/// ```
final class GroupCommitter: @unchecked Sendable {
    // Sendable: every mutable field is guarded by `condition`.

    /// Bounds of the pipeline.
    struct Settings: Sendable {
        var delayMilliseconds: Int
        var opsMax: Int
        var pendingOpsMax: Int
    }

    let store: any Store
    let settings: Settings
    /// The statuses of the local writes, whose durable frontier each commit moves.
    let receipts: ReceiptBook
    /// This replica: the origin of the writes `receipts` tracks.
    let origin: ReplicaID
    private let condition = NSCondition()
    private var pending: PendingCommits
    /// Ops queued or being committed.
    private var queuedOps = 0
    /// Room taken by writers between ``reserve(ops:)`` and ``release(ops:)``, not queued yet.
    private var reservedOps = 0
    /// Entries ever enqueued, and entries ever done with (committed or failed).
    private var enqueuedCount: UInt64 = 0
    private var doneCount: UInt64 = 0
    private var isCommitting = false
    /// An entry queued since the last commit began must not wait for more to join it (ops merged from a
    /// peer): the next commit starts as soon as the committer is free.
    private var isUrgent = false
    private var failure: WeftError?
    private var maintenanceFailure: WeftError?
    private var isStopping = false
    private var isStopped = false
    private var runner: pthread_t?
    /// Flushes waiting; while any waits, the committer does not wait for more writes.
    private var flushWaiters: [(target: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
    private var stopWaiters: [CheckedContinuation<Void, Never>] = []
    private var ledger: DurableLedger
    private var counters = CommitStatistics()
    /// Called after each commit that moved the durable frontier (see ``addDurableListener(_:)``).
    private var durableListeners: [UInt64: @Sendable () -> Void] = [:]
    private var nextDurableListener: UInt64 = 0

    init(store: any Store, settings: Settings, receipts: ReceiptBook, origin: ReplicaID) {
        precondition(settings.opsMax >= 1 && settings.opsMax <= settings.pendingOpsMax, "commit bounds are ordered")
        precondition(settings.delayMilliseconds >= 0, "a delay is not negative")
        self.store = store
        self.settings = settings
        self.receipts = receipts
        self.origin = origin
        self.ledger = DurableLedger()
        self.pending = PendingCommits(opsMax: settings.opsMax)
    }

    /// Starts the committer's thread.
    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "weft.group-commit"
        thread.start()
    }

    // MARK: - State

    /// The error that stopped the committer, if a commit failed.
    var failed: WeftError? { locked { failure } }

    /// What the committer has done so far.
    var statistics: CommitStatistics { locked { counters } }

    /// For each origin, the highest sequence committed with no gap below it.
    var durableVector: VersionVector { locked { ledger.vector } }

    /// Registers `listener`, called on the committer's thread after each commit that moved the durable
    /// frontier (any origin's), until the token is cancelled: the one signal that ops became durable,
    /// which sync sessions follow to send what is new and to ack at once. It must return quickly (the
    /// next commit waits for it) and must not wait for the committer.
    func addDurableListener(_ listener: @escaping @Sendable () -> Void) -> ChangeListenerToken {
        let id = locked {
            nextDurableListener += 1
            durableListeners[nextDurableListener] = listener
            return nextDurableListener
        }
        return ChangeListenerToken { [weak self] in
            guard let self else { return }
            _ = self.locked { self.durableListeners.removeValue(forKey: id) }
        }
    }

    /// Resets the durable vector to what a load found in the store.
    func setDurable(_ vector: VersionVector) {
        locked { ledger = DurableLedger(vector: vector) }
        receipts.markDurable(through: vector[origin])
    }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        condition.lock()
        defer { condition.unlock() }
        return try body()
    }

    private var isRunnerThread: Bool { runner.map { pthread_equal($0, pthread_self()) != 0 } ?? false }

    // MARK: - Writers

    /// Waits until `ops` more fit under the pipeline's maximum of pending ops (backpressure), or nothing
    /// is queued or reserved (for a chunk larger than the maximum), then holds room for them until
    /// ``release(ops:)``, called once they are queued or failed. Checking without holding the room let
    /// every writer parked on the way (waiting for the load, for the replica's lock) past the maximum
    /// at once. Does not wait on the committer's own thread, which would wait for itself.
    func reserve(ops: Int) {
        condition.lock()
        defer { condition.unlock() }
        if !isRunnerThread {
            while queuedOps + reservedOps > 0, queuedOps + reservedOps + ops > settings.pendingOpsMax,
                failure == nil, !isStopping
            {
                condition.wait()
            }
        }
        reservedOps += ops
    }

    /// Gives back the room ``reserve(ops:)`` held (the ops are queued now, and counted as such, or failed).
    func release(ops: Int) {
        condition.lock()
        reservedOps -= ops
        precondition(reservedOps >= 0, "released more room than was reserved")
        condition.broadcast()
        condition.unlock()
    }

    /// Queues an entry for the next group commit. Entries are committed in the order they are queued.
    func enqueue(_ entry: CommitEntry) {
        enqueue { $0.append(entry) }
    }

    /// Queues the entry that `append` adds to the pending rows (it ends with
    /// ``PendingCommits/closeEntry(clockTime:)``): the road of a write, which allocates no arrays.
    ///
    /// `urgent` entries (ops merged from a peer) skip the delay that gathers more writes: a sync read is a
    /// batch already, and every millisecond it waits delays the acks that make writes stable.
    func enqueue(urgent: Bool = false, _ append: (inout PendingCommits) -> Void) {
        condition.lock()
        if failure != nil {
            // The receipt book already fails every write not yet durable.
            condition.unlock()
            return
        }
        precondition(!isStopped, "no entry after the committer stopped")
        let (ops, entries) = (pending.opCount, pending.entryCount)
        append(&pending)
        precondition(pending.entryCount == entries + 1, "one entry at a time")
        queuedOps += pending.opCount - ops
        enqueuedCount += 1
        if urgent { isUrgent = true }
        condition.signal()
        condition.unlock()
    }

    /// Waits until every entry queued before the call is committed.
    /// - Throws: the `WeftError` of a failed commit.
    func flush() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            condition.lock()
            let target = enqueuedCount
            guard doneCount < target, !isStopped else {
                let failure = self.failure
                condition.unlock()
                if let failure { continuation.resume(throwing: failure) } else { continuation.resume() }
                return
            }
            flushWaiters.append((target, continuation))
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Blocks until nothing is queued or being committed. Callers hold the replica's lock, so that no
    /// entry can be queued before they queue theirs.
    func waitUntilIdle() throws {
        condition.lock()
        defer { condition.unlock() }
        precondition(!isRunnerThread, "the committer cannot wait for itself")
        while (!pending.isEmpty || isCommitting) && !isStopped { condition.wait() }
        if let failure { throw failure }
    }

    /// The error of the last vacuum or checkpoint, cleared by the call.
    func takeMaintenanceFailure() -> WeftError? {
        locked {
            defer { maintenanceFailure = nil }
            return maintenanceFailure
        }
    }

    /// Commits what is queued, stops the thread and closes the store.
    func stop() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            condition.lock()
            isStopping = true
            if isStopped {
                condition.unlock()
                continuation.resume()
                return
            }
            stopWaiters.append(continuation)
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Asks the thread to commit what is queued, close the store and end, without waiting.
    func stopDetached() {
        locked {
            isStopping = true
            condition.broadcast()
        }
    }

    // MARK: - The committer's thread

    private func run() {
        locked { runner = pthread_self() }
        while let work = nextWork() { process(work) }
        do {
            try store.close()
        } catch {
            locked { maintenanceFailure = WeftError.wrapping(error) }
        }
        let (flushes, stops) = locked {
            isStopped = true
            condition.broadcast()
            defer {
                flushWaiters = []
                stopWaiters = []
            }
            return (flushWaiters.map(\.continuation), stopWaiters)
        }
        let failure = failed
        for flush in flushes {
            if let failure { flush.resume(throwing: failure) } else { flush.resume() }
        }
        for stop in stops { stop.resume() }
    }

    /// Waits for entries, then for more up to the delay, and takes them all; nil once stopping with
    /// nothing left.
    private func nextWork() -> PendingCommits? {
        condition.lock()
        defer { condition.unlock() }
        while pending.isEmpty, !isStopping { condition.wait() }
        guard !pending.isEmpty else { return nil }
        if settings.delayMilliseconds > 0 {
            let deadline = Date(timeIntervalSinceNow: Double(settings.delayMilliseconds) / 1000)
            while pending.opCount < settings.opsMax, flushWaiters.isEmpty, !isUrgent, !isStopping, failure == nil,
                condition.wait(until: deadline)
            {}
        }
        isUrgent = false
        let work = pending
        pending = PendingCommits(opsMax: settings.opsMax)
        isCommitting = true
        return work
    }

    /// Commits `work` in batches: at most `opsMax` ops each, and isolated entries alone.
    private func process(_ work: PendingCommits) {
        for batch in work.batches() { commit(batch) }
        locked {
            isCommitting = false
            condition.broadcast()
        }
    }

    /// Commits one batch, then records the outcome and moves (or fails) the durable frontier of receipts.
    private func commit(_ batch: PendingCommits.Batch) {
        let ops = batch.storeBatch.ops.count
        var failedWith = failed
        var wrote = false
        if failedWith == nil {
            do {
                if !batch.storeBatch.isEmpty {
                    try store.commit(batch.storeBatch)
                    wrote = true
                }
            } catch {
                failedWith = WeftError.wrapping(error)
            }
            if failedWith == nil, let maintenance = batch.maintenance { maintain(maintenance) }
        }
        let error = failedWith
        typealias Outcome = (
            ready: [CheckedContinuation<Void, any Error>], durable: UInt64, listeners: [@Sendable () -> Void]
        )
        let (ready, durable, listeners): Outcome = locked {
            let before = ledger.vector
            queuedOps -= ops
            doneCount += UInt64(batch.entries)
            if let error {
                if self.failure == nil { self.failure = error }
            } else {
                if wrote { counters.record(ops: ops) }
                let records = batch.storeBatch.ops
                for index in records.indices {
                    ledger.add(origin: records[index].op.origin, sequence: records[index].op.sequence)
                }
                if let vector = batch.durableVector { ledger.raise(to: vector) }
            }
            condition.broadcast()
            var ready: [CheckedContinuation<Void, any Error>] = []
            flushWaiters.removeAll { waiter in
                guard waiter.target <= doneCount || self.failure != nil else { return false }
                ready.append(waiter.continuation)
                return true
            }
            let moved = ledger.vector != before
            return (ready, ledger.vector[origin], moved ? Array(durableListeners.values) : [])
        }
        if let error {
            receipts.fail(from: durable + 1, error)
        } else {
            receipts.markDurable(through: durable)
        }
        for listener in listeners { listener() }
        let failure = failed
        for continuation in ready {
            if let failure { continuation.resume(throwing: failure) } else { continuation.resume() }
        }
    }

    /// Runs a vacuum or checkpoint after a commit. Its failure does not stop the committer: the batch
    /// before it is committed; the caller of the compaction learns of it.
    private func maintain(_ maintenance: CommitEntry.Maintenance) {
        do {
            switch maintenance {
            case .vacuum: try store.vacuum()
            case .checkpoint: try store.checkpoint()
            }
        } catch {
            locked { maintenanceFailure = WeftError.wrapping(error) }
        }
    }
}

/// What a replica's group commit has done: how many transactions, and how many ops they held.
///
/// ```swift
/// let stats = replica.statistics
/// print(Double(stats.opsCommitted) / Double(stats.commits), "ops per commit")
/// ```
public struct CommitStatistics: Sendable, Hashable {
    /// Group commits that wrote something (one transaction each).
    public internal(set) var commits = 0
    /// Ops written by them.
    public internal(set) var opsCommitted = 0
    /// The most ops one commit held.
    public internal(set) var opsPerCommitMax = 0

    mutating func record(ops: Int) {
        commits += 1
        opsCommitted += ops
        opsPerCommitMax = max(opsPerCommitMax, ops)
    }
}
