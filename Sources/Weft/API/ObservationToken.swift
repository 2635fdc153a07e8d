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

    /// Stops the callbacks. A callback already running finishes; none starts after this returns.
    /// Calling it again does nothing.
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

/// Delivers a feed's events to a callback on a dispatch queue, in order, one drain at a time.
final class CallbackSink: @unchecked Sendable {
    // Sendable: `scheduled` is guarded by `lock`; the queue serializes drains.
    private let lock = NSLock()
    private var scheduled = false
    private let feed: EventFeed
    private let queue: DispatchQueue
    private let onEvent: @Sendable (DataEvent) -> Void

    /// Events handed to the callback per drain before the queue gets a chance to run other work.
    static let drainEventsMax = 256

    init(feed: EventFeed, queue: DispatchQueue, onEvent: @escaping @Sendable (DataEvent) -> Void) {
        self.feed = feed
        self.queue = queue
        self.onEvent = onEvent
    }

    /// Schedules a drain unless one is pending.
    func wake() {
        let schedule = lock.withLock {
            defer { scheduled = true }
            return !scheduled
        }
        if schedule { queue.async { self.drain() } }
    }

    private func drain() {
        lock.withLock { scheduled = false }
        let (events, _) = feed.take(Self.drainEventsMax)
        for event in events {
            guard !feed.isCancelled else { return }
            onEvent(event)
        }
        if events.count == Self.drainEventsMax { wake() }
    }
}
