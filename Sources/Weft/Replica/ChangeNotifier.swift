import Foundation

/// Delivers change batches to a replica's change listeners on one serial queue, in the order the
/// changes happened.
///
/// Posting never blocks the writer: batches wait in a buffer drained by the queue. The buffer holds at
/// most ``WeftLimits/changeBatchesQueuedMax`` batches; beyond it a new batch is folded into the last
/// one waiting, so a slow listener sees fewer, larger batches rather than an unbounded backlog.
///
/// ```swift
/// let token = notifier.add { batch in print(batch.changes.count) }
/// notifier.post(batch)      // under the replica's lock, so the order of posts is the order of changes
/// ```
final class ChangeNotifier: @unchecked Sendable {
    // Sendable: every mutable field is guarded by `lock`.
    private let lock = NSLock()
    private let queue = DispatchQueue(label: "weft.replica.changes")
    private var listeners: [UInt64: @Sendable (ChangeBatch) -> Void] = [:]
    private var nextListener: UInt64 = 0
    private var buffered: [ChangeBatch] = []
    private var isDraining = false

    /// Listeners registered and not cancelled.
    var listenerCount: Int { lock.withLock { listeners.count } }

    /// Registers a listener until the token is cancelled.
    func add(_ listener: @escaping @Sendable (ChangeBatch) -> Void) -> ChangeListenerToken {
        let id: UInt64 = lock.withLock {
            nextListener += 1
            listeners[nextListener] = listener
            return nextListener
        }
        return ChangeListenerToken { [weak self] in
            guard let self else { return }
            _ = self.lock.withLock { self.listeners.removeValue(forKey: id) }
        }
    }

    /// Queues a batch for every listener registered now (nothing when there is none).
    func post(_ batch: ChangeBatch) {
        let schedule: Bool = lock.withLock {
            guard !listeners.isEmpty else { return false }
            if buffered.count >= WeftLimits.changeBatchesQueuedMax, let last = buffered.indices.last {
                buffered[last].changes += batch.changes
                buffered[last].outcomes.merge(batch.outcomes) { $1 }
                buffered[last].isLocalPending = buffered[last].isLocalPending && batch.isLocalPending
            } else {
                buffered.append(batch)
            }
            guard !isDraining else { return false }
            isDraining = true
            return true
        }
        if schedule { queue.async { self.drain() } }
    }

    private func drain() {
        while true {
            let (batches, targets): ([ChangeBatch], [@Sendable (ChangeBatch) -> Void]) = lock.withLock {
                defer { buffered = [] }
                if buffered.isEmpty { isDraining = false }
                return (buffered, listeners.sorted { $0.key < $1.key }.map(\.value))
            }
            guard !batches.isEmpty else { return }
            for batch in batches {
                for listener in targets { listener(batch) }
            }
        }
    }

    /// Returns once every batch posted before the call has been delivered.
    func waitUntilDelivered() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { continuation.resume() }
        }
    }
}
