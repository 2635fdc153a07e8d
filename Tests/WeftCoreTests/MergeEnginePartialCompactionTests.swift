import Testing
import WeftTestSupport

@testable import WeftCore

/// A replica holding a hub's share of the tree holds partial ops, some of them decisions the hub may
/// still revise. It folds them only by installing its hub's base: its own compaction stops below the
/// first one, and it installs the hub's base even when it holds every op of it.
@Suite struct MergeEnginePartialCompactionTests {
    static let leaf = ReplicaID(rawValue: 7)!
    static let hub = ReplicaID(rawValue: 9)!

    static func path(_ text: String) -> Path { (try? Path(text)) ?? .root }

    /// The leaf's own write, the hub's placeholder of an op outside the share, the hub's carried decision
    /// (a partial guarded batch, applied), and the leaf's write after both.
    static func ops() throws -> (own: Op, placeholder: Op, decision: Op, later: Op) {
        let own = try Op.make(.set(.int(1)), at: "/stores/leaf1/mark", origin: leaf, millis: 1_000, sequence: 1)
        let placeholder = Op(
            stamp: Stamp(millis: 1_001, counter: 0, replica: hub), sequence: 1, path: path("/stores"),
            kind: .guardedBatch(read: VersionVector(), reads: [path("/stores")], writes: []), isPartial: true)
        let order = path("/stores/leaf1/order")
        let decision = Op(
            stamp: Stamp(millis: 1_002, counter: 0, replica: hub), sequence: 2, path: order,
            kind: .guardedBatch(
                read: VersionVector([hub: OpProjection.everySequence, leaf: OpProjection.everySequence]),
                reads: [order], writes: [.set(order, .string("hub"))]),
            isPartial: true)
        let later = try Op.make(.set(.int(2)), at: "/stores/leaf1/late", origin: leaf, millis: 1_003, sequence: 2)
        return (own, placeholder, decision, later)
    }

    @Test func anEngineCountsThePartialOpsItHolds() throws {
        let (own, placeholder, decision, later) = try Self.ops()
        let engine = MergeEngine(registry: FunctionRegistry())
        engine.apply([own, later])
        #expect(!engine.holdsPartialOps)
        engine.apply([placeholder, decision])
        #expect(engine.holdsPartialOps)
        // A revision replaces a partial op by another: still held.
        let rejected = Op(
            stamp: decision.stamp, sequence: decision.sequence, path: decision.path,
            kind: .guardedBatch(read: VersionVector(), reads: [decision.path], writes: []), isPartial: true)
        let revised = try #require(try engine.revising([rejected], baseVector: VersionVector()))
        #expect(revised.engine.holdsPartialOps)
        #expect(revised.engine.state.value(at: decision.path) == .null)
        // Folded by compaction, they are gone.
        engine.compact(upTo: later.stamp)
        #expect(!engine.holdsPartialOps)
    }

    @Test func compactionStopsBelowTheFirstPartialOp() throws {
        let (own, placeholder, decision, later) = try Self.ops()
        let engine = MergeEngine(registry: FunctionRegistry())
        engine.apply([own, placeholder, decision, later])
        #expect(engine.compactionFrontier(upTo: later.stamp) == own.stamp)
        #expect(engine.compact(upTo: own.stamp) == 1)
        #expect(engine.compactionFrontier(upTo: later.stamp) == nil, "nothing before the placeholder is left")
        #expect(engine.state.value(at: decision.path) == .string("hub"))
    }

    @Test func aShareInstallsItsHubsBaseEvenHoldingEveryOpOfIt() throws {
        let (own, placeholder, decision, later) = try Self.ops()
        let engine = MergeEngine(registry: FunctionRegistry())
        engine.apply([own, placeholder, decision, later])
        // The hub folded the same ops and decided the batch stale since: its base lacks the order.
        let base = CompactedBase(
            value: try Value(json: #"{"stores":{"leaf1":{"mark":1}}}"#),
            vector: VersionVector([Self.leaf: 1, Self.hub: 2]), stampFrontier: decision.stamp, touches: [])
        let install = try #require(
            try engine.installing(base, local: Self.leaf, localBaseVector: VersionVector(), acknowledgedThrough: 1) {
                preconditionFailure("nothing is stamped again")
            })
        #expect(install.folded == 3)
        #expect(install.kept == 1)
        #expect(install.engine.state == (try Value(json: #"{"stores":{"leaf1":{"late":2,"mark":1}}}"#)))
        #expect(!install.engine.holdsPartialOps)
        // Its own base already holding the hub's, there is nothing to install, partial ops or not.
        let next = Op(
            stamp: Stamp(millis: 1_004, counter: 0, replica: Self.hub), sequence: 3, path: Self.path("/stores"),
            kind: .guardedBatch(read: VersionVector(), reads: [Self.path("/stores")], writes: []), isPartial: true)
        install.engine.apply([next])
        #expect(install.engine.holdsPartialOps)
        let again = try install.engine.installing(
            base, local: Self.leaf, localBaseVector: base.vector, acknowledgedThrough: 1
        ) { preconditionFailure("nothing is stamped again") }
        #expect(again == nil)
    }

    @Test func anEngineHoldingEveryOpOfABaseInstallsItToStampAgainOwnOpsItsSenderRefused() throws {
        // The leaf wrote `own` offline, stamped below the hub's compaction; the hub refused it, and its
        // base holds every other op the leaf has (none partial).
        let own = try Op.make(.set(.int(1)), at: "/stores/leaf1/mark", origin: Self.leaf, millis: 1_000, sequence: 1)
        let hubOp = try Op.make(.set(.int(2)), at: "/stores/leaf1/hub", origin: Self.hub, millis: 1_005, sequence: 1)
        let engine = MergeEngine(registry: FunctionRegistry())
        engine.apply([own, hubOp])
        let base = CompactedBase(
            value: try Value(json: #"{"stores":{"leaf1":{"hub":2}}}"#), vector: VersionVector([Self.hub: 1]),
            stampFrontier: hubOp.stamp, touches: [])
        #expect(engine.strandsOwnOps(of: Self.leaf, outside: base.vector, through: base.stampFrontier))
        var next = Stamp(millis: 2_000, counter: 0, replica: Self.leaf)
        let install = try #require(
            try engine.installing(base, local: Self.leaf, localBaseVector: VersionVector(), acknowledgedThrough: 0) {
                next = Stamp(millis: next.millis + 1, counter: 0, replica: Self.leaf)
                return next
            })
        #expect(install.restamped.map(\.sequence) == [1])
        #expect(install.restamped.allSatisfy { $0.stamp > hubOp.stamp })
        #expect(install.engine.state == (try Value(json: #"{"stores":{"leaf1":{"hub":2,"mark":1}}}"#)))
        // Nothing stranded: an engine holding every op installs nothing, as before.
        let whole = MergeEngine(registry: FunctionRegistry())
        whole.apply([hubOp])
        #expect(try whole.installing(base, local: Self.leaf, localBaseVector: VersionVector(), acknowledgedThrough: 0) {
            preconditionFailure("nothing is stamped again")
        } == nil)
    }
}
