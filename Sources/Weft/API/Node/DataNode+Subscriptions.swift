#if canImport(Combine)
    import Combine
#else
    import OpenCombine
#endif
import Dispatch
import WeftCore

// Subscriptions: events computed from the replica's change batches, one event type per subscription,
// in three forms (callback with a token, AsyncSequence, Combine publisher). Each starts with the current
// state (a value event, or an addition per child), then follows every local write and merged change.

extension DataNode {
    /// Calls `onEvent` for each event of one type, until the token is invalidated or dropped.
    ///
    /// The first events describe the current state (source `.initial`): the value for `.valueChange`, an
    /// addition per child for `.childAddition`. Then every change brings its events, from local writes
    /// (`.localPending`) and merged state (`.merged`). Child events come in Firebase key order with the
    /// key of the previous sibling.
    ///
    /// ```swift
    /// let token = chat.subscribe(to: .childAddition, queue: .main) { event in
    ///     messages.insert(event.value, after: event.previousSiblingKey)
    /// }
    /// ```
    /// - Parameters:
    ///   - type: the kind of event (default `.valueChange`).
    ///   - childrenConstraint: which children count (default `.all`).
    ///   - queue: where `onEvent` runs, serially; nil for the replica's `callbackQueue`.
    ///   - onEvent: called for each event, in order.
    /// - Returns: the token that keeps the subscription alive. After shutdown no event comes.
    public func subscribe(
        to type: DataEventType = .valueChange, childrenConstraint: ChildrenConstraint = .all,
        queue: DispatchQueue? = nil, onEvent: @escaping @Sendable (DataEvent) -> Void
    ) -> ObservationToken {
        let feed = EventFeed(node: self, type: type, constraint: childrenConstraint)
        let sink = CallbackSink(feed: feed, queue: queue ?? access.state.callbackQueue, onEvent: onEvent)
        feed.start { [weak sink] count in sink?.wake(count) }
        return ObservationToken { [sink] in
            withExtendedLifetime(sink) { feed.cancel() }
        }
    }

    /// The events of one type as an `AsyncSequence`; each iteration is a subscription of its own.
    ///
    /// ```swift
    /// for await event in score.events() {
    ///     print("score is now", event.value)
    /// }
    /// ```
    /// - Parameters:
    ///   - type: the kind of event (default `.valueChange`).
    ///   - childrenConstraint: which children count (default `.all`).
    /// - Returns: a sequence that ends when the task is cancelled or the replica shuts down. It has no
    ///   queue: each event is handed to the task that iterates, on that task's executor (the main actor
    ///   for a loop in main-actor code).
    public func events(for type: DataEventType = .valueChange, childrenConstraint: ChildrenConstraint = .all)
        -> DataEventStream
    {
        DataEventStream(node: self, type: type, constraint: childrenConstraint)
    }

    /// A Combine publisher of the events of one type (the same as `forCombine.eventPublisher(…)`).
    ///
    /// Events arrive on `queue`, in order; by default on the replica's ``Replica/callbackQueue``. Code
    /// on the main actor (an app's views, top-level code in Swift 6) passes `queue: .main`, or sets
    /// `replica.callbackQueue = .main` once: a `sink` closure written there is main-actor code, and Swift
    /// checks at run time that it runs on the main queue. `.receive(on: DispatchQueue.main)` works too.
    ///
    /// ```swift
    /// chat.eventPublisher(for: .childAddition, queue: .main)
    ///     .sink(receiveCompletion: { _ in }, receiveValue: { print($0.value) })
    ///     .store(in: &cancellables)
    /// ```
    /// - Parameters:
    ///   - type: the kind of event (default `.valueChange`).
    ///   - childrenConstraint: which children count (default `.all`).
    ///   - queue: where events and the completion are delivered; nil for the replica's `callbackQueue`.
    /// - Returns: a publisher that finishes when the replica shuts down, and fails with `shutDown` when
    ///   subscribed after that. Keep the `AnyCancellable` to keep the subscription. For a publisher that
    ///   cannot fail (plain `sink(receiveValue:)`), use ``publisher(for:childrenConstraint:queue:)``.
    public func eventPublisher(
        for type: DataEventType = .valueChange, childrenConstraint: ChildrenConstraint = .all,
        queue: DispatchQueue? = nil
    ) -> AnyPublisher<DataEvent, WeftError> {
        DataEventPublisher(
            node: self, type: type, constraint: childrenConstraint, queue: queue ?? access.state.callbackQueue
        ).eraseToAnyPublisher()
    }

