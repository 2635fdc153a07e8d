import Foundation
import Logging
import Testing
import Weft
import WeftHTTP
import WeftHTTPTestSupport

/// The deliverer against a real local receiver, over a replica in a temporary file.
@Suite(.serialized, .timeLimit(.minutes(5))) struct WebhookDeliveryTests {
    static let secret = "a webhook secret of 32 bytes ok!"

    /// A scratch directory, a replica in it, a receiver, and a deliverer with fast retries.
    final class Fixture: @unchecked Sendable {
        let directory: String
        var replica: Replica
        let receiver = WebhookReceiver()
        var deliverer: WebhookDeliverer?
        var port = 0

        init() async throws {
            directory = NSTemporaryDirectory() + "weft-hooks-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            replica = try Replica.open(at: directory + "/db.sqlite")
            try await replica.waitUntilLoaded()
            port = try await receiver.start()
        }

        func startDeliverer() {
            let endpoint = WebhookEndpoint(
                identifier: "hook", url: URL(string: "http://127.0.0.1:\(port)/hook")!,
                secret: Array(WebhookDeliveryTests.secret.utf8))
            var logger = Logger(label: "test")
            logger.logLevel = .critical
            let deliverer = WebhookDeliverer(
                replica: replica, endpoints: [endpoint], logger: logger,
                policy: WebhookRetryPolicy(baseMillis: 5, capMillis: 20), jitter: { 0.5 })
            deliverer.start()
            self.deliverer = deliverer
        }

        func reopen() async throws {
            await deliverer?.stop()
            deliverer = nil
            await replica.shutdown()
            replica = try Replica.open(at: directory + "/db.sqlite")
            try await replica.waitUntilLoaded()
        }

        /// Writes `json` at `path`; answers the write's stamp (its text, as deliveries list it).
        @discardableResult
        func set(_ path: String, _ json: String) async throws -> String {
            guard let node = replica.node(for: path) else { throw WeftError(.invalidPath, path) }
            return try await node.set(json: json).stamp.text
        }

        func close() async {
            await deliverer?.stop()
            await receiver.stop()
            await replica.shutdown()
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    static func withFixture(_ body: (Fixture) async throws -> Void) async throws {
        let fixture = try await Fixture()
        do {
            try await body(fixture)
        } catch {
            await fixture.close()
            throw error
        }
        await fixture.close()
    }

    @Test("the retry delay doubles from its base, stops at its cap, and jitter keeps it in the upper half")
    func retryPolicyBacksOffBoundedly() {
        let policy = WebhookRetryPolicy(baseMillis: 100, capMillis: 1_000)
        #expect(policy.delayMillis(afterFailures: 1, jitter: 1) == 100)
        #expect(policy.delayMillis(afterFailures: 2, jitter: 1) == 200)
        #expect(policy.delayMillis(afterFailures: 4, jitter: 1) == 800)
        #expect(policy.delayMillis(afterFailures: 5, jitter: 1) == 1_000)
        #expect(policy.delayMillis(afterFailures: 500, jitter: 1) == 1_000)
        #expect(policy.delayMillis(afterFailures: 2, jitter: 0) == 100)
        #expect(policy.delayMillis(afterFailures: 2, jitter: 0.5) == 150)
    }

    @Test("a change of a subscribed node reaches the receiver signed, with its context, value and op stamp")
    func deliversSignedChanges() async throws {
        try await Self.withFixture { fixture in
            let orders = try #require(fixture.replica.node(for: "/orders"))
            // Made before the subscription: its stamp is not the delivery's.
            try await fixture.set("/orders/z", "0")
            let subscription = try orders.subscribeThroughWebhook("hook", context: "shop-42")
            fixture.startDeliverer()
            // Unrelated to /orders: not delivered, not listed.
            try await fixture.set("/other", "1")
            let stamp = try await fixture.set("/orders/a", #"{"qty": 2}"#)
            try await eventually("a delivery") { !fixture.receiver.deliveries.isEmpty }
            let delivery = try #require(fixture.receiver.deliveries.first)
            #expect(delivery.isSigned(with: Self.secret))
            #expect(!delivery.isSigned(with: "another secret entirely, 32 b!"))
            #expect(delivery.id == "\(subscription.id):1")
            let json = delivery.json
            #expect(json["context"] as? String == "shop-42")
            #expect(json["webhook"] as? String == "hook")
            #expect(json["path"] as? String == "/orders")
            #expect(((json["value"] as? [String: Any])?["a"] as? [String: Any])?["qty"] as? Int == 2)
            #expect(json["stamps"] as? [String] == [stamp])
            #expect(json["stampsComplete"] as? Bool == true)
            // Nothing new: nothing more is sent.
            try await Task.sleep(for: .milliseconds(50))
            #expect(fixture.receiver.deliveries.count == 1)
        }
    }

    @Test("a receiver that fails is retried until it answers, shows as failing meanwhile, and gets the latest value")
    func retriesUntilTheReceiverComesBack() async throws {
        try await Self.withFixture { fixture in
            let subscription = try #require(fixture.replica.node(for: "/counter"))
                .subscribeThroughWebhook("hook", context: "c")
            fixture.receiver.failing = true
            fixture.startDeliverer()
            var stamps = [try await fixture.set("/counter", "1")]
            // A generous bound: the first failed attempt waits for a receiver that shares a loaded machine.
            try await eventually("failing", seconds: 30) {
                try fixture.replica.subscriptions.subscription(subscription.id)?.delivery.isFailing == true
            }
            #expect(fixture.replica.subscriptions.statusValue().jsonString().contains(#""failingCount":1"#))
            stamps.append(try await fixture.set("/counter", "2"))
            stamps.append(try await fixture.set("/counter", "3"))
            fixture.receiver.failing = false
            try await eventually("the latest value") { fixture.receiver.deliveries.last?.json["value"] as? Int == 3 }
            // The deliveries that got through list the stamp of each change once, in order (one delivery,
            // unless a retry read before the last write was answered once the receiver came back).
            let listed = fixture.receiver.deliveries.flatMap { $0.json["stamps"] as? [String] ?? [] }
            #expect(listed == stamps)
            #expect(fixture.receiver.attempts >= WeftLimits.subscriptionFailuresBeforeFailing)
            // The receiver records the delivery before the deliverer reads its answer and clears the cursor.
            try await eventually("the failing flag cleared") {
                let after = try fixture.replica.subscriptions.subscription(subscription.id)
                return after?.delivery.isFailing == false && after?.delivery.failures == 0
            }
        }
    }

    @Test("subscriptions and cursors survive a reopen: a change made meanwhile is delivered, once")
    func deliversWhatAReopenMissed() async throws {
        try await Self.withFixture { fixture in
            let node = try #require(fixture.replica.node(for: "/inbox"))
            let subscription = try node.subscribeThroughNotifications(deviceToken: "device-1")
            // A gateway for notifications, then a change while no deliverer runs.
            try await fixture.set("/inbox/m1", #""hello""#)
            try await fixture.reopen()
            let reopened = try #require(try fixture.replica.subscriptions.subscription(subscription.id))
            #expect(reopened.target == .notifications(deviceToken: "device-1"))
            let endpoint = WebhookEndpoint(
                identifier: SubscriptionTarget.pushGatewayIdentifier,
                url: URL(string: "http://127.0.0.1:\(fixture.port)/hook")!, secret: Array(Self.secret.utf8))
            var logger = Logger(label: "test")
            logger.logLevel = .critical
            let deliverer = WebhookDeliverer(replica: fixture.replica, endpoints: [endpoint], logger: logger)
            deliverer.start()
            fixture.deliverer = deliverer
            try await eventually("the missed change") { fixture.receiver.deliveries.count == 1 }
            #expect(fixture.receiver.deliveries[0].json["deviceToken"] as? String == "device-1")
            // Delivered and recorded: a second reopen sends nothing again.
            try await fixture.reopen()
            fixture.startDeliverer()
            try await Task.sleep(for: .milliseconds(100))
            #expect(fixture.receiver.deliveries.count == 1)
        }
    }

    @Test("a delivery begun and not acknowledged keeps its id across a reopen; a new value takes the next")
    func unacknowledgedDeliveriesKeepTheirID() async throws {
        try await Self.withFixture { fixture in
            let subscription = try #require(fixture.replica.node(for: "/a")).subscribeThroughWebhook("hook", context: "x")
            let book = fixture.replica.subscriptions
            #expect(try book.beginDelivery(subscription.id, fingerprint: "one") == 1)
            #expect(try book.beginDelivery(subscription.id, fingerprint: "one") == 1)
            try await fixture.reopen()
            let reopened = fixture.replica.subscriptions
            #expect(try reopened.beginDelivery(subscription.id, fingerprint: "one") == 1)
            #expect(try reopened.beginDelivery(subscription.id, fingerprint: "two") == 2)
            try reopened.recordDelivered(subscription.id, sequence: 2, fingerprint: "two")
            #expect(try reopened.subscription(subscription.id)?.delivery.delivered == 1)
        }
    }

    @Test("one subscription per node, client and target: the second replaces the first; unknown webhooks are refused")
    func subscriptionsReplaceAndValidate() async throws {
        try await Self.withFixture { fixture in
            let node = try #require(fixture.replica.node(for: "/a"))
            let first = try node.subscribeThroughWebhook("hook", context: "x")
            let second = try node.subscribeThroughWebhook("hook", context: "x", descriptor: .init(includesValue: false))
            #expect(first.id == second.id)
            #expect(try fixture.replica.subscriptions.all().count == 1)
            #expect(try fixture.replica.subscriptions.all().first?.descriptor.includesValue == false)
            _ = try node.subscribeThroughWebhook("hook", context: "y")
            #expect(throws: WeftError.self) { try node.subscribeThroughWebhook("", context: "x") }
            fixture.replica.subscriptions.declareWebhooks(["hook"])
            #expect(throws: WeftError.self) { try node.subscribeThroughWebhook("other", context: "x") }
            #expect(throws: WeftError.self) { try node.subscribeThroughNotifications(deviceToken: "d") }
            try node.unsubscribeThroughWebhook("hook", context: "x")
            #expect(try fixture.replica.unsubscribeFromAllThroughWebhook() == 1)
            #expect(try fixture.replica.subscriptions.all().isEmpty)
        }
    }

    @Test("a node's changes list the latest stamps related to it, and say when some are left out")
    func changesListTheLatestRelatedStamps() async throws {
        try await Self.withFixture { fixture in
            let since = fixture.replica.versionVector
            let parent = try await fixture.set("/shop", #"{"a": 1}"#)
            let child = try await fixture.set("/shop/orders/x", "1")
            try await fixture.set("/elsewhere", "1")
            let own = try await fixture.set("/shop/orders", #"{"x": 2}"#)
            let orders = try Path("/shop/orders")
            let all = fixture.replica.changes(at: orders, since: since)
            // An ancestor's write, a descendant's and its own: related; /elsewhere is not.
            #expect(all.stamps.map(\.text) == [parent, child, own])
            #expect(all.isComplete)
            #expect(all.value == .object(["x": .int(2)]))
            let capped = fixture.replica.changes(at: orders, since: since, stampsMax: 2)
            #expect(capped.stamps.map(\.text) == [child, own])
            #expect(!capped.isComplete)
            // Since the vector of that read: nothing new.
            #expect(fixture.replica.changes(at: orders, since: all.vector).stamps.isEmpty)
        }
    }

    @Test("a device's new token replaces the old in each of its subscriptions, keeping their cursors")
    func deviceTokensMoveAndNotificationsAreRemovedTogether() async throws {
        try await Self.withFixture { fixture in
            let inbox = try #require(fixture.replica.node(for: "/inbox"))
            let alerts = try #require(fixture.replica.node(for: "/alerts"))
            try inbox.subscribeThroughNotifications(deviceToken: "old")
            try alerts.subscribeThroughNotifications(deviceToken: "old")
            try alerts.subscribeThroughNotifications(deviceToken: "other")
            try inbox.subscribeThroughWebhook("hook", context: "kept")
            #expect(try fixture.replica.updateDeviceTokenInAllSubscriptions(from: "old", to: "new") == 2)
            let devices = try fixture.replica.subscriptions.all().compactMap { subscription -> String? in
                if case .notifications(let device) = subscription.target { return device }
                return nil
            }
            #expect(devices.sorted() == ["new", "new", "other"])
            #expect(throws: WeftError.self) { try fixture.replica.updateDeviceTokenInAllSubscriptions(from: "new", to: "") }
            #expect(try fixture.replica.unsubscribeFromAllThroughNotifications() == 3)
            #expect(try fixture.replica.subscriptions.all().map(\.target) == [.webhook(identifier: "hook", context: "kept")])
        }
    }
}
