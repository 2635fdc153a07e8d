#if canImport(Combine)
    import Combine
#else
    import OpenCombine
#endif
import Foundation
import WeftCore

// Live queries in the three forms: a callback with a token, an AsyncSequence, a Combine publisher. Each
// delivers `.initial(result)` and then `.updated(result, changes)` whenever the result changes; a write
// that cannot change it (a child outside the window, one the filters refuse) costs no evaluation.

extension DataQuery {
    /// Calls `onEvent` on `queue` (nil: the replica's callback queue) with the result now, then with every
    /// new result and its changes, until the token is invalidated (or released) or the replica shuts down.
    ///
    /// ```swift
    /// let token = try node.orderedByChild("score").limit(toLast: 20).subscribe { event in
    ///     switch event {
    ///     case .initial(let result): rows = result.rows; tableView.reloadData()
    ///     case .updated(let result, let changes): rows = result.rows; apply(changes, to: tableView)
    ///     }
    /// }
    /// ```
    /// Events come one at a time, in order; a burst of writes is one event.
    public func subscribe(
        queue: DispatchQueue? = nil, onEvent: @escaping @Sendable (QueryEvent) -> Void
    ) -> ObservationToken {
        let feed = QueryFeed(query: self)
        let target = DispatchQueue(label: "weft.query.delivery", target: queue ?? access.state.callbackQueue)
        feed.start {
            target.async {
                while case (let event?, _) = feed.take() { onEvent(event) }
            }
        }
        return ObservationToken { feed.cancel() }
    }

    /// The results as an `AsyncSequence`: the result now, then each new one with its changes. It ends
    /// when the replica shuts down; a consumer that falls behind gets one event from what it holds to the
    /// newest result.
    ///
    /// ```swift
    /// for await event in query.results { render(event.result) }
    /// ```
    public var results: QueryResults { QueryResults(query: self) }

    /// The results as a Combine publisher (it never fails; it finishes when the replica shuts down).
    ///
    /// ```swift
    /// query.publisher().sink { event in render(event.result) }.store(in: &cancellables)
    /// ```
    public func publisher() -> AnyPublisher<QueryEvent, Never> { QueryPublisher(query: self).eraseToAnyPublisher() }
}

/// The results of a live query as an `AsyncSequence` (see ``DataQuery/results``).
public struct QueryResults: AsyncSequence, Sendable {
    public typealias Element = QueryEvent
    let query: DataQuery

    public func makeAsyncIterator() -> Iterator { Iterator(feed: QueryFeedWaiter(query: query)) }

    /// Takes the next event, waiting for one.
    public struct Iterator: AsyncIteratorProtocol {
        let feed: QueryFeedWaiter

        public mutating func next() async -> QueryEvent? { await feed.next() }
    }
}

/// A feed started on first use whose consumer waits for events; cancelled when released.
final class QueryFeedWaiter: @unchecked Sendable {
    // Sendable: `waiting` and `started` are guarded by `lock`.
    private let lock = NSLock()
    private let feed: QueryFeed
    private var started = false
    private var waiting: CheckedContinuation<Void, Never>?
    private var signalled = false

    init(query: DataQuery) { feed = QueryFeed(query: query) }

    func next() async -> QueryEvent? {
        let start = lock.withLock {
            defer { started = true }
            return !started
        }
        if start { feed.start { [weak self] in self?.signal() } }
        while true {
            let (event, end) = feed.take()
            if let event { return event }
            if end != nil { return nil }
            if Task.isCancelled {
                feed.cancel()
                return nil
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let resume = lock.withLock {
                        if signalled {
                            signalled = false
                            return true
                        }
                        waiting = continuation
                        return false
                    }
                    if resume { continuation.resume() }
                }
            } onCancel: {
                self.signal()
            }
        }
    }

    private func signal() {
        let continuation = lock.withLock {
            defer { waiting = nil }
            if waiting == nil { signalled = true }
            return waiting
        }
        continuation?.resume()
    }

    deinit { feed.cancel() }
}

/// A Combine publisher of a live query's events, honouring demand: events are taken from the feed only
/// as the subscriber asks, so a slow subscriber gets coalesced change sets rather than a backlog.
struct QueryPublisher: Publisher {
    typealias Output = QueryEvent
    typealias Failure = Never
    let query: DataQuery

    func receive<S: Subscriber>(subscriber: S) where S.Input == QueryEvent, S.Failure == Never {
        let subscription = Inner(feed: QueryFeed(query: query), subscriber: AnySubscriber(subscriber))
        subscriber.receive(subscription: subscription)
        subscription.begin()
    }

    /// Not generic over the subscriber (it holds it type-erased), so its closures capture no metatype.
    final class Inner: Subscription, @unchecked Sendable {
        // Sendable: mutable fields are guarded by `lock`; deliveries run on `queue`, one at a time.
        private let lock = NSLock()
        private let queue = DispatchQueue(label: "weft.query.publisher")
        private let feed: QueryFeed
        private var subscriber: AnySubscriber<QueryEvent, Never>?
        private var demand = Subscribers.Demand.none

        init(feed: QueryFeed, subscriber: AnySubscriber<QueryEvent, Never>) {
            self.feed = feed
            self.subscriber = subscriber
        }

        func begin() { feed.start { [weak self] in self?.schedule() } }

        func request(_ demand: Subscribers.Demand) {
            lock.withLock { self.demand += demand }
            schedule()
        }

        func cancel() {
            lock.withLock { subscriber = nil }
            feed.cancel()
        }

        private func schedule() { queue.async { self.deliver() } }

        private func deliver() {
            while true {
                let (subscriber, hasDemand): (AnySubscriber<QueryEvent, Never>?, Bool) = lock.withLock {
                    (self.subscriber, demand > 0)
                }
                guard let subscriber else { return }
                if hasDemand, case (let event?, _) = feed.take() {
                    let more = subscriber.receive(event)
                    lock.withLock { demand = demand - 1 + more }
                    continue
                }
                // Completion needs no demand, but waits for the last result to be taken.
                if feed.hasEnded(.shutDown) {
                    lock.withLock { self.subscriber = nil }
                    subscriber.receive(completion: .finished)
                }
                return
            }
        }
    }
}
