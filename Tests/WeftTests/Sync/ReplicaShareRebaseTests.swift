import Testing
import WeftCore
import WeftSync

@_spi(Engine) @testable import Weft

@Suite(.timeLimit(.minutes(5))) struct ReplicaShareRebaseTests {
    static let leafToken = "leaf1's peer secret, long enough for a token"
    static let order = path("/stores/leaf1/order")
    static let mark = path("/stores/leaf1/mark")

    static func path(_ text: String) -> Path { (try? Path(text)) ?? .root }

    /// The hub's side: leaf1 reads and writes its own store only.
    static func hubConfiguration(_ hub: Replica) throws -> SyncConfiguration {
        var rules = PathRules()
        try rules.setKind(.peer, for: "leaf1")
        try rules.add(try PathRule(grant: .readWrite, pattern: "/stores/$name/**"), for: "leaf1")
        var book = TokenBook()
        book.set(try AuthToken(string: leafToken), for: "leaf1")
        book.rules = rules
        return SyncConfiguration(replica: hub.replicaID, role: .hub, tokens: book)
    }

    /// The leaf's side, towards `other` (which files it as leaf1).
    static func leafConfiguration(_ leaf: Replica, towards other: Replica) throws -> SyncConfiguration {
        var book = TokenBook()
        book.set(try AuthToken(string: leafToken), for: other.replicaID.description)
        var configuration = SyncConfiguration(replica: leaf.replicaID, role: .peer, tokens: book)
        configuration.name = "leaf1"
        return configuration
    }

    /// The leaf writes its mark first (stamped early); the hub then writes a guarded batch that read the
    /// mark and leaf2's stock (outside the share) without having seen the leaf's write. The session
    /// carries the batch to the leaf as applied, then the leaf's mark reaches the hub, which turns the
    /// batch stale; the revision is lost with the connection. The hub then compacts past both.
    static func carriedDecisionFlippedWhileAway(_ hub: ReplicaFixture, _ leaf: ReplicaFixture) async throws {
        leaf.clock.now = 1_700_000_000_000
        try leaf.replica.submit(path: mark, kind: .set(.int(1)))
        try await leaf.replica.flush()
        hub.clock.now = 1_700_000_000_100
        leaf.clock.now = 1_700_000_000_100
        try hub.replica.submit(path: path("/stores/leaf2/stock"), kind: .set(.int(5)))
        let guarded = try OpKind.guarded(
            read: hub.replica.versionVector, reads: [mark, path("/stores/leaf2/stock")],
            writes: [.set(order, .string("hub"))])
        try hub.replica.submit(path: guarded.path, kind: guarded.kind)
        try await hub.replica.flush()

        var pair = try SessionPair(
            leaf, try leafConfiguration(leaf.replica, towards: hub.replica), hub, try hubConfiguration(hub.replica))
        // The hellos, the proof, then the welcome with the hub's ops: they reach the leaf while the leaf's
        // mark, sent as the leaf became ready, still waits for the hub.
        for endpoint in [1, 0, 1, 0] { try await pair.deliver(to: endpoint) }
        #expect(leaf.replica.value(at: order) == .string("hub"), "carried as the hub decided it then")
        try await pair.deliver(to: 1)
        #expect(hub.replica.value(at: mark) == .int(1))
        #expect(hub.replica.value(at: order) == .null, "the batch had not seen the mark it read: stale")
        pair.cut()
        #expect(leaf.replica.value(at: order) == .string("hub"), "the revision was lost with the connection")

        guard let last = hub.replica.ops(from: hub.replica.replicaID, after: 0, limit: 10).last else {
            Issue.record("the hub holds its batch")
            return
        }
        hub.replica.markStable(through: last.stamp)
        let report = try await hub.replica.compact()
        #expect(report.opsFolded == 3, "the mark, the stock and the batch")
    }

    @Test("a leaf away while its hub re-decided a carried op and compacted past it takes the hub's base")
    func rebaseAfterCompaction() async throws {
        let hub = try ReplicaFixture(.memory, seed: 1)
        let leaf = try ReplicaFixture(.sqlite, seed: 2)
        try await Self.carriedDecisionFlippedWhileAway(hub, leaf)
        // The leaf compacts its own log no further than the partial op: its mark folds, the batch stays.
        leaf.replica.markStable(through: Stamp(millis: 1_700_000_001_000, counter: 0, replica: leaf.replica.replicaID))
        let own = try await leaf.replica.compact()
        #expect(own.opsFolded == 1, "the leaf's mark only")
        #expect(leaf.replica.value(at: Self.order) == .string("hub"))

        var pair = try SessionPair(
            leaf, try Self.leafConfiguration(leaf.replica, towards: hub.replica), hub,
            try Self.hubConfiguration(hub.replica))
        try await pair.settle()
        #expect(pair.endpoints.allSatisfy { !$0.isClosed }, "\(pair.endpoints.map(\.closed))")
        #expect(pair.endpoints[0].snapshots == 1, "the share of the hub's base, once")
        #expect(leaf.replica.value(at: Self.order) == .null, "the hub's decision, from its base")
        #expect(leaf.replica.snapshot() == (try Value(json: #"{"stores":{"leaf1":{"mark":1}}}"#)))
        #expect(leaf.replica.compactionStamp == hub.replica.compactionStamp, "the leaf took the hub's base")
        #expect(leaf.replica.ops(from: hub.replica.replicaID, after: 0, limit: 10).isEmpty, "the batch folded")

        // Reopened, the leaf keeps the hub's base; a new session sends no second snapshot.
        try await leaf.replica.flush()
        try await leaf.reopen()
        #expect(leaf.replica.value(at: Self.order) == .null)
        var again = try SessionPair(
            leaf, try Self.leafConfiguration(leaf.replica, towards: hub.replica), hub,
            try Self.hubConfiguration(hub.replica))
        let before = leaf.replica.compactionStamp
        try await again.settle()
        #expect(leaf.replica.compactionStamp == before)
        #expect(again.endpoints[0].snapshots == 0, "the leaf holds the hub's base already")
        #expect(again.endpoints.allSatisfy { !$0.isClosed })
        await leaf.finish()
        await hub.finish()
    }

    @Test("a replica of the whole tree refuses a leaf before any op flows, and the leaf learns why")
    func fullReplicaRefusesALeaf() async throws {
        let hub = try ReplicaFixture(.memory, seed: 1)
        let leaf = try ReplicaFixture(.memory, seed: 2)
        let full = try ReplicaFixture(.memory, seed: 3)
        try await Self.carriedDecisionFlippedWhileAway(hub, leaf)
        #expect(leaf.replica.holdsShare)
        full.clock.now = 1_700_000_000_200
        try full.replica.submit(path: Self.path("/stores/leaf2/stock"), kind: .set(.int(9)))
        try await full.replica.flush()
        var book = TokenBook()
        book.set(try AuthToken(string: Self.leafToken), for: "leaf1")
        let fullConfiguration = SyncConfiguration(replica: full.replica.replicaID, role: .peer, tokens: book)
        let before = leaf.replica.versionVector
        var pair = try SessionPair(
            leaf, try Self.leafConfiguration(leaf.replica, towards: full.replica), full, fullConfiguration)
        try await pair.settle()
        for endpoint in pair.endpoints {
            #expect(endpoint.closed?.code == .roleMismatch, "\(String(describing: endpoint.closed))")
        }
        #expect(pair.endpoints[1].closed?.message.contains("holds only its share of the tree") == true)
        #expect(leaf.replica.versionVector == before, "the leaf took no op from the whole replica")
        #expect(full.replica.value(at: Self.mark) == .null, "nor did the whole replica take the leaf's")
        await full.finish()
        await leaf.finish()
        await hub.finish()
    }
}
