import Foundation

/// Keeps a subscription or an observation alive: hold it as long as you want callbacks, and call
/// ``invalidate()`` (or drop it) to stop them.
///
/// ```swift
/// let token = chat.subscribe(to: .childAddition) { event in print(event.value) }
/// …
/// token.invalidate()
/// ```
public final class ObservationToken: @unchecked Sendable {
    // Sendable: `onInvalidate` is taken once under `lock`.
    private let lock = NSLock()
    private var onInvalidate: (@Sendable () -> Void)?

    init(onInvalidate: @escaping @Sendable () -> Void) { self.onInvalidate = onInvalidate }

    /// Stops the callbacks. Called on the queue the callbacks run on (the usual case: the main queue),
    /// no callback runs after it. Called from another thread, a callback already running finishes, and
    /// one that was starting as it was called may still run once: the callback runs outside any lock, so
    /// that it may itself call into the replica. Calling it again does nothing.
    public func invalidate() {
        let action = lock.withLock {
            defer { onInvalidate = nil }
            return onInvalidate
        }
        action?()
    }

    /// True once ``invalidate()`` was called.
    public var isInvalidated: Bool { lock.withLock { onInvalidate == nil } }

    deinit { invalidate() }
}

/// Delivers a feed's events to a callback on a dispatch queue, in order.
///
/// Each change batch that gives the feed events schedules its own delivery of that many events, so the
/// callbacks of several subscriptions on one serial queue run in the order of the changes: the
/// canonical Firebase list (one subscription each for additions, changes and removals) stays in step
/// with the data. A subscriber so far behind that ``outstandingMax`` deliveries wait stops scheduling
/// more: the last waiting delivery then takes every event left (coalesced by the feed's buffer, see
/// ``EventBuffer``), and only then may the order across subscriptions slip.
final class CallbackSink: @unchecked Sendable {
    // Sendable: `outstanding` and `catchUp` are guarded by `lock`; the queue serializes deliveries.
    private let lock = NSLock()
    private var outstanding = 0
    private var catchUp = false
    private let feed: EventFeed
    private let queue: DispatchQueue
    private let onEvent: @Sendable (DataEvent) -> Void
    private let onEnd: (@Sendable (SubscriptionEnd) -> Void)?

    /// Events taken from the feed at a time.
    static let takeEventsMax = 256
    /// Deliveries waiting on the queue before a lagging subscriber is caught up in one.
    static let outstandingMax = 128

    init(
        feed: EventFeed, queue: DispatchQueue, onEvent: @escaping @Sendable (DataEvent) -> Void,
        onEnd: (@Sendable (SubscriptionEnd) -> Void)? = nil
    ) {
        self.feed = feed
        self.queue = queue
        self.onEvent = onEvent
        self.onEnd = onEnd
    }

    /// `count` events were added to the feed (0: the feed ended).
    func wake(_ count: Int) {
        guard count > 0 else {
            // Behind every delivery already scheduled: the events left, then the end.
            if onEnd != nil { queue.async { self.deliverEnd() } }
            return
        }
        let schedule = lock.withLock {
            guard outstanding < Self.outstandingMax else {
                catchUp = true
                return false
            }
            outstanding += 1
            return true
        }
        if schedule { queue.async { self.deliver(count) } }
    }

    /// Delivers what the feed still holds, then tells `onEnd` why it ended (unless the app cancelled).
    private func deliverEnd() {
        while true {
            let (events, end) = feed.take(Self.takeEventsMax)
            for event in events {
                guard !feed.isCancelled else { return }
                onEvent(event)
            }
            guard events.isEmpty else { continue }
            switch end {
            case .shutDown?: onEnd?(.shutDown)
            case .shutDownBeforeStart?: onEnd?(.shutDownBeforeStart)
            case .cancelled?, nil: break
            }
            return
        }
    }

    private func deliver(_ count: Int) {
        var remaining = lock.withLock {
            outstanding -= 1
            guard catchUp, outstanding == 0 else { return count }
            catchUp = false
            return Int.max
        }
        while remaining > 0 {
            let (events, _) = feed.take(min(remaining, Self.takeEventsMax))
            guard !events.isEmpty else { return }
            for event in events {
                guard !feed.isCancelled else { return }
                onEvent(event)
            }
            remaining -= events.count
        }
    }
}
