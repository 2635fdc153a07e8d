import Foundation
import Testing
import WeftTestSupport

@testable import WeftCore

/// Re-folds that stop early: once replay has passed the change and every arriving op, a whole write of
/// each region that keeps its outcome seals it, and the re-fold stops when every region is sealed and
/// no later transaction changes its outcome. The engine must still land on the reference fold.
@Suite struct MergeEngineCutTests {
    /// Makes the ops of one origin: stamps at the given milliseconds, the sequence as counter (so two ops
    /// of one millisecond stay apart and in order).
    struct Origin {
        let id: ReplicaID
        var sequence: UInt64 = 0

        init(_ raw: UInt64) {
            id = ReplicaID(rawValue: raw) ?? ReplicaID(rawValue: 1)!
        }

        mutating func op(at millis: UInt64, _ path: String, _ kind: OpKind) throws -> Op {
            sequence += 1
            return try .make(
                kind, at: path, origin: id, millis: 1_000 + millis, sequence: sequence, counter: UInt16(sequence))
        }
    }

    static let one = OpKind.increment(by: .int(1), from: .int(0))

    @Test func aLateIncrementStopsAtTheNextReset() throws {
        var a = Origin(1)
        var c = Origin(3)
        // The counter is first written from above: what it held before the late op is not known without
        // replaying (the counter shortcut does not apply).
        var ops = [
            try a.op(at: 1, "/counters", .set(.object(["c": .int(0)]))), try a.op(at: 10, "/counters/c", .set(.int(0))),
        ]
        for millis in 11...30 { ops.append(try a.op(at: UInt64(millis), "/counters/c", Self.one)) }
        // A transaction that had seen every op, the late one included: still valid, so no reason to
        // replay past the reset.
        ops.append(
            try a.op(
                at: 40, "/counters/c",
                .transaction(read: VersionVector([a.id: a.sequence, c.id: 1]), result: .int(100))))
        ops.append(try c.op(at: 5, "/counters/c", Self.one))
        let engine = MergeEngine(registry: FunctionRegistry())
        expectFoldOneByOne(ops, engine: engine)
        #expect(engine.state.value(at: try Path("/counters/c")) == .int(100))
        #expect(engine.statistics.cutRefolds == 1)
        // Replay went from before the late op to the reset, not to the end of the log.
        #expect(engine.statistics.replayedOps < 5)
    }

    @Test func aTransactionThatDidNotSeeTheLateOpIsDecidedBeforeTheCut() throws {
        var a = Origin(1)
        var b = Origin(2)
        var c = Origin(3)
        var ops = [try a.op(at: 10, "/counters/c", .set(.int(0)))]
        for millis in 11...20 { ops.append(try a.op(at: UInt64(millis), "/counters/c", Self.one)) }
        // b read every op of a, but not c's late increment stamped 5: the rule now rejects it.
        ops.append(
            try b.op(at: 25, "/counters/c", .transaction(read: VersionVector([a.id: a.sequence]), result: .int(100))))
        ops.append(try a.op(at: 30, "/counters/c", .set(.int(7))))
        for millis in 31...35 { ops.append(try a.op(at: UInt64(millis), "/counters/c", Self.one)) }
        // Past the second reset, a transaction that had seen c's op keeps its outcome.
        let late = try c.op(at: 5, "/counters/c", Self.one)
        ops.append(
            try b.op(
                at: 40, "/other",
                .transaction(read: VersionVector([a.id: a.sequence, c.id: 1, b.id: b.sequence]), result: .int(1))))
        ops.append(late)
        let engine = MergeEngine(registry: FunctionRegistry())
        expectFoldOneByOne(ops, engine: engine)
        if case .rejected = engine.outcome(of: ops[11].stamp) {} else { Issue.record("the stale transaction applies") }
        #expect(engine.state.value(at: try Path("/counters/c")) == .int(12))
        #expect(engine.statistics.cutRefolds == 1)
    }

    @Test func aLateBatchOverTwoRegionsStopsOnceBothAreRewritten() throws {
        var a = Origin(1)
        var c = Origin(3)
        var ops: [Op] = []
        for millis in 1...4 {
            ops.append(try a.op(at: UInt64(millis), "/counters/x", Self.one))
            ops.append(try a.op(at: UInt64(millis), "/items/i/score", .set(.int(Int64(millis)))))
        }
        ops.append(try a.op(at: 10, "/counters/x", .set(.int(50))))
        for millis in 11...15 { ops.append(try a.op(at: UInt64(millis), "/counters/x", Self.one)) }
        ops.append(
            try a.op(
                at: 20, "/items", .merge([MergeChild(relative: try Path("i"), value: .object(["score": .int(9)]))])))
        for millis in 21...25 { ops.append(try a.op(at: UInt64(millis), "/counters/x", Self.one)) }
        ops.append(
            try c.op(
                at: 2, "/",
                .batch([
                    .increment(try Path("/counters/x"), by: .int(1000), from: .int(0)),
                    .increment(try Path("/items/i/score"), by: .int(1000), from: .int(0)),
                ])))
        let engine = MergeEngine(registry: FunctionRegistry())
        expectFoldOneByOne(ops, engine: engine)
        #expect(engine.state.value(at: try Path("/counters/x")) == .int(60))
        #expect(engine.state.value(at: try Path("/items/i/score")) == .int(9))
    }

    @Test func randomRunsCutShortOftenAndStillLandOnTheFold() {
        var cut = 0
        for seed in UInt64(1)...40 {
            var rng = SeededGenerator(seed: seed)
            var workload = Workload(seed: seed, replicas: 4, shape: MergeEngineSnapshotTests.shape(hot: true))
            let ops = (0..<600).map { _ in workload.next() }
            let expected = ReferenceFold.fold(ops, registry: Workload.registry)
            let engine = MergeEngine(registry: Workload.registry)
            for batch in MergeEngineSnapshotTests.interleaved(ops, rng: &rng) { engine.apply(batch) }
            #expect(engine.state == expected.state, "seed \(seed)")
            for op in ops { #expect(engine.outcome(of: op.stamp) == expected.outcomes[op.stamp], "seed \(seed)") }
            cut += engine.statistics.cutRefolds
        }
        // The runs took the early stop often, so the checks above cover it.
        #expect(cut > 200)
    }
}
