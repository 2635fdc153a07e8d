import Dispatch
import Foundation
import WeftCore

// Subscriptions that say when they end: the seed's `subscribe(…, onEvent:, onCompletion:)`, and Dflat's
// `subscribe(object:)`, which ends when its object is deleted.

extension DataNode {
    /// Calls `onEvent` for each event of one type, and `onCompletion` once if the subscription ends
    /// without the app invalidating the token (the seed's `subscribe(…, onEvent:, onCompletion:)`).
    ///
    /// Events are those of ``subscribe(to:childrenConstraint:queue:onEvent:)``. When the replica shuts
    /// down, the events before it are delivered and then `onCompletion(.shutDown)` runs on `queue`;
    /// subscribed after shutdown, `onCompletion(.shutDownBeforeStart)` runs at once. Invalidating the
    /// token ends the subscription silently.
    ///
    /// ```swift
    /// let token = chat.subscribe(to: .childAddition, queue: .main) { event in
    ///     show(event.value)
    /// } onCompletion: { end in
    ///     print("no more messages: \(end)")
    /// }
    /// ```
    /// - Parameters:
    ///   - type: the kind of event (default `.valueChange`).
    ///   - childrenConstraint: which children count (default `.all`).
    ///   - queue: where both callbacks run, serially; nil for the replica's `callbackQueue`.
    ///   - onEvent: called for each event, in order.
    ///   - onCompletion: called at most once, after the last event.
    /// - Returns: the token that keeps the subscription alive.
    public func subscribe(
        to type: DataEventType = .valueChange, childrenConstraint: ChildrenConstraint = .all,
        queue: DispatchQueue? = nil, onEvent: @escaping @Sendable (DataEvent) -> Void,
        onCompletion: @escaping @Sendable (SubscriptionEnd) -> Void
    ) -> ObservationToken {
        let feed = EventFeed(node: self, type: type, constraint: childrenConstraint)
        let sink = CallbackSink(
            feed: feed, queue: queue ?? access.state.callbackQueue, onEvent: onEvent, onEnd: onCompletion)
        feed.start { [weak sink] count in sink?.wake(count) }
        return ObservationToken { [sink] in
            withExtendedLifetime(sink) { feed.cancel() }
        }
    }

    /// Follows the node's value decoded as `T` until the node is deleted (Dflat's
    /// `subscribe(object:changeHandler:)`).
    ///
    /// The handler gets `.updated` with the current value, then with each new value; values that do not
    /// decode as `T` are skipped. When the node becomes null (or is null when subscribed) it gets
    /// `.deleted`, once, and the subscription ends: a later write to the node is not reported. Shutdown
    /// ends it too, without a call.
    ///
    /// ```swift
    /// let token = (replica.root / "orders/42")?.subscribe(object: Order.self) { update in
    ///     if case .updated(let order) = update { print(order.total) }
    /// }
    /// ```
    /// - Parameters:
    ///   - type: the type to decode with the replica's `jsonDecoder`.
    ///   - queue: where `changeHandler` runs, serially; nil for the replica's `callbackQueue`.
    ///   - changeHandler: called with each update; `.deleted` is the last call.
    /// - Returns: the token that keeps the subscription alive until the deletion.
    public func subscribe<T: Decodable & Sendable>(
        object type: T.Type, queue: DispatchQueue? = nil,
        _ changeHandler: @escaping @Sendable (SubscribedObject<T>) -> Void
    ) -> ObservationToken {
        let state = access.state
        let path = path
        let holder = SubscriptionHolder()
        let inner = subscribe(to: .valueChange, queue: queue) { event in
            guard !holder.isEnded else { return }
            if event.value == .null {
                holder.end()
                changeHandler(.deleted)
                return
            }
            guard let object = try? state.coding.decode(T.self, from: event.value, path: path) else { return }
            changeHandler(.updated(object))
        }
        holder.hold(inner)
        return ObservationToken { holder.end() }
    }
}

/// Holds the inner token of an object subscription, and ends it once: at the deletion (from the
/// delivery queue) or when the app invalidates the outer token.
private final class SubscriptionHolder: @unchecked Sendable {
    // Sendable: fields are guarded by `lock`.
    private let lock = NSLock()
    private var token: ObservationToken?
    private var ended = false

    var isEnded: Bool { lock.withLock { ended } }

    /// Keeps `token`, or invalidates it at once when the subscription ended before it was made.
    func hold(_ token: ObservationToken) {
        let late = lock.withLock {
            guard !ended else { return true }
            self.token = token
            return false
        }
        if late { token.invalidate() }
    }

    func end() {
        let token = lock.withLock {
            ended = true
            defer { self.token = nil }
            return self.token
        }
        token?.invalidate()
    }
}
