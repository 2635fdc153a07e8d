import Testing
import WeftTestSupport

@testable import WeftCore

/// An engine reopened over a compacted base keeps counting the ops folded into it.
@Suite struct MergeEngineBaseVectorTests {
    @Test func anEngineOverACompactedBaseContinuesItsVersionVectorWithoutAGap() {
        var workload = Workload(seed: 5, replicas: 3)
        let ops = (0..<300).map { _ in workload.next() }
        let whole = MergeEngine(registry: Workload.registry)
        whole.apply(ops)
        let frontier = ops[149].stamp
        let folded = ops.filter { $0.stamp <= frontier }
        var baseVector = VersionVector()
        for op in folded { baseVector.advance(origin: op.origin, to: op.sequence) }
        whole.compact(upTo: frontier)

        let reopened = MergeEngine(
            registry: Workload.registry, base: whole.base, frontier: frontier, baseVector: baseVector)
        #expect(reopened.versionVector == baseVector)
        reopened.apply(ops.filter { $0.stamp > frontier })
        #expect(reopened.versionVector == whole.versionVector)
        #expect(reopened.state == whole.state)
        #expect(reopened.opCount == whole.opCount)
        // Without the base vector, the origins would stop at the first compacted sequence.
        let forgetful = MergeEngine(registry: Workload.registry, base: whole.base, frontier: frontier)
        forgetful.apply(ops.filter { $0.stamp > frontier })
        #expect(forgetful.versionVector != whole.versionVector)
    }

    /// Late increments below a scalar of the base: the index holds no mark of that scalar (no logged op
    /// wrote it), so the shortcuts must see it in the base and leave the increments to a re-fold.
    @Test func lateIncrementsBelowAScalarOfTheBaseLandWhereTheFoldLands() throws {
        let origin = try #require(ReplicaID(rawValue: 7))
        let base = try Value(json: #"{"c":5,"d":{"e":"text"}}"#)
        func increment(_ sequence: UInt64, _ path: String, by: Int64) throws -> Op {
            try .make(
                .increment(by: .int(by), from: .int(0)), at: path, origin: origin, millis: 100 + sequence,
                sequence: sequence)
        }
        let ops = [
            try increment(1, "/c/x", by: 1), try increment(2, "/c/x", by: 2), try increment(3, "/c/x", by: 4),
            try increment(4, "/d/e/f", by: 1), try increment(5, "/d/e/f", by: 2),
        ]
        let expected = ReferenceFold.fold(ops, base: base, registry: Workload.registry).state
        // Every arrival order of the ops, one at a time.
        for order in [[2, 1, 0, 4, 3], [0, 2, 1, 4, 3], [4, 2, 3, 0, 1], [1, 0, 2, 3, 4]] {
            let engine = MergeEngine(registry: Workload.registry, base: base, frontier: nil)
            for position in order { engine.apply([ops[position]]) }
            #expect(engine.state == expected, "arrival order \(order)")
        }
    }
}
