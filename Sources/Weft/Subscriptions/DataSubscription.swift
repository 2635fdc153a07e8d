import WeftCore
import WeftSync

@_exported import enum WeftSync.SubscriptionTarget

/// What a subscription asks of its deliveries (Webcom's `DataSubscriptionDescriptor`).
///
/// ```swift
/// let pingOnly = DataSubscriptionDescriptor(includesValue: false)
/// ```
public struct DataSubscriptionDescriptor: Sendable, Hashable {
    /// Whether each delivery carries the node's value (the latest one: changes between two deliveries are
    /// coalesced); else a delivery only says that the node changed.
    public var includesValue: Bool

    /// A descriptor; by default deliveries carry the value.
    public init(includesValue: Bool = true) { self.includesValue = includesValue }
}

/// A webhook or notification subscription of a node, kept in the replica's file with its delivery cursor.
///
/// ```swift
/// let subscription = try replica.root.child("orders").subscribeThroughWebhook("shop", context: "eu-1")
/// print(subscription.id, subscription.delivery.isFailing)
/// ```
public struct DataSubscription: Sendable, Hashable {
    /// The id: the same node, client and target always give the same id (a new subscription replaces the old).
    public let id: String
    /// The subscribed node.
    public let path: Path
    /// The client that subscribed: a token entry's name, or ``localClient`` for the embedded API.
    public let client: String
    /// Where its changes go.
    public let target: SubscriptionTarget
    /// What its deliveries carry.
    public let descriptor: DataSubscriptionDescriptor
    /// How its deliveries stand.
    public internal(set) var delivery: SubscriptionDelivery

    /// The client name of subscriptions made through ``DataNode`` in the process that owns the replica.
    public static let localClient = "local"

    init(path: Path, client: String, target: SubscriptionTarget, descriptor: DataSubscriptionDescriptor,
         delivery: SubscriptionDelivery) {
        self.id = target.subscriptionID(path: path, client: client)
        self.path = path
        self.client = client
        self.target = target
        self.descriptor = descriptor
        self.delivery = delivery
    }
}

/// A subscription's delivery cursor: what was delivered last, the delivery in flight, and its failures.
///
/// A delivery's id is `<subscription id>:<sequence>`. The sequence and the fingerprint of the value it
/// carries are stored *before* it is sent, and the value delivered is recorded once the receiver answered
/// 2xx: a daemon killed in between sends the same id again with the same value (at least once, with an id
/// to deduplicate), and a value that changed meanwhile goes out under the next sequence.
public struct SubscriptionDelivery: Sendable, Hashable {
    /// The fingerprint (``ValueFingerprint``) of the value last delivered, or seen at subscription.
    public var deliveredFingerprint: String
    /// The replica's version vector when that value was read: the next delivery lists the stamps of the
    /// ops related to the node that it does not cover (see ``Replica/changes(at:since:stampsMax:scanMax:)``).
    public var deliveredVector = VersionVector()
    /// The last sequence given to a delivery (0: none yet).
    public var sequence: UInt64 = 0
    /// The fingerprint of the value the delivery `sequence` carries while it is not acknowledged.
    public var pendingFingerprint: String?
    /// Deliveries acknowledged.
    public var delivered: UInt64 = 0
    /// Failed attempts since the last success.
    public var failures: Int = 0
    /// Set after ``WeftLimits/subscriptionFailuresBeforeFailing`` failures in a row, cleared by a success.
    public var isFailing = false
    /// Why the last attempt failed.
    public var lastError: String?
    /// Not before this time (milliseconds since 1970) is the next attempt made; 0 for at once.
    public var nextAttemptMillis: Int64 = 0
    /// Why the subscription is refused: its client can no longer read its node (a reload of the rules or
    /// tokens took the access away). Nothing is delivered while it is set; nil when deliveries go on.
    public var refusal: String?

    init(deliveredFingerprint: String, deliveredVector: VersionVector = VersionVector()) {
        self.deliveredFingerprint = deliveredFingerprint
        self.deliveredVector = deliveredVector
    }
}

// MARK: - Stored form

