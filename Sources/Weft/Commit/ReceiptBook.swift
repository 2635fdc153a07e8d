import Foundation
import WeftCore

/// The status of every write of this replica, as a function of its sequence: a few frontiers
/// (durable, acknowledged and stable through some sequence), the writes rejected at merge, and the
/// failure of the store, if any.
///
/// Nothing is kept per write: a write costs the book nothing until someone waits for it or observes
/// it. Group commit moves the durable frontier once per commit, sync moves the other two.
///
/// ```swift
/// let book = ReceiptBook()
/// let receipt = WriteReceipt(stamp: stamp, sequence: 42, book: book)
/// book.markDurable(through: 42)        // receipt.status == .durable
/// book.advance(through: 41, to: .acknowledged)
/// book.reject(sequence: 7, because: .staleRead(path))
/// ```
final class ReceiptBook: @unchecked Sendable {
    // Sendable: every mutable field is guarded by `lock`.
    private struct Waiter {
        let sequence: UInt64
        let target: WriteStatus
        /// Names a waiter with a deadline, so that ``expire(waiter:)`` finds it; nil without one.
        let id: UInt64?
        /// Resumed with nil when the deadline passed first.
        let continuation: CheckedContinuation<WriteStatus?, any Error>
    }

    private struct Observer {
        let sequence: UInt64
        var last: WriteStatus
        /// Where the app asked for its calls; nil for ``deliveries`` itself.
        let queue: DispatchQueue?
        let call: @Sendable (WriteStatus) -> Void
    }

    private let lock = NSLock()
    private var durableThrough: UInt64
    private var acknowledgedThrough: UInt64 = 0
    private var stableThrough: UInt64 = 0
    /// Writes rejected at merge, by sequence (rare: at most ``WeftLimits/receiptsTrackedMax`` kept).
    private var rejections: [UInt64: Rejection] = [:]
    /// The commit failure that stopped the store, and the first sequence it left behind.
    private var failure: (from: UInt64, error: WeftError)?
    /// Set when the replica shut down: no status changes after it.
    private var closedWith: WeftError?
    private var waiters: [Waiter] = []
    private var nextWaiterID: UInt64 = 0
    private var observers: [Observer] = []
    /// Where observers that name no queue are called. Every call, here or on a named queue, is queued
    /// under the book's lock, in the order of the changes, and never made on the thread that makes a
    /// change: that thread may hold the replica's lock (sync acknowledging, a late op revising an
    /// outcome), and an observer that reads or writes the replica would wait for it for ever.
    private let deliveries = DispatchQueue(label: "weft.receipt-observers")

    /// A book whose writes up to `durableThrough` are already in the store.
    init(durableThrough: UInt64 = 0) { self.durableThrough = durableThrough }

    // MARK: - Reading

    /// The status of the write `sequence` now.
    func status(of sequence: UInt64) -> WriteStatus { lock.withLock { computed(sequence) } }

    private func computed(_ sequence: UInt64) -> WriteStatus {
        if !rejections.isEmpty, let rejection = rejections[sequence] { return .rejected(rejection) }
        if sequence <= stableThrough { return .stable }
        if sequence <= acknowledgedThrough { return .acknowledged }
        if sequence <= durableThrough { return .durable }
        return .pending
    }

    /// The error that keeps the write `sequence` from ever changing status again, if one does: the
    /// commit failure that keeps it from being durable, or the shutdown that stopped every change.
    private func failure(of sequence: UInt64) -> WeftError? {
        if let failure, sequence >= failure.from, sequence > durableThrough { return failure.error }
        return closedWith
    }

    /// Waits until the write `sequence` reaches `target` (or a later status), or is rejected.
    func wait(sequence: UInt64, for target: WriteStatus) async throws -> WriteStatus {
        guard let status = try await wait(sequence: sequence, for: target, timeout: nil) else {
            preconditionFailure("a wait without a deadline ends with a status")
        }
        return status
    }

    /// Waits as ``wait(sequence:for:)``, at most `timeout` (none when nil).
    /// - Returns: the status reached, or nil when the timeout passed first.
    func wait(sequence: UInt64, for target: WriteStatus, timeout: Duration?) async throws -> WriteStatus? {
        try await withCheckedThrowingContinuation { continuation in
            let ready: Result<WriteStatus, WeftError>? = lock.withLock {
                let status = computed(sequence)
                if WriteReceipt.reached(status, target) { return .success(status) }
                if let error = failure(of: sequence) { return .failure(error) }
                var id: UInt64?
                if let timeout {
                    nextWaiterID += 1
                    id = nextWaiterID
                    let waiter = nextWaiterID
                    Task { [weak self] in
                        try? await Task.sleep(for: timeout)
                        self?.expire(waiter: waiter)
                    }
                }
                waiters.append(Waiter(sequence: sequence, target: target, id: id, continuation: continuation))
                return nil
            }
            switch ready {
            case .success(let status): continuation.resume(returning: status)
            case .failure(let error): continuation.resume(throwing: error)
            case nil: break
            }
        }
    }

