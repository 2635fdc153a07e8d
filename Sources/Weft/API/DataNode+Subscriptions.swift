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
    /// - Returns: a sequence that ends when the task is cancelled or the replica shuts down.
    public func events(for type: DataEventType = .valueChange, childrenConstraint: ChildrenConstraint = .all)
        -> DataEventStream
    {
        DataEventStream(node: self, type: type, constraint: childrenConstraint)
    }

    /// A Combine publisher of the events of one type (the same as `forCombine.eventPublisher(…)`).
    ///
    /// ```swift
    /// chat.eventPublisher(for: .childAddition)
    ///     .sink(receiveCompletion: { _ in }, receiveValue: { print($0.value) })
    ///     .store(in: &cancellables)
    /// ```
    /// - Parameters:
    ///   - type: the kind of event (default `.valueChange`).
    ///   - childrenConstraint: which children count (default `.all`).
    /// - Returns: a publisher that finishes when the replica shuts down, and fails with `shutDown` when
    ///   subscribed after that. Keep the `AnyCancellable` to keep the subscription.
    public func eventPublisher(
        for type: DataEventType = .valueChange, childrenConstraint: ChildrenConstraint = .all
    ) -> AnyPublisher<DataEvent, WeftError> {
        DataEventPublisher(node: self, type: type, constraint: childrenConstraint).eraseToAnyPublisher()
    }

    /// A Combine publisher of the values of each event, decoded as `T` with the replica's `jsonDecoder`.
    ///
    /// A value that cannot be decoded is skipped: the publisher neither emits nor fails for it. Use
    /// ``eventPublisher(for:childrenConstraint:)`` to see every event.
    ///
    /// ```swift
    /// alice.decodedValuePublisher(as: User.self)
    ///     .sink(receiveCompletion: { _ in }, receiveValue: { user in render(user) })
    ///     .store(in: &cancellables)
    /// ```
    /// - Parameters:
    ///   - type: the kind of event (default `.valueChange`).
    ///   - childrenConstraint: which children count (default `.all`).
    ///   - valueType: the type to decode (inferred when omitted).
    /// - Returns: a publisher of decoded values.
    public func decodedValuePublisher<T: Decodable>(
        for type: DataEventType = .valueChange, childrenConstraint: ChildrenConstraint = .all,
        as valueType: T.Type = T.self
    ) -> AnyPublisher<T, WeftError> {
        let state = access.state
        return eventPublisher(for: type, childrenConstraint: childrenConstraint)
            .compactMap { event in try? state.coding.decode(T.self, from: event.value, path: event.node.path) }
            .eraseToAnyPublisher()
    }
}
