import Testing

@testable import WeftCore

/// Late ops of one `apply` wait for one re-fold per region at its end: merges and batches that reach a
/// pending region join it instead of having it re-folded first and again later.
@Suite struct MergeEnginePendingJoinTests {
    typealias Origin = MergeEngineCutTests.Origin

    /// A late merge writing a hot counter, then late batches that increment it and write an item each,
    /// all in one delivery: the counter's long tail is replayed once, not once per batch.
    @Test func batchesReachingAPendingCounterReplayItsTailOnce() throws {
        var a = Origin(1)
        var b = Origin(2)
        var ops = [try a.op(at: 1, "/counters/c", .set(.int(0)))]
        for step in 0..<50 {
            ops.append(try a.op(at: 100 + UInt64(step), "/counters/c", .increment(by: .int(1), from: .int(0))))
        }
        let engine = MergeEngine(registry: FunctionRegistry())
        engine.apply(ops)
        var late = [try b.op(at: 10, "/counters", .merge([MergeChild(relative: try Path("c"), value: .int(1000))]))]
        for item in 0..<4 {
            late.append(
                try b.op(
                    at: 11 + UInt64(item), "/",
                    .batch([
                        .increment(try Path("/counters/c"), by: .int(1), from: .int(0)),
                        .set(try Path("/items/i\(item)"), .int(Int64(item))),
                    ])))
        }
        engine.apply(late)
        let expected = ReferenceFold.fold(ops + late, registry: FunctionRegistry())
        #expect(engine.state == expected.state)
        #expect(engine.value(at: try Path("/counters/c")) == .int(1054))
        for op in ops + late { #expect(engine.outcome(of: op.stamp) == expected.outcomes[op.stamp]) }
        // One re-fold, of the counter's region: every late op joined it, and each batch's item, in
        // order, was written at once. The 50 increments after them are replayed once.
        #expect(engine.statistics.replayedOps < 80)
        #expect(engine.statistics.refolds == 1)
    }

    /// Workload and counter-traffic seeds where a batch joined a pending region, was written at once
    /// elsewhere, and was rejected by the pending region's re-fold: a cut for arriving ops that wrote
    /// nothing kept its writes in a region the re-fold had taken in.
    @Test(arguments: [101_646, 101_956, 104_779, 105_090, 105_819, 106_076, 108_194, 109_851, 114_790])
    func workloadSeedsEqualTheReferenceFold(seed: Int) {
        let (ops, replicas) = MergeEnginePropertyTests.makeOps(seed: UInt64(seed), count: 60 + seed % 240)
        var rng = SeededGenerator(seed: UInt64(seed) ^ 0xA5A5)
        expectFoldInRandomDeliveries(
            ops, registry: Workload.registry, engines: replicas, rng: &rng, label: "seed \(seed)")
    }

    @Test func counterTrafficSeedEqualsTheReferenceFold() {
        let seed = 108_533
        var rng = SeededGenerator(seed: UInt64(seed) ^ 0x5EED)
        expectFoldInRandomDeliveries(
            MergeEngineCounterWindowTests.counterTraffic(seed: UInt64(seed), count: 40 + seed % 80),
            registry: FunctionRegistry(), engines: 3, rng: &rng, label: "seed \(seed)")
    }

    /// A batch whose increment fails in one pending region and whose other write lies in another pending
    /// region: the region re-folded first takes it as applied, the counter's re-fold rejects it, and its
    /// write elsewhere is taken back.
    @Test func aBatchRejectedByOneRegionWritesNothingInTheOther() throws {
        var a = Origin(1)
        var b = Origin(2)
        let ops = [
            try a.op(at: 1, "/counters/c", .set(.int(0))),
            try a.op(at: 30, "/counters/c", .increment(by: .int(1), from: .int(0))),
            try a.op(at: 31, "/items/i", .merge([MergeChild(relative: try Path("y"), value: .int(1))])),
            try a.op(at: 32, "/items/i/x", .increment(by: .int(1), from: .int(0))),
        ]
        let engine = MergeEngine(registry: FunctionRegistry())
        engine.apply(ops)
        let late = [
            // Both regions go pending first: the item's by a late write, the counter's by a late set
            // of text that makes the batch's increment fail.
            try b.op(at: 5, "/items/i/x", .set(.int(7))),
            try b.op(at: 6, "/counters/c", .set(.string("text"))),
            try b.op(
                at: 7, "/",
                .batch([
                    .set(try Path("/items/i/x"), .int(100)),
                    .increment(try Path("/counters/c"), by: .int(1), from: .int(0)),
                ])),
        ]
        engine.apply(late)
        let expected = ReferenceFold.fold(ops + late, registry: FunctionRegistry())
        #expect(engine.state == expected.state)
        #expect(engine.outcome(of: late[2].stamp) == .rejected(.notANumber(try Path("/counters/c"))))
        #expect(engine.value(at: try Path("/items/i/x")) == .int(8))
        for op in ops + late { #expect(engine.outcome(of: op.stamp) == expected.outcomes[op.stamp]) }
    }
}
