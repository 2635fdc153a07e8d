import WeftCore

/// The kinds of event a subscription delivers.
///
/// ```swift
/// chat.subscribe(to: .childAddition) { event in print("new message", event.value) }
/// ```
public enum DataEventType: Sendable, Hashable, CaseIterable {
    /// The node's value changed (under the children constraint). Delivered first with the current value.
    case valueChange
    /// A child appeared. Delivered first for every existing child, in key order.
    case childAddition
    /// A child's value changed.
    case childChange
    /// A child disappeared; the event's value is the child's last value.
    case childRemoval
}

/// Which children of the subscribed node a subscription considers.
///
/// ```swift
/// let recent = chat.eventPublisher(for: .childAddition, childrenConstraint: .keyRange(from: lastSeenKey, to: nil))
/// ```
public enum ChildrenConstraint: Sendable, Hashable {
    /// Every child.
    case all
    /// No child: only the node's own scalar value. An object node (which has only children) reads as
    /// null under this constraint, and no child event is delivered.
    case none
    /// The children whose keys lie between the bounds, inclusive, in Firebase key order (see
    /// ``KeyOrder``); a nil bound is open.
    case keyRange(from: String?, to: String?)

    /// True when the child of that key is considered.
    public func admits(_ key: String) -> Bool {
        switch self {
        case .all: return true
        case .none: return false
        case .keyRange(let lower, let upper):
            if let lower, KeyOrder.precedes(key, lower) { return false }
            if let upper, KeyOrder.precedes(upper, key) { return false }
            return true
        }
    }

    /// The value with only the admitted children kept.
    public func restrict(_ value: Value) -> Value {
        guard case .object(let children) = value else { return value }
        switch self {
        case .all: return value
        case .none: return .null
        case .keyRange: return .object(normalizing: children.filter { admits($0.key.text) })
        }
    }
}

/// One change seen by a subscription.
///
/// ```swift
/// for await event in chat.events(for: .childAddition) {
///     print(event.node.key ?? "", event.value, event.source)
/// }
/// ```
public struct DataEvent: Sendable, Hashable {
    /// Where the change comes from.
    public enum Source: Sendable, Hashable {
        /// The state when the subscription started (the first events).
        case initial
        /// A local write, applied but not yet durable.
        case localPending
        /// Merged state: writes from other replicas, or local writes re-applied when the replica opened.
        case merged
    }

    /// The kind of event.
    public let type: DataEventType
    /// The subscribed node for a value change; the child for a child event.
    public let node: DataNode
    /// The new value (under the children constraint for a value change); for a removal, the child's
    /// last value.
    public let value: Value
    /// For a child event, the key of the admitted child just before this one in key order (among the
    /// children after the change; before it, for a removal); nil for the first child and for value events.
    public let previousSiblingKey: String?
    /// Whether the event comes from a local pending write or from merged state.
    public let source: Source

    /// True when the event comes from a local write that is not durable yet.
    public var isLocalPending: Bool { source == .localPending }

    /// The event's value decoded as `T` with the replica's `jsonDecoder`.
    ///
    /// ```swift
    /// chat.subscribe(to: .childAddition) { event in
    ///     if let message = try? event.decodedValue(as: Message.self) { show(message) }
    /// }
    /// ```
    /// - Throws: `WeftError` with code `decodingFailed`, saying which node and why.
    public func decodedValue<T: Decodable>(as type: T.Type = T.self) throws -> T {
        try node.access.state.coding.decode(type, from: value, path: node.path)
    }
}
