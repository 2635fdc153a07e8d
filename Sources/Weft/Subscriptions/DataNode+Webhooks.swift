import WeftCore
import WeftSync

// Webcom's subscriptions through a webhook or through notifications (seed 001), on a node of the
// replica this process owns: stored in the replica's file and delivered by the daemon that serves it
// (`weft serve --webhooks`), which signs each delivery and retries until the receiver answers 2xx.

extension DataNode {
    /// Subscribes this node through the webhook `identifier`: each change is `POST`ed to it with `context`.
    /// At most one per node, identifier and context: a new one replaces the old (and restarts its cursor).
    ///
    /// ```swift
    /// let orders = try replica.root.child("orders")
    /// let subscription = try orders.subscribeThroughWebhook("fulfilment", context: "shop-42")
    /// ```
    /// - Throws: `WeftError` `invalidValue` (an empty or too long identifier or context, or one the daemon
    ///   did not declare), `storage`, or `shutDown`.
    @discardableResult
    public func subscribeThroughWebhook(
        _ identifier: String, context: String, descriptor: DataSubscriptionDescriptor = DataSubscriptionDescriptor()
    ) throws -> DataSubscription {
        try subscribe(.webhook(identifier: identifier, context: context), descriptor)
    }

    /// Cancels the subscription of this node through `identifier` with `context`; nothing when there is none.
    ///
    /// ```swift
    /// try orders.unsubscribeThroughWebhook("fulfilment", context: "shop-42")
    /// ```
    public func unsubscribeThroughWebhook(_ identifier: String, context: String) throws {
        try access.checkOpen()
        try access.state.subscriptions.unsubscribe(
            path: location, client: DataSubscription.localClient,
            target: .webhook(identifier: identifier, context: context))
    }

    /// Subscribes this node through notifications to the device `deviceToken` (delivered through the
    /// daemon's push gateway). At most one per node and device: a new one replaces the old.
    ///
    /// ```swift
    /// try inbox.subscribeThroughNotifications(deviceToken: token)
    /// ```
    @discardableResult
    public func subscribeThroughNotifications(
        deviceToken: String, descriptor: DataSubscriptionDescriptor = DataSubscriptionDescriptor()
    ) throws -> DataSubscription {
        try subscribe(.notifications(deviceToken: deviceToken), descriptor)
    }

    /// Cancels the notification subscription of this node for `deviceToken`; nothing when there is none.
    public func unsubscribeThroughNotifications(deviceToken: String) throws {
        try access.checkOpen()
        try access.state.subscriptions.unsubscribe(
            path: location, client: DataSubscription.localClient, target: .notifications(deviceToken: deviceToken))
    }

    private func subscribe(_ target: SubscriptionTarget, _ descriptor: DataSubscriptionDescriptor) throws
        -> DataSubscription
    {
        try access.checkOpen()
        // The vector first: an op landing between the two reads is listed again, never missed.
        let vector = access.backend.versionVector
        return try access.state.subscriptions.subscribe(
            path: location, client: DataSubscription.localClient, target: target, descriptor: descriptor,
            current: access.backend.value(at: location), vector: vector)
    }
}

extension Replica {
    /// The replica's webhook and notification subscriptions, for the deliverer and for `weft status`.
    public var subscriptions: SubscriptionBook { api.subscriptions }

    /// Cancels every subscription made through a webhook by this process's ``DataNode``s; returns how many.
    ///
    /// ```swift
    /// try replica.unsubscribeFromAllThroughWebhook()
    /// ```
    @discardableResult
    public func unsubscribeFromAllThroughWebhook() throws -> Int {
        try subscriptions.unsubscribeAll(client: DataSubscription.localClient, webhooks: true)
    }

    /// Cancels every subscription made through notifications by this process's ``DataNode``s.
    @discardableResult
    public func unsubscribeFromAllThroughNotifications() throws -> Int {
        try subscriptions.unsubscribeAll(client: DataSubscription.localClient, webhooks: false)
    }

    /// Moves every notification subscription of device `old` to device `new` (a device's token changed),
    /// keeping what each one delivered. Returns how many moved.
    @discardableResult
    public func updateDeviceTokenInAllSubscriptions(from old: String, to new: String) throws -> Int {
        try subscriptions.updateDeviceToken(client: DataSubscription.localClient, from: old, to: new)
    }
}
