import WeftCore

/// A webhook or notification subscription as a store keeps it: its definition (what is subscribed, and
/// where its changes go) and its delivery cursor (what was delivered, what is in flight), each a value
/// whose fields the replica's subscription book reads (see `Docs/STORAGE.md`).
public struct StoredSubscription: Sendable, Hashable {
    /// The subscription's id (unique per store).
    public var id: String
    /// What is subscribed and where its changes go.
    public var definition: Value
    /// How its deliveries stand.
    public var cursor: Value

    public init(id: String, definition: Value, cursor: Value) {
        self.id = id
        self.definition = definition
        self.cursor = cursor
    }
}

/// A store that keeps subscriptions beside the tree, outside the op log: they are this replica's own
/// (never replicated), and each write is its own transaction, durable per the store's durability.
public protocol SubscriptionStore: AnyObject, Sendable {
    /// Every subscription stored.
    /// - Throws: ``StoreError/corrupt(path:reason:)`` and I/O errors.
    func subscriptions() throws -> [StoredSubscription]
    /// Adds `subscription`, or replaces the one with its id.
    func saveSubscription(_ subscription: StoredSubscription) throws
    /// Replaces the cursor of subscription `id` (nothing when it is gone).
    func saveSubscriptionCursor(id: String, cursor: Value) throws
    /// Removes the subscriptions with these ids (the missing ones are skipped).
    func deleteSubscriptions(ids: [String]) throws
}
