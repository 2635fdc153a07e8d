import Foundation
import WeftCore
import WeftStore
import WeftSync

/// A replica's webhook and notification subscriptions and their delivery cursors, kept in its file
/// (in memory for a replica in memory), read from it on first use.
///
/// The book decides nothing about time or the network: a deliverer (the daemon's `WebhookDeliverer`)
/// asks it which deliveries are due, then records what the receiver answered.
///
/// ```swift
/// let book = replica.subscriptions
/// for subscription in try book.all() where subscription.delivery.isFailing { print(subscription.id) }
/// ```
public final class SubscriptionBook: @unchecked Sendable {
    private let lock = NSLock()
    private var store: (any SubscriptionStore)?
    private var loaded = false
    private var byID: [String: DataSubscription] = [:]
    private var declared: Set<String>?
    private var listeners: [UUID: @Sendable () -> Void] = [:]

    init() {}

    /// Keeps the book in `store` from now on (nil keeps it in memory).
    func attach(_ store: (any SubscriptionStore)?) {
        lock.withLock { self.store = store }
    }

    /// Limits new subscriptions to these webhook identifiers (the daemon's `--webhooks` file, where the
    /// push gateway's identifier allows notifications); nil accepts any identifier.
    public func declareWebhooks(_ identifiers: Set<String>?) {
        lock.withLock { declared = identifiers }
    }

    /// Calls `listener` after each change of the book (a subscription added, removed or updated).
    public func addListener(_ listener: @escaping @Sendable () -> Void) -> UUID {
        let id = UUID()
        lock.withLock { listeners[id] = listener }
        return id
    }

    /// Stops calling the listener added under `id`.
    public func removeListener(_ id: UUID) {
        _ = lock.withLock { listeners.removeValue(forKey: id) }
    }

    // MARK: - Reads

    /// Every subscription, ordered by id.
    /// - Throws: `WeftError` with code `storage` when the file cannot be read.
    public func all() throws -> [DataSubscription] {
        try lock.withLock {
            try loadLocked()
            return byID.values.sorted { $0.id < $1.id }
        }
    }

    /// The subscription with `id`, or nil.
    public func subscription(_ id: String) throws -> DataSubscription? {
        try lock.withLock {
            try loadLocked()
            return byID[id]
        }
    }

    // MARK: - Subscribing

    /// Adds the subscription of `client` to `path` through `target`, replacing the one with the same node,
    /// client and target. Its first delivery is the first change after `current` (the value now), and
    /// lists the stamps of the ops that `vector` (the replica's when `current` was read) does not cover.
    /// - Throws: `WeftError` `invalidValue` for an empty or too long field, or an identifier the daemon did
    ///   not declare; `storage` when the file cannot be written; `rejected` past ``WeftLimits/subscriptionsMax``.
    @discardableResult
    public func subscribe(
        path: Path, client: String, target: SubscriptionTarget, descriptor: DataSubscriptionDescriptor,
        current: Value, vector: VersionVector = VersionVector()
    ) throws -> DataSubscription {
        do {
            _ = try target.validated()
        } catch {
            throw WeftError(.invalidValue, error.message, path: path.description)
        }
        let subscription = DataSubscription(
            path: path, client: client, target: target, descriptor: descriptor,
            delivery: SubscriptionDelivery(deliveredFingerprint: ValueFingerprint.of(current), deliveredVector: vector))
        try changing {
            if let declared, !declared.contains(target.webhookIdentifier) {
                let what =
                    if case .notifications = target { "no push gateway is declared (\(target.webhookIdentifier))" } else {
                        "no webhook \(target.webhookIdentifier) is declared"
                    }
                throw WeftError(.invalidValue, "\(what); the daemon's --webhooks file names them", path: path.description)
            }
            guard byID[subscription.id] != nil || byID.count < WeftLimits.subscriptionsMax else {
                throw WeftError(.rejected, "at most \(WeftLimits.subscriptionsMax) subscriptions per replica")
            }
            try persist { try $0.saveSubscription(Self.stored(subscription)) }
            byID[subscription.id] = subscription
        }
        return subscription
    }

