import Foundation
import WeftCore

/// The events of one subscription, computed from the replica's change batches and buffered (bounded)
/// until the subscriber takes them. The callback, `AsyncSequence` and Combine forms each drain one.
final class EventFeed: Finishable, @unchecked Sendable {
    // Sendable: mutable fields are guarded by `lock`.

    /// How a feed ended.
    enum End: Equatable {
        /// The replica was already shut down when the subscription started.
        case shutDownBeforeStart
        /// The replica shut down (after the buffered events were taken).
        case shutDown
        /// The subscriber cancelled.
        case cancelled
    }

    let diff: EventDiff
    private let lock = NSLock()
    private var buffer = EventBuffer()
    private var watcher: NodeWatcher?
    private var finished: End?
    private var wake: (@Sendable (Int) -> Void)?

    init(node: DataNode, type: DataEventType, constraint: ChildrenConstraint) {
        diff = EventDiff(node: node, type: type, constraint: constraint)
    }

    var node: DataNode { diff.node }

    /// Starts the feed; `wake` is called (on any thread, without locks held) with the number of events
    /// each change added, in the order of the changes, and with 0 once the feed ended.
    func start(wake: @escaping @Sendable (Int) -> Void) {
        lock.withLock { self.wake = wake }
        let access = node.access
        guard !access.backend.isShutDown, access.state.add(self) else {
            lock.withLock { finished = .shutDownBeforeStart }
            wake(0)
            return
        }
        let watcher = NodeWatcher(node: node) { [weak self] old, new, effect, source in
            guard let self else { return }
            self.append(self.diff.events(old: old, new: new, effect: effect, source: source))
        }
        let proceed = lock.withLock {
            guard finished == nil else { return false }
            self.watcher = watcher
            return true
        }
        guard proceed else {
            access.state.remove(self)
            return
        }
        watcher.start { baseline in append(diff.initialEvents(of: baseline)) }
    }

    /// Removes and returns up to `limit` waiting events; `end` is set once the feed ended and every
    /// event was taken.
    func take(_ limit: Int) -> (events: [DataEvent], end: End?) {
        lock.withLock {
            if finished == .cancelled { return ([], .cancelled) }
            let events = buffer.take(limit)
            return (events, buffer.isEmpty ? finished : nil)
        }
    }

    /// True once the subscriber cancelled.
    var isCancelled: Bool { lock.withLock { finished == .cancelled } }

    /// Stops the feed for good and drops what is buffered.
    func cancel() {
        let watcher = lock.withLock {
            finished = .cancelled
            buffer.removeAll()
            wake = nil
            defer { self.watcher = nil }
            return self.watcher
        }
        watcher?.stop()
        node.access.state.remove(self)
    }

    /// The replica shut down: no more events; those buffered are still delivered.
    func finish() {
        let (watcher, wake) = lock.withLock {
            if finished == nil { finished = .shutDown }
            defer { self.watcher = nil }
            return (self.watcher, self.wake)
        }
        watcher?.stop()
        wake?(0)
    }

    private func append(_ events: [DataEvent]) {
        guard !events.isEmpty else { return }
        let wake = lock.withLock {
            guard finished == nil else { return nil as (@Sendable (Int) -> Void)? }
            buffer.append(contentsOf: events)
            return self.wake
        }
        wake?(events.count)
    }

    deinit {
        watcher?.stop()
        node.access.state.remove(self)
    }
}