extension DataSubscription {
    var definitionValue: Value {
        var fields: [Key: Value] = [
            "path": .string(path.description), "client": .string(client),
            "includesValue": .bool(descriptor.includesValue),
        ]
        switch target {
        case .webhook(let identifier, let context):
            fields["webhook"] = .string(identifier)
            fields["context"] = .string(context)
        case .notifications(let deviceToken):
            fields["deviceToken"] = .string(deviceToken)
        }
        return .object(fields)
    }

    init?(stored: StoredSubscriptionFields) {
        guard case .object(let fields) = stored.definition,
            case .string(let pathText)? = fields["path"], let path = try? Path(pathText),
            case .string(let client)? = fields["client"],
            case .object(let cursor) = stored.cursor,
            case .string(let delivered)? = cursor["deliveredFingerprint"]
        else { return nil }
        let target: SubscriptionTarget
        if case .string(let identifier)? = fields["webhook"], case .string(let context)? = fields["context"] {
            target = .webhook(identifier: identifier, context: context)
        } else if case .string(let device)? = fields["deviceToken"] {
            target = .notifications(deviceToken: device)
        } else {
            return nil
        }
        let includesValue = fields["includesValue"] != .bool(false)
        var delivery = SubscriptionDelivery(deliveredFingerprint: delivered)
        delivery.sequence = cursor["sequence"].flatMap(Self.unsigned) ?? 0
        delivery.delivered = cursor["delivered"].flatMap(Self.unsigned) ?? 0
        if case .string(let pending)? = cursor["pendingFingerprint"] { delivery.pendingFingerprint = pending }
        delivery.failures = Int(cursor["failures"].flatMap(Self.unsigned) ?? 0)
        delivery.isFailing = cursor["failing"] == .bool(true)
        if case .string(let error)? = cursor["lastError"] { delivery.lastError = error }
        if case .string(let refusal)? = cursor["refused"] { delivery.refusal = refusal }
        if case .object(let vector)? = cursor["deliveredVector"] {
            var entries: [ReplicaID: UInt64] = [:]
            for (key, sequence) in vector {
                guard let origin = ReplicaID(hex: key.description), let sequence = Self.unsigned(sequence) else { continue }
                entries[origin] = sequence
            }
            delivery.deliveredVector = VersionVector(entries)
        }
        self.init(
            path: path, client: client, target: target,
            descriptor: DataSubscriptionDescriptor(includesValue: includesValue), delivery: delivery)
        guard id == stored.id else { return nil }
    }

    private static func unsigned(_ value: Value) -> UInt64? {
        if case .int(let number) = value, number >= 0 { return UInt64(number) }
        return nil
    }

    var cursorValue: Value {
        var fields: [Key: Value] = [
            "deliveredFingerprint": .string(delivery.deliveredFingerprint),
            "sequence": .int(Int64(clamping: delivery.sequence)),
            "delivered": .int(Int64(clamping: delivery.delivered)),
            "failures": .int(Int64(delivery.failures)), "failing": .bool(delivery.isFailing),
        ]
        if let pending = delivery.pendingFingerprint { fields["pendingFingerprint"] = .string(pending) }
        if let error = delivery.lastError { fields["lastError"] = .string(error) }
        if let refusal = delivery.refusal { fields["refused"] = .string(refusal) }
        if !delivery.deliveredVector.entries.isEmpty {
            fields["deliveredVector"] = .object(
                Dictionary(
                    uniqueKeysWithValues: delivery.deliveredVector.entries.map {
                        (Key(unchecked: $0.key.description), Value.int(Int64(clamping: $0.value)))
                    }))
        }
        return .object(fields)
    }

    /// The subscription as `weft status` and `weft subscribe --list` show it.
    public var statusValue: Value {
        guard case .object(var fields) = definitionValue else { return .null }
        fields["id"] = .string(id)
        fields["sequence"] = .int(Int64(clamping: delivery.sequence))
        fields["delivered"] = .int(Int64(clamping: delivery.delivered))
        fields["failures"] = .int(Int64(delivery.failures))
        fields["failing"] = .bool(delivery.isFailing)
        if let error = delivery.lastError { fields["lastError"] = .string(error) }
        if let refusal = delivery.refusal { fields["refused"] = .string(refusal) }
        return .object(fields)
    }
}

/// A stored row's parts, as read from the store.
struct StoredSubscriptionFields {
    let id: String
    let definition: Value
    let cursor: Value
}
