import Testing
import WeftCore
import WeftSync

@_spi(Engine) @testable import Weft

/// Seeded runs of a hub, leaf1 (limited to `/stores/leaf1/**`) and a replica of the whole tree whose
/// ops reach the hub late (stamped earlier), joined by a session the test delivers, cuts and redials at
/// random while the hub compacts: once everything is delivered, the leaf holds exactly its share of the
/// hub's tree. Carried decisions flip while the leaf is away, and the hub compacts past them.
@Suite(.timeLimit(.minutes(5))) struct ReplicaShareRebasePropertyTests {
    static let inShare = ["/stores/leaf1/a", "/stores/leaf1/b", "/stores/leaf1/c"].map(ReplicaShareRebaseTests.path)
    static let outside = ["/stores/leaf2/a", "/stores/leaf2/b", "/users/u"].map(ReplicaShareRebaseTests.path)

    /// What a run did, summed over the seeds.
    struct Tally {
        var ops = 0
        var cuts = 0
        var compactions = 0
        var snapshots = 0
        var restamps = 0
    }

    struct Run {
        let hub: ReplicaFixture
        let leaf: ReplicaFixture
        let writer: ReplicaFixture
        var generator: SeededGenerator
        var pair: SessionPair
        /// The writer's ops the hub holds.
        var delivered: UInt64 = 0
        var tally = Tally()

        init(seed: UInt64) async throws {
            hub = try ReplicaFixture(.memory, seed: 1)
            leaf = try ReplicaFixture(.memory, seed: 2)
            writer = try ReplicaFixture(.memory, seed: 3)
            generator = SeededGenerator(seed: seed)
            for fixture in [hub, leaf, writer] { fixture.clock.now = 1_700_000_000_000 }
            pair = try Self.connect(hub: hub, leaf: leaf)
        }

        static func connect(hub: ReplicaFixture, leaf: ReplicaFixture) throws -> SessionPair {
            try SessionPair(
                leaf, try ReplicaShareRebaseTests.leafConfiguration(leaf.replica, towards: hub.replica), hub,
                try ReplicaShareRebaseTests.hubConfiguration(hub.replica))
        }

        mutating func pick(_ paths: [Path]) -> Path { paths[Int(generator.below(UInt64(paths.count)))] }

        mutating func value() -> Value { .int(Int64(generator.below(100))) }

        /// One write: the hub's (sets anywhere, guarded batches that read outside the share, which it
        /// carries to the leaf), the leaf's (in its share), or the writer's (anywhere, stamped a little
        /// in the past, reaching the hub later).
        mutating func write() throws {
            tally.ops += 1
            switch generator.below(6) {
            case 0, 1:
                let read = [pick(ReplicaShareRebasePropertyTests.outside), pick(ReplicaShareRebasePropertyTests.inShare)]
                let guarded = try OpKind.guarded(
                    read: hub.replica.versionVector, reads: read, writes: [.set(pick(ReplicaShareRebasePropertyTests.inShare), value())])
                try hub.replica.submit(path: guarded.path, kind: guarded.kind)
            case 2:
                try hub.replica.submit(path: pick(ReplicaShareRebasePropertyTests.inShare + ReplicaShareRebasePropertyTests.outside), kind: .set(value()))
            case 3:
                try leaf.replica.submit(path: pick(ReplicaShareRebasePropertyTests.inShare), kind: .set(value()))
            default:
                writer.clock.now = hub.clock.now - generator.below(40)
                try writer.replica.submit(path: pick(ReplicaShareRebasePropertyTests.inShare + ReplicaShareRebasePropertyTests.outside), kind: .set(value()))
            }
            let step = generator.below(5) + 1
            for fixture in [hub, leaf] { fixture.clock.now += step }
        }

        /// Hands the hub the writer's ops it lacks (the writer is a member: the hub compacts only what it
        /// holds), or some of them.
        mutating func deliverWriter(all: Bool) async throws {
            let ops = writer.replica.ops(from: writer.replica.replicaID, after: delivered, limit: 1_000)
            guard !ops.isEmpty else { return }
            let count = all ? ops.count : Int(generator.below(UInt64(ops.count))) + 1
            _ = try hub.replica.applyRemote(Array(ops.prefix(count)))
            delivered = ops[count - 1].sequence
            try await pair.logsMoved()
        }

        /// Folds everything the hub holds into its base, as a member's acks would let it.
        mutating func compactHub() async throws {
            try await deliverWriter(all: true)
            var latest: Stamp?
            for origin in hub.replica.versionVector.entries.keys {
                if let last = hub.replica.ops(from: origin, after: 0, limit: .max).last {
                    latest = max(latest ?? last.stamp, last.stamp)
                }
            }
            guard let latest else { return }
            hub.replica.markStable(through: latest)
            if try await hub.replica.compact(vacuum: false).opsFolded > 0 { tally.compactions += 1 }
            try await pair.logsMoved()
        }

        mutating func redial() async throws {
            pair.cut()
            tally.snapshots += pair.endpoints[0].snapshots
            if pair.needsResync { tally.restamps += 1 }
            try await hub.replica.flush()
            try await leaf.replica.flush()
            pair = try Self.connect(hub: hub, leaf: leaf)
        }

        mutating func step() async throws {
            switch generator.below(10) {
            case 0..<4: try write()
            case 4, 5, 6: try await pair.deliver(to: Int(generator.below(2)))
            case 7: try await deliverWriter(all: false)
            case 8: try await compactHub()
            default:
                tally.cuts += 1
                try await redial()
            }
            try await leaf.replica.flush()
            try await hub.replica.flush()
            try await pair.logsMoved()
            if pair.needsResync || !pair.isOpen { try await redial() }
        }

        /// Everything delivered, on a fresh session.
        mutating func finish() async throws {
            try await deliverWriter(all: true)
            for _ in 0..<5 {
                try await redial()
                try await pair.settle()
                if !pair.needsResync && pair.isOpen { break }
            }
            tally.snapshots += pair.endpoints[0].snapshots
        }
    }

    @Test("the leaf ends with exactly its share of the hub's tree, seed by seed")
    func leafConvergesToItsShare() async throws {
        var total = Tally()
        for seed in UInt64(1)...100 {
            var run = try await Run(seed: seed)
            for _ in 0..<80 { try await run.step() }
            try await run.finish()
            let share = run.hub.replica.value(at: ReplicaShareRebaseTests.path("/stores/leaf1"))
            let expected: Value = share == .null ? .null : .object(["stores": .object(["leaf1": share])])
            #expect(run.leaf.replica.snapshot() == expected, "seed \(seed)")
            #expect(run.pair.isOpen, "seed \(seed): \(run.pair.endpoints.map(\.closed))")
            total.ops += run.tally.ops
            total.cuts += run.tally.cuts
            total.compactions += run.tally.compactions
            total.snapshots += run.tally.snapshots
            total.restamps += run.tally.restamps
            for fixture in [run.hub, run.leaf, run.writer] { await fixture.finish() }
            await Task.yield()
        }
        // The runs did what they are for: the hub compacted, the leaf took its base, and leaf ops the hub
        // compacted past before they reached it were stamped again by the install.
        #expect(total.compactions > 50 && total.snapshots > 50 && total.restamps > 10, "\(total)")
    }
}
