import Testing

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
}
