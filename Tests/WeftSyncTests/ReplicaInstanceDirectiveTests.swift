import Testing
import WeftCore
@testable import WeftSync

/// The replica's policy fed events, checked by the directives it returns (no shell, no I/O).
@Suite struct ReplicaInstanceDirectiveTests {
    let me = Harness.replica(0)
    let other = Harness.replica(1)
    let hub = Harness.replica(2)

    func stamp(_ millis: UInt64, _ replica: ReplicaID) -> Stamp { Stamp(millis: millis, counter: 0, replica: replica) }

    func op(_ replica: ReplicaID, _ sequence: UInt64, at millis: UInt64) throws -> Op {
        Op(stamp: stamp(millis, replica), sequence: sequence, path: try Path("/n/\(sequence)"), kind: .set(.int(1)))
    }

    /// An instance for `me` whose log holds `ops`, received at wall time 10,000.
    func instance(holding ops: [Op]) throws -> (ReplicaInstance, MergeEngine) {
        var instance = ReplicaInstance(replica: me, clock: HybridClock(replica: me))
        instance.loaded(ownSequenceMax: 0, compactionVector: VersionVector())
        for op in ops { try instance.receive(op, wallMillis: 10_000) }
        let engine = MergeEngine()
        _ = engine.apply(ops)
        return (instance, engine)
    }

    @Test("a write takes a stamp above every stamp seen and the next sequence")
    func writesAreStampedAndSequenced() throws {
        var (instance, _) = try instance(holding: [op(other, 1, at: 9_000)])
        let first = try instance.nextStamp(wallMillis: 5_000)
        #expect(first > stamp(9_000, other), "the clock moved past the received stamp")
        #expect(instance.claimSequence() == 1)
        #expect(instance.claimSequence() == 2)
        #expect(instance.nextSequence == 3)
    }

    @Test("an own op given back by a peer moves the next sequence past it")
    func ownOpsReceivedMoveTheSequence() throws {
        let (instance, _) = try instance(holding: [op(me, 4, at: 1_000)])
        #expect(instance.nextSequence == 5)
    }

    @Test("an acknowledgement marks no further than the replica wrote, and only forward")
    func acknowledgementsAreCappedAndMonotone() throws {
        var (instance, _) = try instance(holding: [op(me, 1, at: 1_000), op(me, 2, at: 2_000)])
        #expect(instance.acknowledge(through: VersionVector([me: 9])) == [.markAcknowledged(through: 2)])
        #expect(instance.acknowledge(through: VersionVector([me: 1])) == [])
        #expect(instance.acknowledgedThrough == 2)
    }

    @Test("marking a stamp stable marks the own ops under it, and never goes back")
    func markStableMarksOwnOpsUnderTheFrontier() throws {
        var (instance, engine) = try instance(holding: [
            op(me, 1, at: 1_000), op(me, 2, at: 2_000), op(me, 3, at: 3_000),
        ])
        #expect(instance.markStable(through: stamp(2_500, other), log: engine) == [.markStable(through: 2)])
        #expect(instance.acknowledgedThrough == 2, "stable implies acknowledged")
        #expect(instance.markStable(through: stamp(2_000, other), log: engine) == [])
        #expect(instance.stableFrontier == stamp(2_500, other))
    }

    @Test("the stamp frontier stops below an op some member holds and this replica lacks")
    func knownOpsBoundTheStampFrontier() throws {
        // Own ops 1-3 are stable; `other`'s op 1 is stable, its op 2 is acked elsewhere, not held here.
        let (instance, engine) = try instance(holding: [
            op(me, 1, at: 1_000), op(me, 2, at: 2_000), op(me, 3, at: 3_000), op(other, 1, at: 1_500),
        ])
        let stable = VersionVector([me: 3, other: 1])
        #expect(
            instance.stampFrontier(covering: stable, known: VersionVector([me: 3, other: 1]), log: engine)
                == stamp(3_000, me))
        #expect(
            instance.stampFrontier(covering: stable, known: VersionVector([me: 3, other: 2]), log: engine)
                == stamp(1_500, other), "other's op 2 is stamped above its op 1, perhaps below 3,000")
    }

    @Test("the acknowledgements decide marks, the stable vector and what acks announce")
    func acknowledgementsDecideEveryMark() throws {
        var (instance, engine) = try instance(holding: [op(me, 1, at: 1_000), op(me, 2, at: 2_000)])
        let inputs = AcknowledgementInputs(
            acknowledgedThrough: 2, stable: VersionVector([me: 1]), known: VersionVector([me: 2]),
            compactionCap: .upTo(stamp(500, hub)))
        let directives = instance.onAcknowledgements(inputs, log: engine)
        #expect(
            directives == [
                .markAcknowledged(through: 2), .markStable(through: 1), .announceStable(VersionVector([me: 1])),
            ])
        #expect(instance.compactionCap == .upTo(stamp(500, hub)))
        var lower = inputs
        lower.stable = VersionVector()
        #expect(instance.onAcknowledgements(lower, log: engine) == [], "the stable vector never goes back")
        #expect(instance.stableVector == VersionVector([me: 1]))
    }

    @Test("compaction folds up to the stable frontier, no further than the hubs compacted")
    func compactionIsCappedByTheHubs() throws {
        var (instance, engine) = try instance(holding: [op(me, 1, at: 1_000), op(me, 2, at: 2_000)])
        _ = instance.markStable(through: stamp(2_000, me), log: engine)
        instance.setCompactionCap(.nothing)
        #expect(instance.compactionFrontier(log: engine) == nil)
        instance.setCompactionCap(.upTo(stamp(1_000, me)))
        let frontier = try #require(instance.compactionFrontier(log: engine))
        #expect(frontier == stamp(1_000, me))
        instance.compacting(upTo: frontier, log: engine)
        #expect(instance.compactionVector == VersionVector([me: 1]))
    }

    @Test("a snapshot is installed only when it brings ops the log lacks, and only with its stamp")
    func snapshotInstallDecision() throws {
        var (instance, engine) = try instance(holding: [op(other, 1, at: 1_000)])
        let held = SyncSnapshot(value: .null, frontier: VersionVector([other: 1]), stampFrontier: stamp(1_000, other))
        #expect(try instance.snapshotInstall(held, wallMillis: 10_000, log: engine) == .holdsEverything)
        let unstamped = SyncSnapshot(value: .null, frontier: VersionVector([other: 2]))
        #expect(try instance.snapshotInstall(unstamped, wallMillis: 10_000, log: engine) == .lacksStampFrontier)
        let lacking = SyncSnapshot(value: .null, frontier: VersionVector([other: 2]), stampFrontier: stamp(9_000, other))
        guard case .install(let base) = try instance.snapshotInstall(lacking, wallMillis: 10_000, log: engine) else {
            Issue.record("a snapshot of ops the log lacks is installed")
            return
        }
        #expect(base.stampFrontier == stamp(9_000, other))
        #expect(try instance.nextStamp(wallMillis: 1) > stamp(9_000, other), "the clock adopted the sender's stamp")
        instance.installed(VersionVector([other: 2, me: 3]))
        #expect(instance.compactionVector == VersionVector([other: 2, me: 3]))
        #expect(instance.nextSequence == 4)
    }
}