    /// The deadline of waiter `id` passed: it ends with nil, if it still waits.
    private func expire(waiter id: UInt64) {
        let expired = lock.withLock { () -> CheckedContinuation<WriteStatus?, any Error>? in
            guard let index = waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return waiters.remove(at: index).continuation
        }
        expired?.resume(returning: nil)
    }

    /// Calls `observer` with every later status change of the write `sequence`, until it is stable or
    /// can no longer change: on `queue`, or on the book's own serial queue when nil.
    func observe(
        sequence: UInt64, on queue: DispatchQueue? = nil, _ observer: @escaping @Sendable (WriteStatus) -> Void
    ) {
        lock.withLock {
            observers.append(Observer(sequence: sequence, last: computed(sequence), queue: queue, call: observer))
        }
    }

    /// Number of waiters and observers held (for tests).
    var heldCount: Int { lock.withLock { waiters.count + observers.count } }

    // MARK: - Changes

    /// Every write up to `sequence` is in the store.
    func markDurable(through sequence: UInt64) {
        change { if sequence > durableThrough { durableThrough = sequence } }
    }

    /// Every write up to `sequence` is acknowledged or stable.
    func advance(through sequence: UInt64, to status: WriteStatus) {
        change {
            switch status {
            case .acknowledged:
                acknowledgedThrough = max(acknowledgedThrough, sequence)
            case .stable:
                stableThrough = max(stableThrough, sequence)
                acknowledgedThrough = max(acknowledgedThrough, sequence)
            default:
                preconditionFailure("only acknowledgement and stability come in bulk, not \(status)")
            }
        }
    }

    /// The write `sequence` is rejected at merge (when it was made, or because a late op revised it).
    func reject(sequence: UInt64, because rejection: Rejection) {
        change {
            rejections[sequence] = rejection
            if rejections.count > WeftLimits.receiptsTrackedMax, let oldest = rejections.keys.min() {
                rejections.removeValue(forKey: oldest)
            }
        }
    }

    /// A late op revised the write `sequence` from rejected back to applied.
    func revive(sequence: UInt64) {
        change { rejections.removeValue(forKey: sequence) }
    }

    /// A commit failed: the writes from `sequence` on will never be durable.
    func fail(from sequence: UInt64, _ error: WeftError) {
        change { if failure == nil { failure = (sequence, error) } }
    }

    /// The replica shut down: statuses are final. Waiters for a status not reached get `error`, and
    /// observers are dropped (a write waiting for an acknowledgement would otherwise wait for ever).
    func close(_ error: WeftError) {
        change { if closedWith == nil { closedWith = error } }
    }

    /// Runs `body` under the lock, then resumes the waiters and hands the observers it concerns their
    /// calls (queued under the lock, so that each observer sees the changes in the order they were made).
    private func change(_ body: () -> Void) {
        var resumed: [(CheckedContinuation<WriteStatus?, any Error>, Result<WriteStatus, WeftError>)] = []
        lock.withLock {
            var calls: [(Observer, WriteStatus)] = []
            body()
            guard !waiters.isEmpty || !observers.isEmpty else { return }
            waiters.removeAll { waiter in
                let status = computed(waiter.sequence)
                if WriteReceipt.reached(status, waiter.target) {
                    resumed.append((waiter.continuation, .success(status)))
                    return true
                }
                if let error = failure(of: waiter.sequence) {
                    resumed.append((waiter.continuation, .failure(error)))
                    return true
                }
                return false
            }
            for index in observers.indices.reversed() {
                let sequence = observers[index].sequence
                let status = computed(sequence)
                if status != observers[index].last {
                    observers[index].last = status
                    calls.append((observers[index], status))
                }
                if status == .stable || failure(of: sequence) != nil { observers.remove(at: index) }
            }
            for (observer, status) in calls.reversed() {
                let call = observer.call
                (observer.queue ?? deliveries).async { call(status) }
            }
        }
        for (continuation, result) in resumed {
            continuation.resume(with: result.map { Optional($0) }.mapError { $0 as any Error })
        }
    }
}
