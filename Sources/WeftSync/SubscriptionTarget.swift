import Crypto
import WeftCore

/// Where a subscribed node's changes go: a webhook the operator declared, with the context string the
/// subscriber chose, or a device, through the operator's push gateway.
///
/// ```swift
/// let target = SubscriptionTarget.webhook(identifier: "orders", context: "shop-42")
/// ```
public enum SubscriptionTarget: Sendable, Hashable {
    /// `POST` each change to the webhook named `identifier`, passing `context` back in every delivery.
    case webhook(identifier: String, context: String)
    /// Notify the device with `deviceToken` through the push gateway (see `Docs/HTTP.md`).
    case notifications(deviceToken: String)

    /// The identifier of the webhook that delivers: the declared one, or the push gateway's.
    public var webhookIdentifier: String {
        switch self {
        case .webhook(let identifier, _): identifier
        case .notifications: SubscriptionTarget.pushGatewayIdentifier
        }
    }

    /// The reserved webhook identifier of the push gateway, through which notifications are delivered.
    public static let pushGatewayIdentifier = "push-gateway"

    /// Throws `requestFailed` unless each string is non-empty and at most
    /// ``SyncLimits/subscriptionFieldBytesMax`` bytes, and a webhook does not name the gateway.
    public func validated() throws(SyncError) -> SubscriptionTarget {
        let fields: [(String, String)]
        switch self {
        case .webhook(let identifier, let context):
            guard identifier != SubscriptionTarget.pushGatewayIdentifier else {
                throw SyncError(.requestFailed, "\(identifier) is the push gateway: subscribe through notifications")
            }
            fields = [("webhook identifier", identifier), ("context", context)]
        case .notifications(let deviceToken):
            fields = [("device token", deviceToken)]
        }
        for (name, text) in fields {
            guard !text.isEmpty, text.utf8.count <= SyncLimits.subscriptionFieldBytesMax else {
                throw SyncError(
                    .requestFailed, "a \(name) holds 1 to \(SyncLimits.subscriptionFieldBytesMax) bytes")
            }
        }
        return self
    }

    /// The id of the one subscription of `client` to `path` through this target: a new subscription with
    /// the same id replaces the old one (at most one per node, client, webhook and context, or per node,
    /// client and device, as Webcom's `DataNode` has it).
    public func subscriptionID(path: Path, client: String) -> String {
        let parts: [String]
        switch self {
        case .webhook(let identifier, let context): parts = ["webhook", client, identifier, context, path.description]
        case .notifications(let deviceToken): parts = ["notifications", client, deviceToken, path.description]
        }
        // Lengths first, so that no two lists of parts join to the same text.
        let text = parts.map { "\($0.utf8.count):\($0)" }.joined()
        return ValueFingerprint.hex(SHA256.hash(data: Array(text.utf8)).prefix(12))
    }
}

/// A client's subscription request over the binary protocol (``ClientCommand/subscribe(_:)``).
public struct SubscriptionRequest: Sendable, Hashable {
    /// What the request does.
    public enum Action: UInt8, Sendable, Hashable {
        /// Adds or replaces the subscription of `path` through `target`.
        case subscribe = 1
        /// Removes it (nothing when there is none).
        case unsubscribe
        /// Removes every subscription of the client of the target's kind: every webhook one for a webhook
        /// target, every notification one for a device (seed 001's `unsubscribeFromAllThroughWebhook` and
        /// `unsubscribeFromAllThroughNotifications`). The path and the target's strings are not read.
        /// Replied with `.ok(count)`.
        case unsubscribeAll
        /// Moves every notification subscription of the client from the target's device token to
        /// ``SubscriptionRequest/newDeviceToken`` (seed 001's `updateDeviceTokenInAllSubscriptions`).
        /// Replied with `.ok(count)`.
        case updateDeviceToken
    }

    /// What the request does.
    public var action: Action
    /// The node subscribed.
    public var path: Path
    /// Where its changes go.
    public var target: SubscriptionTarget
    /// Whether deliveries carry the node's value (else only that it changed).
    public var includesValue: Bool
    /// The device token that replaces the target's, for ``Action/updateDeviceToken``; empty otherwise.
    public var newDeviceToken: String

    /// A request from its parts.
    public init(
        action: Action, path: Path, target: SubscriptionTarget, includesValue: Bool = true, newDeviceToken: String = ""
    ) {
        self.action = action
        self.path = path
        self.target = target
        self.includesValue = includesValue
        self.newDeviceToken = newDeviceToken
    }

    /// Removes every webhook subscription (`webhooks`) or every notification subscription of the client.
    ///
    /// ```swift
    /// let removed = try await client.request(.subscribe(.unsubscribeAll(webhooks: true)))
    /// ```
    public static func unsubscribeAll(webhooks: Bool) -> SubscriptionRequest {
        SubscriptionRequest(
            action: .unsubscribeAll, path: .root,
            target: webhooks ? .webhook(identifier: "*", context: "*") : .notifications(deviceToken: "*"))
    }

    /// Moves every notification subscription of the client from device `old` to device `new`.
    ///
    /// ```swift
    /// let moved = try await client.request(.subscribe(.updateDeviceToken(from: old, to: new)))
    /// ```
    public static func updateDeviceToken(from old: String, to new: String) -> SubscriptionRequest {
        SubscriptionRequest(
            action: .updateDeviceToken, path: .root, target: .notifications(deviceToken: old), newDeviceToken: new)
    }
}

/// A fingerprint of a value (SHA-256 of its canonical JSON, in hex): what a subscription's cursor keeps
/// of the last value delivered, so that a restart tells a change it missed from one it delivered.
public enum ValueFingerprint {
    /// The fingerprint of `value`.
    public static func of(_ value: Value) -> String {
        hex(SHA256.hash(data: Array(value.jsonString().utf8)))
    }

    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { $0 < 16 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }
}
