import Foundation
import WeftCore

/// Follows the value of one node through the replica's change batches: the base of subscriptions and
/// key-path observations.
///
/// Each batch lists changed nodes with their old and new values. The watcher applies those that touch
/// its node (an ancestor-or-self replaces the value, a descendant patches it) after checking that each old
/// value matches what it holds. A mismatch means the watcher is out of step (its first read already held
/// the batch); it then reads the node again, which can only move it forward. Memory stays one value.
final class NodeWatcher: @unchecked Sendable {
    // Sendable: mutable fields are guarded by `lock`; `onChange` runs on the replica's notification queue,
    // one batch at a time.

    /// How a batch touched the watched node.
    enum Effect: Equatable {
        /// Only below these children.
        case children(Set<Key>)
        /// The node as a whole (a write at it or above it, or a fresh read).
        case whole
    }

    /// Called for each batch that touched the node: old value, new value, effect, source.
    typealias OnChange = @Sendable (Value, Value, Effect, DataEvent.Source) -> Void

    let node: DataNode
    private let lock = NSLock()
    /// Held while a batch is applied and reported, so reports never overlap or reorder (recursive: a
    /// backend that notified synchronously from inside a report must not deadlock).
    private let processing = NSRecursiveLock()
    private var value = Value.null
    private var started = false
    private var stopped = false
    private var early: [ChangeBatch] = []
    private var earlyOverflowed = false
    private var token: ChangeListenerToken?
    private let onChange: OnChange

    init(node: DataNode, onChange: @escaping OnChange) {
        self.node = node
        self.onChange = onChange
    }

    /// Starts following the node: hands its current value to `onBaseline` before any change is reported.
    ///
    /// The listener is added before the first read, so no batch falls between them; batches that arrive
    /// before the read is recorded are queued and applied after it, in order.
    func start(onBaseline: (Value) -> Void) {
        let token = node.access.backend.addChangeListener { [weak self] batch in self?.receive(batch) }
        let baseline = node.access.backend.value(at: node.location)
        processing.lock()
        defer { processing.unlock() }
        let (queued, overflowed) = lock.withLock {
            self.token = token
            value = baseline
            started = true
            defer {
                early = []
                earlyOverflowed = false
            }
            return (early, earlyOverflowed)
        }
        onBaseline(baseline)
        if overflowed {
            resynchronize(from: baseline, source: .merged)
        } else {
            for batch in queued { process(batch) }
        }
    }

    /// Stops following the node. On the delivery queue no `onChange` runs after it; from another thread
    /// one running, or starting as it is called, may finish (see ``ObservationToken/invalidate()``).
    func stop() {
        let token = lock.withLock {
            stopped = true
            early = []
            defer { self.token = nil }
            return self.token
        }
        token?.cancel()
    }

    private func receive(_ batch: ChangeBatch) {
        processing.lock()
        defer { processing.unlock() }
        let queued = lock.withLock {
            guard !started, !stopped else { return false }
            if early.count < WeftLimits.subscriberEventsBufferedMax {
                early.append(batch)
            } else {
                earlyOverflowed = true
            }
            return true
        }
        if !queued { process(batch) }
    }

    /// Applies one batch and reports it. Called with `processing` held.
    private func process(_ batch: ChangeBatch) {
        let source: DataEvent.Source = batch.isLocalPending ? .localPending : .merged
        let step: (old: Value, new: Value, effect: Effect?)? = lock.withLock {
            guard !stopped else { return nil }
            let old = value
            let effect = Self.apply(batch.changes, at: node.location, to: &value)
            return (old, value, effect)
        }
        guard let step else { return }
        guard let effect = step.effect else {
            resynchronize(from: step.old, source: source)
            return
        }
        if effect != .children([]) { onChange(step.old, step.new, effect, source) }
    }

    /// Out of step: reads the node again (outside `lock`: the read takes the replica's lock) and reports
    /// the difference as a whole change.
    private func resynchronize(from old: Value, source: DataEvent.Source) {
        let fresh = node.access.backend.value(at: node.location)
        let proceed = lock.withLock {
            guard !stopped else { return false }
            value = fresh
            return true
        }
        if proceed, fresh != old { onChange(old, fresh, .whole, source) }
    }

    /// Applies the changes that touch `path` to `value`; nil when an old value does not match.
    static func apply(_ changes: [Change], at path: Path, to value: inout Value) -> Effect? {
        var touched: Set<Key> = []
        var whole = false
        for change in changes {
            if change.path.isAncestorOrSelf(of: path) {
                let below = path.keys[change.path.depth...]
                guard change.old.value(at: below) == value else { return nil }
                value = change.new.value(at: below)
                whole = true
            } else if let below = path.relativeKeys(of: change.path), let first = below.first {
                guard value.value(at: below) == change.old else { return nil }
                value.write(change.new, at: below)
                touched.insert(first)
            }
        }
        return whole ? .whole : .children(touched)
    }
}
