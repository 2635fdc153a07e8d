/// What an object subscription hands its handler (Dflat's `SubscribedObject`).
///
/// ```swift
/// let token = order.subscribe(object: Order.self, queue: .main) { update in
///     switch update {
///     case .updated(let order): render(order)
///     case .deleted: dismiss()          // the last call: the subscription has ended
///     }
/// }
/// ```
public enum SubscribedObject<Object> {
    /// The node holds this value now (the first call gives the value at the time of subscribing).
    case updated(Object)
    /// The node was deleted (or was absent when subscribed); no call follows.
    case deleted
}

extension SubscribedObject: Sendable where Object: Sendable {}
extension SubscribedObject: Equatable where Object: Equatable {}
