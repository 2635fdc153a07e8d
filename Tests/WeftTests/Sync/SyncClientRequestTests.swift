import Logging
import Testing
import WeftCore
import WeftSync

@_spi(Engine) @testable import Weft

@Suite(.timeLimit(.minutes(5))) struct SyncClientRequestTests {
    static let clientToken = try! AuthToken(string: "the command line's own secret")

    /// A hub for node 0 that serves clients named "cli", introducing itself as "hub".
    static func hub() throws -> (SyncDriver, EngineTarget) {
        let target = EngineTarget(node: 0)
        var configuration = SyncFixture.configuration(node: 0, others: [1])
        configuration.name = "hub"
        configuration.tokens.set(clientToken, for: "cli")
        return (try SyncDriver(target: target, configuration: configuration, clients: target), target)
    }

    /// A client's write was answered once applied in memory: a daemon killed right after the reply lost a
    /// write the command line had reported done (up to 163 ms of them, under load, with `.full`).
    @Test func aClientWriteIsAnsweredOnceItIsDurable() async throws {
        let fixture = try ReplicaFixture(.sqlite) { options in options.groupCommitDelayMilliseconds = 100 }
        let replica = fixture.replica
        try await replica.waitUntilLoaded()
        var tokens = TokenBook()
        tokens.set(Self.clientToken, for: "cli")
        let configuration = SyncConfiguration(replica: replica.replicaID, role: .hub, name: "hub", tokens: tokens)
        let hub = try SyncDriver(replica: replica, configuration: configuration, logger: Logger(label: "test"))
        let port = try await hub.listen(on: "127.0.0.1", port: 0)
        let client = try await SyncClient.connect(
            host: "127.0.0.1", port: port, name: "cli", token: Self.clientToken, serverName: "hub")
        let own = replica.replicaID
        let writes: [ClientCommand] = [
            .set(try Path("/a"), .int(1)),
            .merge(try Path("/b"), [MergeChild(relative: try Path("c"), value: .int(2))]),
            .push(try Path("/log"), .string("x")),
            .increment(try Path("/n"), by: .int(3), from: .int(0)),
        ]
        for (index, write) in writes.enumerated() {
            _ = try await client.request(write)
            #expect(replica.durableVersionVector[own] >= UInt64(index + 1), "\(write) was answered before durable")
        }
        await client.close()
        await hub.shutdown()
        await fixture.finish()
    }

    /// Each driver made on a replica left a listener behind that flushed the replica at every change,
    /// long after the driver shut down: an app that reconnects by making drivers piled them up.
    @Test func aDriverShutDownLeavesNoListenerOnItsReplica() async throws {
        let fixture = try ReplicaFixture(.sqlite)
        let replica = fixture.replica
        try await replica.waitUntilLoaded()
        let before = replica.notifier.listenerCount
        for _ in 0..<3 {
            let configuration = SyncConfiguration(
                replica: replica.replicaID, role: .peer, name: "app", tokens: TokenBook())
            let driver = try SyncDriver(replica: replica, configuration: configuration, logger: Logger(label: "test"))
            _ = try await driver.listen(on: "127.0.0.1", port: 0)
            await driver.shutdown()
            // The app may keep its driver object: shutting it down is what lets go of the replica.
            withExtendedLifetime(driver) {}
        }
        #expect(replica.notifier.listenerCount == before)
        await fixture.finish()
    }

    @Test func aClientReadsAndWritesEveryKindOfOpThroughTheDaemon() async throws {
        let (hub, target) = try Self.hub()
        let port = try await hub.listen(on: "127.0.0.1", port: 0)
        let client = try await SyncClient.connect(
            host: "127.0.0.1", port: port, name: "cli", token: Self.clientToken, serverName: "hub")
        do {
            try await client.request(.set(try Path("/users/ada"), .object(["name": .string("Ada")])))
            try await client.request(
                .merge(try Path("/users/ada"), [MergeChild(relative: try Path("born"), value: .int(1815))]))
            #expect(try await client.request(.increment(try Path("/visits"), by: .int(5), from: .int(0))) == .int(5))
            #expect(try await client.request(.increment(try Path("/visits"), by: .int(2), from: .int(0))) == .int(7))
            let key = try await client.request(.push(try Path("/log"), .string("first")))
            guard case .string(let pushKey) = key else { throw WaitTimeout(what: "a push key", milliseconds: 0) }
            #expect(pushKey.count == PushID.length)
            #expect(try await client.request(.get(try Path("/users/ada/born"))) == .int(1815))
            #expect(try await client.request(.get(try Path("/users/ada/name"))) == .string("Ada"))
            #expect(try await client.request(.get(try Path("/visits"))) == .int(7))
            #expect(try target.value(at: "/log/\(pushKey)") == .string("first"))
            #expect(try await client.request(.get(try Path("/absent"))) == .null)
            // A merge of nothing is refused, as `DataNode.merge` refuses it, and the session goes on.
            let ada = try Path("/users/ada")
            do {
                _ = try await client.request(.merge(ada, []))
                Issue.record("an empty merge was accepted")
            } catch {
                #expect(error.message.hasPrefix("requestFailed"), "\(error)")
                #expect(error.message.contains("merge needs at least one member"), "\(error)")
            }
            #expect(try await client.request(.get(try Path("/users/ada/born"))) == .int(1815))
        } catch {
            await client.close()
            await hub.shutdown()
            throw error
        }
        await client.close()
        await hub.shutdown()
    }

    @Test func aWatchSeesTheCurrentValueThenEveryChangeIncludingOnesFromPeers() async throws {
        let (hub, target) = try Self.hub()
        let peerTarget = EngineTarget(node: 1)
        var peerConfiguration = SyncFixture.configuration(node: 1, others: [])
        peerConfiguration.tokens.set(SyncFixture.token(0, 1), for: "hub")
        let peer = try SyncDriver(target: peerTarget, configuration: peerConfiguration)
        let port = try await hub.listen(on: "127.0.0.1", port: 0)
        let client = try await SyncClient.connect(
            host: "127.0.0.1", port: port, name: "cli", token: Self.clientToken, serverName: "hub")
        let seen = LogRecorder()
        do {
            try target.write(.set(.int(1)), at: "/score")
            try await client.watch(try Path("/score")) { value in seen.record("\(value)") }
            try await SyncFixture.wait("the first event") { seen.messages == ["\(Value.int(1))"] }
            try target.write(.increment(by: .int(1), from: .int(0)), at: "/score")
            try target.write(.set(.string("unrelated")), at: "/elsewhere")
            try await SyncFixture.wait("a local change") { seen.messages.count == 2 }
            try await peer.addPeer(host: "127.0.0.1", port: port)
            try peerTarget.write(.increment(by: .int(10), from: .int(0)), at: "/score")
            try await SyncFixture.wait("a change from a peer") { seen.messages.last == "\(Value.int(12))" }
            #expect(seen.messages == ["\(Value.int(1))", "\(Value.int(2))", "\(Value.int(12))"])
        } catch {
            await client.close()
            for driver in [hub, peer] { await driver.shutdown() }
            throw error
        }
        await client.close()
        for driver in [hub, peer] { await driver.shutdown() }
    }

    @Test func aClientWithTheWrongTokenGetsAnAuthenticationError() async throws {
        let (hub, _) = try Self.hub()
        let port = try await hub.listen(on: "127.0.0.1", port: 0)
        await #expect(throws: WeftError.self) {
            _ = try await SyncClient.connect(
                host: "127.0.0.1", port: port, name: "cli", token: try AuthToken(string: "a guess, and a wrong one"),
                serverName: "hub")
        }
        let wrong = try AuthToken(string: "a guess, and a wrong one")
        do {
            _ = try await SyncClient.connect(
                host: "127.0.0.1", port: port, name: "cli", token: wrong, serverName: "hub")
            Issue.record("a wrong token was accepted")
        } catch {
            #expect(error.code == .authentication)
        }
        await hub.shutdown()
    }

    @Test func aClientDialingNothingGetsATypedError() async throws {
        do {
            _ = try await SyncClient.connect(
                host: "127.0.0.1", port: 1, name: "cli", token: Self.clientToken, serverName: "hub",
                timeoutMilliseconds: 2_000)
            Issue.record("connecting to a closed port succeeded")
        } catch {
            #expect(error.code == .sync)
            #expect(error.message.contains("127.0.0.1:1"))
        }
    }
}
