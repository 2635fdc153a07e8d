import Foundation
import Testing
import WeftHTTPTestSupport

/// A real `weft serve --http --webhooks` delivering to a real receiver: subscriptions made over REST and
/// the binary protocol, signatures, retries after the receiver fails, and delivery after a kill -9.
@Suite(.serialized, .timeLimit(.minutes(5))) struct HTTPWebhookIntegrationTests {
    static let secret = "the hook's signing secret, 32 b."

    /// Polls `condition` every 20 ms, at most `seconds`, suspending between polls: the receiver answers
    /// on the same cooperative threads, which a blocking wait could starve.
    static func waitUntil(_ what: String, seconds: Double = 20, _ condition: () async throws -> Bool) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        if try await condition() { return }
        throw WeftBinary.Failure(description: "timed out after \(seconds) s waiting for \(what)")
    }

    /// The unlabelled samples of `/metrics`, by name.
    static func metrics(_ server: HTTPRESTIntegrationTests.Server) async throws -> [String: Double] {
        let reply = try await server.send("GET", "/metrics", token: nil)
        var samples: [String: Double] = [:]
        for line in reply.body.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let value = Double(parts[1]) { samples[String(parts[0])] = value }
        }
        return samples
    }

    @Test func deliveriesAreSignedRetriedAndSurviveAKill() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let receiver = WebhookReceiver()
        let port = try await receiver.start()
        let hooks = try scratch.write("webhooks", "# test hooks\nhook http://127.0.0.1:\(port)/hook \(Self.secret)\n")
        let options = ["--webhooks", hooks, "--webhook-retry-base", "20"]
        var server = try await HTTPRESTIntegrationTests.Server(scratch, options: options)
        defer { server.daemon.stop() }

        // Over REST, and through `weft subscribe` (the binary protocol).
        var reply = try await server.send(
            "POST", "/.subscriptions.json", body: #"{"path":"/orders","webhook":"hook","context":"shop-42"}"#)
        #expect(reply.status == 200, "\(reply.body)")
        let id = try #require(reply.body.split(separator: "\"").dropFirst(3).first.map(String.init))
        let cli = try await DaemonIntegrationTests.client(
            server.daemon, name: "hub", ["subscribe", "/alerts", "--webhook", "hook", "--context", "cli"])
        #expect(cli.status == 0, "\(cli.stderr)")
        let unknown = try await DaemonIntegrationTests.client(
            server.daemon, name: "hub", ["subscribe", "/alerts", "--webhook", "nope", "--context", "cli"])
        #expect(unknown.status != 0 && unknown.stderr.contains("no webhook nope"))
        reply = try await server.send(
            "POST", "/.subscriptions.json", body: #"{"path":"/private","webhook":"hook","context":"x"}"#,
            token: HTTPRESTIntegrationTests.aliceToken)
        #expect(reply.status == 401)
        reply = try await server.send("POST", "/.subscriptions.json", body: #"{"path":"/orders"}"#)
        #expect(reply.status == 400)
        let listed = try await DaemonIntegrationTests.client(server.daemon, name: "hub", ["subscribe", "--list"])
        // Both belong to the token entry "client", whichever protocol made them; alice's refused one is absent.
        #expect(listed.stdout.contains(#""context":"cli""#) && listed.stdout.contains(#""context":"shop-42""#))
        #expect(!listed.stdout.contains("/private"))

        // A change is delivered, signed.
        _ = try await server.send("PUT", "/orders/a.json", body: "1")
        try await Self.waitUntil("the first delivery") { !receiver.deliveries.isEmpty }
        let first = receiver.deliveries[0]
        #expect(first.isSigned(with: Self.secret))
        #expect(first.id == "\(id):1")
        #expect(first.json["context"] as? String == "shop-42")
        // The op stamp of the PUT: one, in the 22-character text form.
        #expect((first.json["stamps"] as? [String])?.map(\.count) == [22])

        // The receiver fails: the daemon retries, and `weft status` shows the subscription failing.
        receiver.failing = true
        _ = try await server.send("PUT", "/orders/b.json", body: "2")
        try await Self.waitUntil("a failing subscription") {
            let status = try await DaemonIntegrationTests.client(server.daemon, name: "hub", ["status"]).stdout
            return status.contains(#""failingCount":1"#)
        }
        receiver.failing = false
        try await Self.waitUntil("the missed change") {
            (receiver.deliveries.last?.json["value"] as? [String: Int]) == ["a": 1, "b": 2]
        }
        #expect(receiver.deliveries.last?.id == "\(id):2")
        // /metrics counts the two deliveries, the failed attempts, and no failing subscription once it recovered.
        let deadline = Date().addingTimeInterval(20)
        var metrics = try await Self.metrics(server)
        while metrics["weft_webhook_deliveries_total"] != 2 || metrics["weft_subscriptions_failing"] != 0,
            Date() < deadline
        {
            try await Task.sleep(for: .milliseconds(20))
            metrics = try await Self.metrics(server)
        }
        #expect(metrics["weft_webhook_deliveries_total"] == 2 && metrics["weft_subscriptions_failing"] == 0)
        #expect(metrics["weft_webhook_failures_total"] ?? 0 >= Double(5))
        #expect(metrics["weft_subscriptions"] == 2)

        // A change the receiver has not taken when the daemon is killed is delivered after the restart.
        receiver.failing = true
        let attempts = receiver.attempts
        _ = try await server.send("PUT", "/orders/c.json", body: "3")
        try await Self.waitUntil("an attempt") { receiver.attempts > attempts }
        _ = server.daemon.stop()
        receiver.failing = false
        server = try await HTTPRESTIntegrationTests.Server(scratch, options: options)
        try await Self.waitUntil("the change after the restart") {
            (receiver.deliveries.last?.json["value"] as? [String: Int]) == ["a": 1, "b": 2, "c": 3]
        }
        // At least once, in order: a delivery whose answer the daemon did not hear in time (a loaded
        // machine) goes out again under the same id before the next one (Docs/HTTP.md, "Guarantees").
        var ids: [String] = []
        for delivery in receiver.deliveries where delivery.id.hasPrefix(id) && ids.last != delivery.id {
            ids.append(delivery.id)
        }
        #expect(ids == ["\(id):1", "\(id):2", "\(id):3"])
        #expect(receiver.deliveries.allSatisfy { $0.isSigned(with: Self.secret) })
        await receiver.stop()
    }

    @Test func aReloadThatTakesReadAccessAwayRefusesTheSubscriptionUntilItComesBack() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let receiver = WebhookReceiver()
        let port = try await receiver.start()
        let hooks = try scratch.write("webhooks", "hook http://127.0.0.1:\(port)/hook \(Self.secret)\n")
        let server = try await HTTPRESTIntegrationTests.Server(scratch, options: ["--webhooks", hooks, "--webhook-retry-base", "20"])
        defer { server.daemon.stop() }
        let alice = HTTPRESTIntegrationTests.aliceToken
        func contexts(_ context: String) -> [[String: Any]] {
            receiver.deliveries.map(\.json).filter { $0["context"] as? String == context }
        }

        // alice may read /public: her subscription delivers; the admin's on the same node is the control.
        for (token, context) in [(alice, "alice"), (HTTPRESTIntegrationTests.adminToken, "admin")] {
            let reply = try await server.send(
                "POST", "/.subscriptions.json", body: #"{"path":"/public","webhook":"hook","context":"\#(context)"}"#,
                token: token)
            #expect(reply.status == 200, "\(reply.body)")
        }
        _ = try await server.send("PUT", "/public/a.json", body: "1")
        try await Self.waitUntil("both first deliveries") { contexts("alice").count == 1 && contexts("admin").count == 1 }

        // The reload takes /public from alice: her subscription is refused, visible in weft status.
        _ = try scratch.write("rules-hub", "client alice readwrite /users/$name/**\n")
        kill(server.daemon.process.processIdentifier, SIGHUP)
        try await Self.waitUntil("the refused subscription in weft status") {
            let status = try await DaemonIntegrationTests.client(server.daemon, name: "hub", ["status"]).stdout
            return status.contains(#""refusedCount":1"#) && status.contains("no read access to /public for alice")
        }
        // A change reaches the admin's subscription and not alice's.
        _ = try await server.send("PUT", "/public/b.json", body: "2")
        try await Self.waitUntil("the admin's second delivery") {
            (contexts("admin").last?["value"] as? [String: Int]) == ["a": 1, "b": 2]
        }
        #expect(contexts("alice").count == 1)
        let listed = try await server.send("GET", "/.subscriptions.json", token: alice)
        #expect(listed.body.contains(#""refused":"#), "\(listed.body)")

        // Access comes back with the next reload: the latest value goes out, and the mark is lifted.
        _ = try scratch.write("rules-hub", "client alice readwrite /users/$name/**\nclient alice read /public/**\n")
        kill(server.daemon.process.processIdentifier, SIGHUP)
        try await Self.waitUntil("alice's delivery after the access came back") {
            (contexts("alice").last?["value"] as? [String: Int]) == ["a": 1, "b": 2]
        }
        let status = try await DaemonIntegrationTests.client(server.daemon, name: "hub", ["status"]).stdout
        #expect(status.contains(#""refusedCount":0"#))
        await receiver.stop()
    }

    @Test func removingAllAndMovingADeviceWorkOverRESTAndTheCLI() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        // Nothing changes the nodes, so nothing is delivered: the URLs need not answer.
        let hooks = try scratch.write(
            "webhooks", "hook http://127.0.0.1:9/hook \(Self.secret)\npush-gateway http://127.0.0.1:9/push \(Self.secret)\n")
        let server = try await HTTPRESTIntegrationTests.Server(scratch, options: ["--webhooks", hooks])
        defer { server.daemon.stop() }
        func subscribe(_ body: String, token: String = HTTPRESTIntegrationTests.adminToken) async throws {
            let reply = try await server.send("POST", "/.subscriptions.json", body: body, token: token)
            #expect(reply.status == 200, "\(reply.body)")
        }
        func cli(_ arguments: [String]) async throws -> String {
            let run = try await DaemonIntegrationTests.client(server.daemon, name: "hub", ["subscribe"] + arguments)
            #expect(run.status == 0, "\(run.stderr)")
            return run.stdout
        }
        for node in ["/a", "/b"] { try await subscribe(#"{"path":"\#(node)","webhook":"hook","context":"x"}"#) }
        for node in ["/c", "/d"] { try await subscribe(#"{"path":"\#(node)","deviceToken":"d1"}"#) }
        // alice's own subscription is never touched by the admin's bulk requests.
        try await subscribe(
            #"{"path":"/users/alice","deviceToken":"d1"}"#, token: HTTPRESTIntegrationTests.aliceToken)

        // Moving the device: over REST, then through the CLI (the binary protocol).
        var reply = try await server.send(
            "PATCH", "/.subscriptions.json", body: #"{"deviceToken":"d1","newDeviceToken":"d2"}"#)
        #expect(reply.status == 200 && reply.body == #"{"updated":2}"#, "\(reply.body)")
        #expect(try await cli(["--device-token", "d2", "--new-device-token", "d3"]) == #"{"updated":2}"#)
        #expect(try await cli(["--list"]).components(separatedBy: #""deviceToken":"d3""#).count == 3)

        // Removing all of a kind: notifications through the CLI, webhooks over REST.
        #expect(try await cli(["--remove-all", "notifications"]) == #"{"removed":2}"#)
        reply = try await server.send("DELETE", "/.subscriptions.json", body: #"{"all":"webhooks"}"#)
        #expect(reply.status == 200 && reply.body == #"{"removed":2}"#, "\(reply.body)")
        try await subscribe(#"{"path":"/a","webhook":"hook","context":"again"}"#)
        #expect(try await cli(["--remove-all", "webhooks"]) == #"{"removed":1}"#)
        #expect(!(try await cli(["--list"]).contains("path")))
        let alices = try await server.send("GET", "/.subscriptions.json", token: HTTPRESTIntegrationTests.aliceToken)
        #expect(alices.body.contains(#""deviceToken":"d1""#), "\(alices.body)")

        // Bad requests are refused with a clear error.
        reply = try await server.send("PATCH", "/.subscriptions.json", body: #"{"deviceToken":"d1"}"#)
        #expect(reply.status == 400)
        reply = try await server.send("DELETE", "/.subscriptions.json", body: #"{"all":"everything"}"#)
        #expect(reply.status == 400)
        reply = try await server.send(
            "PATCH", "/.subscriptions.json", body: #"{"deviceToken":"d1","newDeviceToken":""}"#,
            token: HTTPRESTIntegrationTests.aliceToken)
        #expect(reply.status == 400)
        let bad = try await DaemonIntegrationTests.client(server.daemon, name: "hub", ["subscribe", "--remove-all", "everything"])
        #expect(bad.status != 0)
    }
}
