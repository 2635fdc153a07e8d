import Testing
import WeftTestSupport

@testable import WeftCore

/// Installing another replica's compacted base (a snapshot): the engine that results, once it has the
/// tail of the sender's log, holds the fold of every op, the ops it stamped again in their new places.
@Suite struct MergeEngineInstallTests {
    /// A sender that merged the ops of writers 0–2 and compacted up to the middle of them, and a joiner
    /// (writer 3) that made its own ops apart and holds a prefix of each other writer's ops.
    struct Setup {
        var sender: MergeEngine
        var senderOps: [Op]
        var base: CompactedBase
        var joiner: MergeEngine
        var joinerID: ReplicaID
        var joinerOps: [Op]
        var rng: SeededGenerator
    }

    static func setup(seed: UInt64, joinerWrites: Bool = true) -> Setup {
        var workload = Workload(seed: seed, replicas: 4)
        let ops = (0..<400).map { _ in workload.next() }
        let joinerID = workload.replicaIDs[3]
        let senderOps = ops.filter { $0.origin != joinerID }
        let joinerOps = joinerWrites ? ops.filter { $0.origin == joinerID } : []
        var rng = SeededGenerator(seed: seed &* 31 &+ 7)

        let sender = MergeEngine(registry: Workload.registry)
        sender.apply(senderOps.shuffled(using: &rng))
        let stamps = senderOps.map(\.stamp).sorted()
        let stable = stamps[stamps.count / 4 + Int(rng.below(UInt64(stamps.count / 2)))]
        let frontier = sender.compactionFrontier(upTo: stable) ?? stable
        var vector = VersionVector()
        sender.forEachLoggedOp(through: frontier) { vector.advance(origin: $0.origin, to: $0.sequence) }
        sender.compact(upTo: frontier)
        let base = CompactedBase(
            value: sender.base, vector: vector, stampFrontier: frontier, touches: sender.allCompactedTouches())

        let joiner = MergeEngine(registry: Workload.registry)
        var held = joinerOps
        // A prefix of each writer's ops, shorter than the base's for the writer the base holds most of:
        // the joiner needs the snapshot.
        let lagging = vector.entries.max { $0.value < $1.value }?.key
        for origin in Set(senderOps.map(\.origin)).sorted() {
            let theirs = senderOps.filter { $0.origin == origin }
            let bound = origin == lagging ? Int(vector[origin]) : theirs.count + 1
            held += theirs.prefix(Int(rng.below(UInt64(bound))))
        }
        joiner.apply(held.shuffled(using: &rng))
        return Setup(
            sender: sender, senderOps: senderOps, base: base, joiner: joiner, joinerID: joinerID, joinerOps: joinerOps,
            rng: rng)
    }

    /// The joiner's clock: it has seen the base's stamp, and its wall clock stands still (the worst case:
    /// every new stamp comes from the logical counter).
    static func clock(_ setup: Setup) throws -> HybridClock {
        var clock = HybridClock(replica: setup.joinerID)
        try clock.receive(setup.base.stampFrontier, wallMillis: setup.base.stampFrontier.millis)
        return clock
    }

    @Test(arguments: 0..<60 as Range<UInt64>)
    func theJoinerLandsOnTheFoldOfEveryOpWithItsOwnStampedAgain(seed: UInt64) throws {
        var setup = Self.setup(seed: seed, joinerWrites: seed % 5 != 0)
        var clock = try Self.clock(setup)
        let wall = setup.base.stampFrontier.millis
        let install = try #require(
            try setup.joiner.installing(
                setup.base, local: setup.joinerID, localBaseVector: VersionVector(), acknowledgedThrough: 0
            ) { try clock.next(wallMillis: wall) })
        let engine = install.engine
        let own = engine.ops(from: setup.joinerID, after: 0, limit: .max)
        #expect(own.map(\.sequence) == setup.joinerOps.map(\.sequence))
        #expect(own.allSatisfy { $0.stamp > setup.base.stampFrontier })
        #expect(install.restamped.count + install.kept >= own.count)
        // The joiner wrote from the start: its first ops are below the base's stamp.
        #expect(install.restamped.isEmpty == setup.joinerOps.isEmpty)
        #expect(engine.versionVector.covers(setup.base.vector))
        #expect(engine.frontier == setup.base.stampFrontier)

        // The tail of the sender's log, in any order, and the joiner's ops back to the sender.
        var tail: [Op] = []
        for op in setup.senderOps where op.sequence > setup.base.vector[op.origin] { tail.append(op) }
        engine.apply(tail.shuffled(using: &setup.rng))
        setup.sender.apply(own.shuffled(using: &setup.rng))
        let expected = ReferenceFold.fold(setup.senderOps + own, registry: Workload.registry)
        #expect(engine.state == expected.state)
        #expect(setup.sender.state == expected.state)
        #expect(engine.digest == setup.sender.digest)
        #expect(engine.versionVector == setup.sender.versionVector)
        for op in own { #expect(engine.outcome(of: op.stamp) == (expected.outcomes[op.stamp] ?? .applied)) }
    }