    /// Removes the subscription of `client` to `path` through `target`; false when there was none.
    @discardableResult
    public func unsubscribe(path: Path, client: String, target: SubscriptionTarget) throws -> Bool {
        let id = target.subscriptionID(path: path, client: client)
        return try remove { $0.id == id } > 0
    }

    /// Removes every subscription of `client` through a webhook (`webhooks`) or through notifications.
    /// Returns how many.
    @discardableResult
    public func unsubscribeAll(client: String, webhooks: Bool) throws -> Int {
        try remove { subscription in
            guard subscription.client == client else { return false }
            if case .webhook = subscription.target { return webhooks }
            return !webhooks
        }
    }

    /// Moves every notification subscription of `client` from device `old` to device `new`, keeping each
    /// one's cursor. Returns how many.
    @discardableResult
    public func updateDeviceToken(client: String, from old: String, to new: String) throws -> Int {
        let target = SubscriptionTarget.notifications(deviceToken: new)
        do {
            _ = try target.validated()
        } catch {
            throw WeftError(.invalidValue, error.message)
        }
        return try changing {
            let moving = byID.values.filter { $0.client == client && $0.target == .notifications(deviceToken: old) }
            var moved: [DataSubscription] = []
            for subscription in moving {
                var renewed = DataSubscription(
                    path: subscription.path, client: client, target: target, descriptor: subscription.descriptor,
                    delivery: subscription.delivery)
                renewed.delivery.pendingFingerprint = nil
                moved.append(renewed)
            }
            try persist { store in
                try store.deleteSubscriptions(ids: moving.map(\.id))
                for subscription in moved { try store.saveSubscription(Self.stored(subscription)) }
            }
            for subscription in moving { byID[subscription.id] = nil }
            for subscription in moved { byID[subscription.id] = subscription }
            return moved.count
        }
    }

    // MARK: - Delivering

    /// Starts a delivery of the value whose fingerprint is `fingerprint`: the sequence to send, stored
    /// before it is sent. The same unacknowledged value keeps its sequence (a retry, or a restart, sends
    /// the same delivery id); a new value gets the next one. Nil when the subscription is gone.
    public func beginDelivery(_ id: String, fingerprint: String) throws -> UInt64? {
        try changing(notify: false) {
            guard var subscription = byID[id] else { return nil }
            if subscription.delivery.pendingFingerprint == fingerprint, subscription.delivery.sequence > 0 {
                return subscription.delivery.sequence
            }
            subscription.delivery.sequence += 1
            subscription.delivery.pendingFingerprint = fingerprint
            try persist { try $0.saveSubscriptionCursor(id: id, cursor: subscription.cursorValue) }
            byID[id] = subscription
            return subscription.delivery.sequence
        }
    }

    /// Records that the receiver acknowledged delivery `sequence` of the value `fingerprint`, read at the
    /// replica's `vector` (nil keeps the vector of the previous delivery).
    public func recordDelivered(_ id: String, sequence: UInt64, fingerprint: String, vector: VersionVector? = nil)
        throws
    {
        try changing {
            guard var subscription = byID[id], subscription.delivery.sequence == sequence else { return }
            subscription.delivery.deliveredFingerprint = fingerprint
            if let vector { subscription.delivery.deliveredVector = vector }
            subscription.delivery.pendingFingerprint = nil
            subscription.delivery.delivered += 1
            subscription.delivery.failures = 0
            subscription.delivery.isFailing = false
            subscription.delivery.lastError = nil
            subscription.delivery.nextAttemptMillis = 0
            try persist { try $0.saveSubscriptionCursor(id: id, cursor: subscription.cursorValue) }
            byID[id] = subscription
        }
    }

    /// Records a failed attempt: the next is not made before `retryAtMillis`; after
    /// ``WeftLimits/subscriptionFailuresBeforeFailing`` in a row the subscription shows as failing.
    public func recordFailure(_ id: String, error: String, retryAtMillis: Int64) throws {
        try changing {
            guard var subscription = byID[id] else { return }
            subscription.delivery.failures += 1
            subscription.delivery.lastError = error
            subscription.delivery.nextAttemptMillis = retryAtMillis
            let wasFailing = subscription.delivery.isFailing
            subscription.delivery.isFailing = subscription.delivery.failures >= WeftLimits.subscriptionFailuresBeforeFailing
            byID[id] = subscription
            // Every failure is counted in memory; the file learns the count when it matters to `weft status`
            // after a restart (the subscription turns failing), not at each retry.
            if subscription.delivery.isFailing != wasFailing || subscription.delivery.failures == 1 {
                try persist { try $0.saveSubscriptionCursor(id: id, cursor: subscription.cursorValue) }
            }
        }
    }

