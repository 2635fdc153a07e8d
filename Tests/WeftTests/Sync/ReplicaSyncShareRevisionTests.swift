import Testing
import WeftCore
import WeftSync

@_spi(Engine) @testable import Weft

/// Three replicas over real sockets: a hub that files leaf1 under `peer leaf1 readwrite /stores/$name/**`,
/// the leaf, and a replica of the whole tree whose write, stamped first, reaches the hub last. The hub's
/// guarded batch reading leaf2's stock (outside the share) flips to stale; the leaf takes the revision.
@Suite(.timeLimit(.minutes(5))) struct ReplicaSyncShareRevisionTests {
    static let leafToken = "leaf1's peer secret, long enough for a token"
    static let lateToken = "the late peer's secret, long enough for a token"

    static func path(_ text: String) -> Path { (try? Path(text)) ?? .root }

    @Test("a leaf's share follows the hub's when a late op stamped earlier makes a carried batch stale")
    func leafTakesTheRevisionOverSockets() async throws {
        let hub = try ReplicaFixture(.sqlite, seed: 1)
        let leaf = try ReplicaFixture(.sqlite, seed: 2)
        let late = try ReplicaFixture(.memory, seed: 3)
        // The late replica writes leaf2's stock first: its stamp is below the hub's batch.
        late.clock.now = 1_700_000_000_000
        try late.replica.submit(path: Self.path("/stores/leaf2/stock"), kind: .set(.int(0)))
        hub.clock.now = 1_700_000_000_100
        leaf.clock.now = 1_700_000_000_100
        try hub.replica.submit(path: Self.path("/stores/leaf1/opened"), kind: .set(.bool(true)))
        let order = Self.path("/stores/leaf1/order")
        let guarded = try OpKind.guarded(
            read: hub.replica.versionVector, reads: [Self.path("/stores/leaf2/stock")],
            writes: [.set(order, .string("hub"))])
        try hub.replica.submit(path: guarded.path, kind: guarded.kind)

        var rules = PathRules()
        try rules.setKind(.peer, for: "leaf1")
        try rules.add(try PathRule(grant: .readWrite, pattern: "/stores/$name/**"), for: "leaf1")
        var hubBook = TokenBook()
        hubBook.set(try AuthToken(string: Self.leafToken), for: "leaf1")
        hubBook.set(try AuthToken(string: Self.lateToken), for: late.replica.replicaID.description)
        hubBook.rules = rules
        let hubDriver = try SyncDriver(
            target: hub.replica,
            configuration: SyncConfiguration(replica: hub.replica.replicaID, role: .hub, tokens: hubBook),
            logger: SyncFixture.logger(node: 0, logs: nil))
        var leafBook = TokenBook()
        leafBook.set(try AuthToken(string: Self.leafToken), for: hub.replica.replicaID.description)
        var leafConfiguration = SyncConfiguration(replica: leaf.replica.replicaID, role: .peer, tokens: leafBook)
        leafConfiguration.name = "leaf1"
        let leafDriver = try SyncDriver(
            target: leaf.replica, configuration: leafConfiguration, logger: SyncFixture.logger(node: 1, logs: nil))
        var lateBook = TokenBook()
        lateBook.set(try AuthToken(string: Self.lateToken), for: hub.replica.replicaID.description)
        let lateDriver = try SyncDriver(
            target: late.replica,
            configuration: SyncConfiguration(replica: late.replica.replicaID, role: .peer, tokens: lateBook),
            logger: SyncFixture.logger(node: 2, logs: nil))
        func stop() async {
            for driver in [leafDriver, lateDriver, hubDriver] { await driver.shutdown() }
            for fixture in [leaf, late, hub] { await fixture.finish() }
        }
        do {
            let port = try await hubDriver.listen(on: "127.0.0.1", port: 0)
            try await leafDriver.addPeer(host: "127.0.0.1", port: port)
            try await SyncFixture.wait("the leaf to hold the batch as the hub decided it") {
                leaf.replica.value(at: order) == .string("hub")
            }
            try await lateDriver.addPeer(host: "127.0.0.1", port: port)
            try await SyncFixture.wait("the hub to hold the late write") {
                hub.replica.value(at: Self.path("/stores/leaf2/stock")) == .int(0)
            }
            #expect(hub.replica.value(at: order) == .null, "the batch had not seen the stock it read: stale")
            try await SyncFixture.wait("the leaf to take the revision") { leaf.replica.value(at: order) == .null }
            #expect(leaf.replica.snapshot() == (try Value(json: #"{"stores":{"leaf1":{"opened":true}}}"#)))
            #expect(leafDriver.status.peers.first?.isConnected == true, "the session goes on")
        } catch {
            await stop()
            throw error
        }
        await stop()
    }
}
