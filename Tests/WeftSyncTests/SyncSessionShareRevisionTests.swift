import Testing
import WeftCore
@testable import WeftSync

/// A hub revises the decisions it carried to a leaf (``OpProjection``): when an op stamped earlier reaches
/// the hub later and flips one, when the leaf was away as it flipped, and when an origin new to the hub
/// touches the nodes of one. Node 0 is leaf1, node 1 its hub, node 2 a full peer of the hub whose ops reach
/// the hub late.
@Suite struct SyncSessionShareRevisionTests {
    static let order = SyncSessionShareTests.path("/stores/leaf1/order")
    static let stock = SyncSessionShareTests.path("/stores/leaf2/stock")

    /// The hub writes a guarded batch that read leaf2's stock (outside the share) and writes leaf1's order:
    /// the share cannot decide it, and the hub carries its decision.
    static func writeGuardedBatch(_ harness: inout Harness) {
        harness.write(node: 1, .set(.int(1)), at: "/stores/leaf1/opened")
        let read = harness.logs[1].versionVector
        guard let guarded = try? OpKind.guarded(read: read, reads: [stock], writes: [.set(order, .string("hub"))])
        else {
            Issue.record("a guarded batch of one read and one write is valid")
            return
        }
        harness.write(node: 1, guarded.kind, at: guarded.path.description)
    }

    /// Connects node 2 to the hub, as a replica of the whole tree.
    static func connectLatePeer(_ harness: inout Harness) {
        harness.connect(2, 1) { configuration, side in if side == .acceptor { configuration.role = .hub } }
        harness.run()
    }

    static func leafMatchesHub(_ harness: Harness) -> Bool {
        harness.state(0) == SyncSessionShareTests.share.restrict(harness.state(1), at: .root)
    }

    static func revisionsSent(_ harness: Harness, endpoint: Int = 1) -> [Op] {
        harness.endpoints[endpoint].messagesSent.flatMap { message -> [Op] in
            if case .revisions(let ops) = message { return ops.ops }
            return []
        }
    }

    @Test("a late op stamped earlier that makes a carried decision stale reaches the leaf as a revision")
    func lateOpFlipsACarriedDecision() {
        var harness = Harness(nodeCount: 3)
        // Node 2 writes the stock first (its stamp is below the batch's), but reaches the hub only later.
        harness.write(node: 2, .set(.int(0)), at: "/stores/leaf2/stock")
        harness.connect(0, 1, adjust: SyncSessionShareTests.hubAdjust)
        harness.run()
        Self.writeGuardedBatch(&harness)
        harness.run()
        #expect(harness.state(0).value(at: Self.order) == .string("hub"), "the batch applied, as the hub decided")
        Self.connectLatePeer(&harness)
        // The batch had not seen node 2's write of what it read: stale now, on the hub and on the leaf.
        #expect(harness.state(1).value(at: Self.order) == .null)
        #expect(harness.state(0).value(at: Self.order) == .null)
        #expect(Self.leafMatchesHub(harness))
        let revisions = Self.revisionsSent(harness)
        #expect(revisions.count == 1 && revisions.allSatisfy(OpProjection.isWithheld), "\(revisions)")
        #expect(harness.endpoints.allSatisfy { $0.session.phase == .connected })
    }

    @Test("a leaf away while a carried decision flipped gets the revision when it comes back")
    func flipWhileAway() {
        var harness = Harness(nodeCount: 3)
        harness.write(node: 2, .set(.int(0)), at: "/stores/leaf2/stock")
        let leafSession = harness.connect(0, 1, adjust: SyncSessionShareTests.hubAdjust)
        harness.run()
        Self.writeGuardedBatch(&harness)
        harness.run()
        harness.cut(leafSession)
        Self.connectLatePeer(&harness)
        #expect(harness.state(0).value(at: Self.order) == .string("hub"), "away, the leaf keeps the first decision")
        let back = harness.connect(0, 1, adjust: SyncSessionShareTests.hubAdjust)
        harness.run()
        #expect(harness.state(0).value(at: Self.order) == .null)
        #expect(Self.leafMatchesHub(harness))
        #expect(Self.revisionsSent(harness, endpoint: back + 1).count == 1)
    }

    @Test("an origin new to the hub, stamped earlier at a carried decision's node, leaves the decision as it is")
    func newOriginDoesNotReopenADecision() {
        var harness = Harness(nodeCount: 3)
        // Node 2, unknown to the hub when it carries the batch, wrote leaf1's order first.
        harness.write(node: 2, .set(.string("node 2")), at: "/stores/leaf1/order")
        harness.connect(0, 1, adjust: SyncSessionShareTests.hubAdjust)
        harness.run()
        Self.writeGuardedBatch(&harness)
        harness.run()
        Self.connectLatePeer(&harness)
        // On the hub the batch still applies (it read the stock, which node 2 did not write), stamped last.
        #expect(harness.state(1).value(at: Self.order) == .string("hub"))
        #expect(harness.state(0).value(at: Self.order) == .string("hub"))
        #expect(Self.leafMatchesHub(harness))
        // The revision names node 2 as seen, and went before node 2's op.
        let revisions = Self.revisionsSent(harness)
        #expect(revisions.count == 1)
        #expect(revisions.first?.readVector?[Harness.replica(2)] == OpProjection.everySequence)
        let messages = harness.endpoints[1].messagesSent
        let revisionAt = messages.firstIndex { if case .revisions = $0 { true } else { false } }
        let opAt = messages.firstIndex { message in
            if case .ops(let ops) = message { ops.ops.contains { $0.origin == Harness.replica(2) } } else { false }
        }
        #expect(revisionAt != nil && opAt != nil && revisionAt! < opAt!)
    }

    @Test("a hub refuses a revision, and a leaf refuses one of an op it does not hold")
    func revisionsRefused() {
        let whole = Op(
            stamp: Stamp(millis: 5, counter: 0, replica: Harness.replica(0)), sequence: 1,
            path: SyncSessionShareTests.path("/stores/leaf2"), kind: .set(.int(1)))
        let placeholder = OpProjection.withheld(whole, share: SyncSessionShareTests.share)
        var toHub = SyncSessionShareTests.connect()
        let frame = MessageCodec.encode(.revisions(EncodedOps([placeholder])))
        toHub.perform(toHub.endpoints[1].session.onBytesReceived(frame, source: toHub.logs[1], now: toHub.now), at: 1)
        #expect(toHub.endpoints[1].session.closeError?.code == .protocolViolation)
        var toLeaf = SyncSessionShareTests.connect()
        toLeaf.perform(
            toLeaf.endpoints[0].session.onBytesReceived(frame, source: toLeaf.logs[0], now: toLeaf.now), at: 0)
        let refusal = toLeaf.endpoints[0].session.closeError
        #expect(refusal?.code == .protocolViolation)
        #expect(refusal?.message.contains("came before the op") == true, "\(String(describing: refusal))")
    }
}
