#if canImport(Combine)
    import Combine
#else
    import OpenCombine
#endif
import Foundation
import Dispatch

/// A Combine publisher of a subscription's events; each subscriber gets its own subscription, which
/// honours demand (events wait in a bounded buffer, see ``WeftLimits/subscriberEventsBufferedMax``).
///
/// Events and the completion reach the subscriber on `queue`, one drain at a time, so a subscriber
/// isolated to the main actor (a `sink` in main-actor code) is called where it may run.
///
/// It finishes when the replica shuts down, and fails with `shutDown` when subscribed after that.
struct DataEventPublisher: Publisher {
    typealias Output = DataEvent
    typealias Failure = WeftError

    let node: DataNode
    let type: DataEventType
    let constraint: ChildrenConstraint
    let queue: DispatchQueue

    func receive<S: Subscriber>(subscriber: S) where S.Input == DataEvent, S.Failure == WeftError {
        let feed = EventFeed(node: node, type: type, constraint: constraint)
        let subscription = EventSubscription(subscriber: subscriber, feed: feed, queue: queue)
        subscriber.receive(subscription: subscription)
        // Through a non-generic existential: the closure must not capture the subscriber's type.
        let drainable: any Drainable = subscription
        feed.start { [weak drainable] _ in drainable?.drain() }
    }
}

/// Something a feed wakes up when events are waiting.
private protocol Drainable: AnyObject, Sendable {
    func drain()
    /// The drain scheduled on the subscription's queue.
    func drainScheduled()
}

/// One subscriber's subscription: delivers buffered events as demand allows, one drain at a time, on
/// its queue.
private final class EventSubscription<S: Subscriber>: Subscription, Drainable, @unchecked Sendable
where S.Input == DataEvent, S.Failure == WeftError {
    // Sendable: mutable fields are guarded by `lock`; `draining` keeps deliveries serial.
    private let lock = NSLock()
    private var subscriber: S?
    private var demand = Subscribers.Demand.none
    private var draining = false
    private var scheduled = false
    private let feed: EventFeed
    private let queue: DispatchQueue

    init(subscriber: S, feed: EventFeed, queue: DispatchQueue) {
        self.subscriber = subscriber
        self.feed = feed
        self.queue = queue
    }

    var combineIdentifier: CombineIdentifier { CombineIdentifier(self) }

    func request(_ additional: Subscribers.Demand) {
        guard additional > .none else { return }
        lock.withLock { demand += additional }
        drain()
    }

    /// Schedules a drain on the queue, unless one is scheduled and has not started yet (it will see
    /// what this call was for).
    func drain() {
        let schedule = lock.withLock {
            defer { scheduled = true }
            return !scheduled
        }
        guard schedule else { return }
        // Through a non-generic existential: the closure must not capture the subscriber's type.
        let drainable: any Drainable = self
        queue.async { drainable.drainScheduled() }
    }

    func drainScheduled() {
        lock.withLock { scheduled = false }
        drainNow()
    }

    func cancel() {
        lock.withLock { subscriber = nil }
        feed.cancel()
    }

    /// Delivers what demand allows. A call made while another drains returns at once: the running drain
    /// takes from the feed again, under the lock, before it stops, so it sees what that call was for.
    private func drainNow() {
        let enter = lock.withLock {
            defer { draining = true }
            return !draining
        }
        guard enter else { return }
        while let step = nextStep() {
            switch step {
            case .deliver(let subscriber, let events):
                for event in events {
                    // A subscriber that cancelled (even from inside `receive`) gets nothing more.
                    guard lock.withLock({ self.subscriber != nil }) else { break }
                    let more = subscriber.receive(event)
                    lock.withLock { demand += more }
                }
            case .complete(let subscriber, let completion):
                subscriber.receive(completion: completion)
                feed.cancel()
            }
        }
    }

    private enum Step {
        case deliver(S, [DataEvent])
        case complete(S, Subscribers.Completion<WeftError>)
    }

    /// What to do next, or nil (and the drain ends) when nothing can be delivered now.
    private func nextStep() -> Step? {
        lock.withLock {
            guard let subscriber else {
                draining = false
                return nil
            }
            let limit = demand == .unlimited ? 64 : min(demand.max ?? 0, 64)
            // Taken even with no demand: the end of a feed with nothing left completes without demand.
            let (events, end) = feed.take(limit)
            if !events.isEmpty {
                if demand != .unlimited { demand -= events.count }
                return .deliver(subscriber, events)
            }
            if let end, end != .cancelled {
                self.subscriber = nil
                let completion: Subscribers.Completion<WeftError> =
                    end == .shutDownBeforeStart ? .failure(WeftError.replicaShutDown) : .finished
                return .complete(subscriber, completion)
            }
            draining = false
            return nil
        }
    }
}