    @Test func anEngineThatHoldsEveryOpOfTheBaseInstallsNothing() throws {
        let setup = Self.setup(seed: 3)
        let full = MergeEngine(registry: Workload.registry)
        full.apply(setup.senderOps)
        let install = try full.installing(
            setup.base, local: setup.joinerID, localBaseVector: VersionVector(), acknowledgedThrough: 0
        ) { preconditionFailure("nothing is stamped again") }
        #expect(install == nil)
    }

    @Test func anotherOriginsOpBelowTheStampIsRefusedAndTheEngineUnchanged() throws {
        let setup = Self.setup(seed: 4, joinerWrites: false)
        let stranger = Op(
            stamp: Stamp(millis: setup.base.stampFrontier.millis - 1, counter: 0, replica: ReplicaID(rawValue: 99)!),
            sequence: 1, path: try Path("/stranger"), kind: .set(.int(1)))
        setup.joiner.apply([stranger])
        let digest = setup.joiner.digest
        let count = setup.joiner.opCount
        #expect(throws: CoreError.self) {
            try setup.joiner.installing(
                setup.base, local: setup.joinerID, localBaseVector: VersionVector(), acknowledgedThrough: 0
            ) { preconditionFailure("nothing is stamped again") }
        }
        #expect(setup.joiner.digest == digest)
        #expect(setup.joiner.opCount == count)
    }

    @Test func anAcknowledgedOwnOpBelowTheStampIsRefused() throws {
        let setup = Self.setup(seed: 5)
        let first = try #require(setup.joinerOps.first)
        #expect(first.stamp <= setup.base.stampFrontier)
        var clock = try Self.clock(setup)
        let error = #expect(throws: CoreError.self) {
            try setup.joiner.installing(
                setup.base, local: setup.joinerID, localBaseVector: VersionVector(),
                acknowledgedThrough: first.sequence
            ) { try clock.next(wallMillis: 0) }
        }
        #expect(error?.description.contains("acknowledged") == true)
    }

    @Test func aBaseWithoutTheOpsThisEngineCompactedIsRefused() throws {
        let setup = Self.setup(seed: 6, joinerWrites: false)
        let beyond = VersionVector(setup.base.vector.entries.mapValues { $0 + 1 })
        #expect(throws: CoreError.self) {
            try setup.joiner.installing(
                setup.base, local: setup.joinerID, localBaseVector: beyond, acknowledgedThrough: 0
            ) { preconditionFailure("nothing is stamped again") }
        }
    }

    @Test func aClockThatDoesNotPassTheStampIsRefused() throws {
        let setup = Self.setup(seed: 7)
        #expect(throws: CoreError.self) {
            try setup.joiner.installing(
                setup.base, local: setup.joinerID, localBaseVector: VersionVector(), acknowledgedThrough: 0
            ) { setup.base.stampFrontier }
        }
    }

    /// The sender's side: a new op below its frontier is refused, and so are the later ops of its origin
    /// until that op comes back stamped again; a compacted op delivered again refuses nothing after it.
    @Test func anOriginsOpsAfterOneRefusedBelowTheFrontierWaitForItStampedAgain() throws {
        let setup = Self.setup(seed: 8)
        let sender = setup.sender
        let frontier = setup.base.stampFrontier
        let joiner = setup.joinerID
        func op(_ sequence: UInt64, millis: UInt64) throws -> Op {
            try .make(
                .set(.int(Int64(sequence))), at: "/joiner/n\(sequence)", origin: joiner, millis: millis,
                sequence: sequence)
        }
        let below = try op(1, millis: frontier.millis - 5)
        let above = try op(2, millis: frontier.millis + 5)
        let report = sender.apply([below, above])
        #expect(report.refused == [below.stamp, above.stamp])
        #expect(sender.versionVector[joiner] == 0)

        let again = try op(1, millis: frontier.millis + 10)
        let after = try op(2, millis: frontier.millis + 11)
        #expect(sender.apply([after]).refused == [after.stamp], "still waiting for op 1")
        #expect(sender.apply([again, after]).admitted == [0, 1])
        #expect(sender.versionVector[joiner] == 2)

        // A compacted op of another origin delivered again is refused and stops nothing.
        let compacted = try #require(setup.senderOps.first { $0.stamp <= frontier })
        #expect(sender.apply([compacted]).refused == [compacted.stamp])
        let next = Op(
            stamp: Stamp(millis: frontier.millis + 1_000_000, counter: 0, replica: compacted.origin),
            sequence: sender.versionVector[compacted.origin] + 1, path: try Path("/later"), kind: .set(.int(1)))
        #expect(sender.apply([next]).admitted == [0])
    }
}
