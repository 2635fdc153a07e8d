import Testing
import WeftTestSupport
import WeftCore
import WeftSync
@testable import WeftSimulation

@Suite struct CheckerTests {
    static let ids = [ReplicaID(rawValue: 1)!, ReplicaID(rawValue: 2)!]

    static func op(_ replica: Int, sequence: UInt64, millis: UInt64, value: Int64 = 1) -> Op {
        .make(.set(.int(value)), at: (try? Path("/items/i0/score")) ?? .root, origin: ids[replica], millis: millis, sequence: sequence)
    }

    static func checker() -> Checker { Checker(ids: ids, registry: Workload.registry, seed: 1) }

    @Test func aReusedSequenceOrAStampGoingBackIsCaught() {
        let checker = Self.checker()
        #expect(checker.wrote(Self.op(0, sequence: 1, millis: 10), at: 0) == nil)
        #expect(checker.wrote(Self.op(0, sequence: 1, millis: 20), at: 0)?.kind == .conflictingOps)
        #expect(checker.wrote(Self.op(0, sequence: 2, millis: 5), at: 0)?.kind == .stampNotMonotonic)
    }

    @Test func anOpAlteredOnTheWayOrInventedIsCaught() {
        let checker = Self.checker()
        let op = Self.op(0, sequence: 1, millis: 10)
        #expect(checker.wrote(op, at: 0) == nil)
        #expect(
            checker.received(
                [Self.op(0, sequence: 1, millis: 10, value: 2)], fresh: [Self.op(0, sequence: 1, millis: 10, value: 2)],
                at: 1)?.kind == .conflictingOps)
        let invented = Self.op(1, sequence: 1, millis: 11)
        #expect(checker.received([invented], fresh: [invented], at: 0)?.kind == .conflictingOps)
        #expect(checker.received([op], fresh: [], at: 1)?.kind == .conflictingOps, "claimed without receiving it")
        #expect(checker.received([op], fresh: [op], at: 1) == nil)
        #expect(checker.received([op], fresh: [], at: 1) == nil)
    }

    @Test func anOpsBytesAreComparedWithTheBytesItWasMadeWith() {
        let checker = Self.checker()
        let op = Self.op(0, sequence: 1, millis: 10)
        let bytes = OpCodec.encode(op)[...]
        #expect(checker.wrote(op, encoding: bytes, at: 0) == nil)
        var altered = Array(bytes)
        altered[altered.count - 1] ^= 1
        #expect(
            checker.received([op], fresh: [op], freshEncodings: [altered[...]], at: 1)?.kind == .conflictingOps,
            "one byte changed on the way")
        #expect(
            checker.received([op], fresh: [op], freshEncodings: [bytes.dropLast()], at: 1)?.kind == .conflictingOps,
            "one byte short")
        #expect(checker.received([op], fresh: [op], freshEncodings: [Array(bytes)[...]], at: 1) == nil)
        #expect(checker.known[1].contains(op.stamp))
    }

    @Test func anOpLostUnsyncedMustNotHaveLeftItsReplica() {
        let checker = Self.checker()
        let op = Self.op(0, sequence: 1, millis: 10)
        #expect(checker.wrote(op, at: 0) == nil)
        #expect(checker.received([op], fresh: [op], at: 1) == nil)
        #expect(checker.crashed(0, lost: [op])?.kind == .unsyncedOpEscaped)
    }

    @Test func anAcknowledgementBeyondWhatThePeerSyncedIsCaught() {
        let checker = Self.checker()
        var held = VersionVector()
        held.advance(origin: Self.ids[0], to: 3)
        var claimed = held
        claimed.advance(origin: Self.ids[0], to: 4)
        #expect(
            checker.acknowledgement(
                Acknowledgement(versionVector: held), by: 1, durable: held, everyDurable: [held, held])
                == nil)
        #expect(
            checker.acknowledgement(
                Acknowledgement(versionVector: claimed), by: 1, durable: held, everyDurable: [held, held])?
                .kind == .acknowledgementBeyondDurable)
        #expect(
            checker.acknowledgement(
                Acknowledgement(versionVector: held, stableFrontier: claimed), by: 1, durable: held,
                everyDurable: [held, held])?.kind == .acknowledgementBeyondDurable)
    }

    @Test func aRecoveryMustReadBackExactlyWhatWasSynced() {
        let checker = Self.checker()
        let first = Self.op(0, sequence: 1, millis: 10, value: 1)
        let second = Self.op(0, sequence: 2, millis: 11, value: 2)
        #expect(checker.wrote(first, at: 0) == nil)
        #expect(checker.wrote(second, at: 0) == nil)
        #expect(checker.crashed(0, lost: [second]) == nil)
        var durable = VersionVector()
        durable.advance(origin: Self.ids[0], to: 1)
        let state = ReferenceFold.fold([first], registry: Workload.registry).state
        let good = RecoveredLog(ops: [first], clockTime: first.stamp.time, tree: state)
        #expect(checker.recovered(0, good, durable: durable, state: state) == nil)
        let short = RecoveredLog(ops: [], clockTime: 0, tree: nil)
        #expect(checker.recovered(0, short, durable: durable, state: .null)?.kind == .recoveryMismatch)
        let badTree = RecoveredLog(ops: [first], clockTime: first.stamp.time, tree: .int(9))
        #expect(checker.recovered(0, badTree, durable: durable, state: state)?.kind == .recoveryMismatch)
        let oldClock = RecoveredLog(ops: [first], clockTime: 0, tree: state)
        #expect(checker.recovered(0, oldClock, durable: durable, state: state)?.kind == .stampNotMonotonic)
        #expect(checker.recovered(0, good, durable: durable, state: .int(3))?.kind == .stateDiffersFromFold)
    }

    @Test func replicasHoldingTheSameOpsMustShowTheSameDigest() {
        let checker = Self.checker()
        let op = Self.op(0, sequence: 1, millis: 10)
        #expect(checker.wrote(op, at: 0) == nil)
        #expect(checker.received([op], fresh: [op], at: 1) == nil)
        let same = StateDigest(rawValue: 1)
        #expect(checker.compareDigests([(0, same), (1, same)]) == nil)
        #expect(checker.compareDigests([(0, same), (1, StateDigest(rawValue: 2))])?.kind == .sameOpsDifferentDigests)
    }

    @Test func aSnapshotMustBeTheFoldOfExactlyTheOpsItCovers() {
        let checker = Self.checker()
        let first = Self.op(0, sequence: 1, millis: 10, value: 1)
        let second = Self.op(0, sequence: 2, millis: 11, value: 2)
        #expect(checker.wrote(first, at: 0) == nil)
        #expect(checker.wrote(second, at: 0) == nil)
        var frontier = VersionVector()
        frontier.advance(origin: Self.ids[0], to: 1)
        let folded = ReferenceFold.fold([first], registry: Workload.registry).state
        #expect(checker.snapshot(SyncSnapshot(value: folded, frontier: frontier), at: 1) == nil)
        let stale = SyncSnapshot(
            value: ReferenceFold.fold([first, second], registry: Workload.registry).state, frontier: frontier)
        #expect(checker.snapshot(stale, at: 1)?.kind == .stateDiffersFromFold)
        var beyond = frontier
        beyond.advance(origin: Self.ids[0], to: 3)
        #expect(checker.snapshot(SyncSnapshot(value: folded, frontier: beyond), at: 1)?.kind == .conflictingOps)
    }

    @Test func theFirstDifferenceBetweenTwoValuesIsNamed() {
        let left = Value.object(["a": .object(["b": .int(1), "c": .int(2)])])
        let right = Value.object(["a": .object(["b": .int(1), "c": .int(3)])])
        let difference = ValueDifference.first(between: left, and: right)
        #expect(difference.path == "/a/c")
        #expect(difference.expected == "2")
        #expect(difference.actual == "3")
    }
}