    /// Marks the subscription refused for `refusal` (its client lost read access to its node), or, with
    /// nil, lifts the mark: deliveries stop while it is set, and the first one after it is lifted carries
    /// the node's latest value. Nothing is written when the mark does not change.
    public func recordRefusal(_ id: String, refusal: String?) throws {
        let changed = try lock.withLock { () throws -> Bool in
            try loadLocked()
            return byID[id].map { $0.delivery.refusal != refusal } ?? false
        }
        guard changed else { return }
        try changing {
            guard var subscription = byID[id] else { return }
            subscription.delivery.refusal = refusal
            try persist { try $0.saveSubscriptionCursor(id: id, cursor: subscription.cursorValue) }
            byID[id] = subscription
        }
    }

    // MARK: - Status

    /// For `weft status`: how many subscriptions there are, how many deliveries were acknowledged, and
    /// the failing ones and the refused ones.
    public func statusValue() -> Value {
        guard let all = try? all() else { return .object(["error": .string("the subscriptions cannot be read")]) }
        var failing: [Key: Value] = [:]
        var refused: [Key: Value] = [:]
        for subscription in all {
            if subscription.delivery.isFailing { failing["\(failing.count)"] = subscription.statusValue }
            if subscription.delivery.refusal != nil { refused["\(refused.count)"] = subscription.statusValue }
        }
        var fields: [Key: Value] = [
            "count": .int(Int64(all.count)), "failingCount": .int(Int64(failing.count)),
            "refusedCount": .int(Int64(refused.count)),
            "delivered": .int(Int64(clamping: all.reduce(0) { $0 &+ $1.delivery.delivered })),
        ]
        if !failing.isEmpty { fields["failing"] = .object(failing) }
        if !refused.isEmpty { fields["refused"] = .object(refused) }
        return .object(fields)
    }

    // MARK: - Storage

    private func remove(where shouldRemove: (DataSubscription) -> Bool) throws -> Int {
        try changing {
            let ids = byID.values.filter(shouldRemove).map(\.id)
            guard !ids.isEmpty else { return 0 }
            try persist { try $0.deleteSubscriptions(ids: ids) }
            for id in ids { byID[id] = nil }
            return ids.count
        }
    }

    /// Runs `body` under the lock with the book loaded, then tells the listeners.
    private func changing<T>(notify: Bool = true, _ body: () throws -> T) throws -> T {
        let (result, toCall) = try lock.withLock { () throws -> (T, [@Sendable () -> Void]) in
            try loadLocked()
            return (try body(), notify ? Array(listeners.values) : [])
        }
        for listener in toCall { listener() }
        return result
    }

    private func persist(_ body: (any SubscriptionStore) throws -> Void) throws {
        guard let store else { return }
        do {
            try body(store)
        } catch {
            throw WeftError(.storage, "the subscriptions could not be stored: \(error)")
        }
    }

    private func loadLocked() throws {
        guard !loaded else { return }
        if let store {
            let rows: [StoredSubscription]
            do {
                rows = try store.subscriptions()
            } catch {
                throw WeftError(.storage, "the subscriptions could not be read: \(error)")
            }
            for row in rows {
                let fields = StoredSubscriptionFields(id: row.id, definition: row.definition, cursor: row.cursor)
                // A row this version cannot read is left in the file, untouched, rather than dropped.
                guard let subscription = DataSubscription(stored: fields) else { continue }
                byID[subscription.id] = subscription
            }
        }
        loaded = true
    }

    private static func stored(_ subscription: DataSubscription) -> StoredSubscription {
        StoredSubscription(id: subscription.id, definition: subscription.definitionValue, cursor: subscription.cursorValue)
    }
}