    /// A Combine publisher of the values of each event, decoded as `T` with the replica's `jsonDecoder`.
    ///
    /// A value that cannot be decoded is skipped: the publisher neither emits nor fails for it. Use
    /// ``eventPublisher(for:childrenConstraint:queue:)`` to see every event.
    ///
    /// ```swift
    /// alice.decodedValuePublisher(as: User.self, queue: .main)
    ///     .sink(receiveCompletion: { _ in }, receiveValue: { user in render(user) })
    ///     .store(in: &cancellables)
    /// ```
    /// - Parameters:
    ///   - type: the kind of event (default `.valueChange`).
    ///   - childrenConstraint: which children count (default `.all`).
    ///   - valueType: the type to decode (inferred when omitted).
    ///   - queue: where values and the completion are delivered; nil for the replica's `callbackQueue`.
    /// - Returns: a publisher of decoded values, which fails with `shutDown` when subscribed after
    ///   shutdown; ``publisher(for:childrenConstraint:as:queue:)`` is the form that cannot fail.
    public func decodedValuePublisher<T: Decodable>(
        for type: DataEventType = .valueChange, childrenConstraint: ChildrenConstraint = .all,
        as valueType: T.Type = T.self, queue: DispatchQueue? = nil
    ) -> AnyPublisher<T, WeftError> {
        let state = access.state
        return eventPublisher(for: type, childrenConstraint: childrenConstraint, queue: queue)
            .compactMap { event in try? state.coding.decode(T.self, from: event.value, path: event.node.path) }
            .eraseToAnyPublisher()
    }

    /// A Combine publisher of the events of one type that cannot fail, for a plain
    /// `sink(receiveValue:)` (Dflat's `publisher(for:)`).
    ///
    /// The same events as ``eventPublisher(for:childrenConstraint:queue:)``, on the same queue. It
    /// finishes when the replica shuts down, and, subscribed after shutdown, finishes at once where
    /// `eventPublisher` fails with `shutDown`: that is its only failure, so nothing is lost.
    ///
    /// ```swift
    /// let cancellable = score.publisher(queue: .main).sink { event in label.text = "\(event.value)" }
    /// ```
    /// - Parameters:
    ///   - type: the kind of event (default `.valueChange`).
    ///   - childrenConstraint: which children count (default `.all`).
    ///   - queue: where events and the completion are delivered; nil for the replica's `callbackQueue`.
    public func publisher(
        for type: DataEventType = .valueChange, childrenConstraint: ChildrenConstraint = .all,
        queue: DispatchQueue? = nil
    ) -> AnyPublisher<DataEvent, Never> {
        eventPublisher(for: type, childrenConstraint: childrenConstraint, queue: queue)
            .catch { _ in Empty<DataEvent, Never>() }
            .eraseToAnyPublisher()
    }

    /// A Combine publisher of decoded values that cannot fail, for a plain `sink(receiveValue:)`: the
    /// values of ``decodedValuePublisher(for:childrenConstraint:as:queue:)``, finishing (not failing)
    /// when subscribed after shutdown. Values that do not decode are skipped.
    ///
    /// ```swift
    /// let cancellable = alice.publisher(as: User.self, queue: .main).sink { user in render(user) }
    /// ```
    /// - Parameters:
    ///   - type: the kind of event (default `.valueChange`).
    ///   - childrenConstraint: which children count (default `.all`).
    ///   - valueType: the type to decode.
    ///   - queue: where values and the completion are delivered; nil for the replica's `callbackQueue`.
    public func publisher<T: Decodable>(
        for type: DataEventType = .valueChange, childrenConstraint: ChildrenConstraint = .all,
        as valueType: T.Type, queue: DispatchQueue? = nil
    ) -> AnyPublisher<T, Never> {
        decodedValuePublisher(for: type, childrenConstraint: childrenConstraint, as: valueType, queue: queue)
            .catch { _ in Empty<T, Never>() }
            .eraseToAnyPublisher()
    }
}
