import Testing

@testable import WeftCore

/// Late batches of writes on disjoint nodes whose increments provably succeed (blind writes always do)
/// always apply, so the engine takes them write by write, as it does a late merge: in order, hidden by a
/// later whole write, through the counter shortcut, or re-folded in its region alone.
@Suite struct MergeEngineBlindBatchTests {
    typealias Origin = MergeEngineCutTests.Origin

    @Test func writesInOrderOrHiddenNeedNoRefold() throws {
        var a = Origin(1)
        var c = Origin(3)
        var ops = [try a.op(at: 10, "/a", .set(.int(5))), try a.op(at: 11, "/e", .set(.int(1)))]
        ops.append(
            try c.op(
                at: 5, "/",
                .batch([
                    .set(try Path("/a"), .int(1)), .set(try Path("/b/x"), .int(2)),
                    .merge(try Path("/c"), [MergeChild(relative: try Path("d"), value: .int(3))]),
                ])))
        let engine = MergeEngine(registry: FunctionRegistry())
        expectFoldOneByOne(ops, engine: engine)
        #expect(engine.statistics.refolds == 0)
        #expect(engine.state.value(at: try Path("/a")) == .int(5))
        #expect(engine.state.value(at: try Path("/b/x")) == .int(2))
    }

    @Test func aConflictingWriteIsRefoldedAloneAndDecidesLaterOps() throws {
        var a = Origin(1)
        var c = Origin(3)
        var ops = [
            try a.op(at: 10, "/counter", .increment(by: .int(1), from: .int(0))),
            try a.op(at: 11, "/items/i0", .set(.string("kept"))),
        ]
        let late = try c.op(
            at: 5, "/", .batch([.set(try Path("/counter"), .string("text")), .set(try Path("/items/i1"), .int(2))]))
        ops.append(late)
        let engine = MergeEngine(registry: FunctionRegistry())
        expectFoldOneByOne(ops, engine: engine)
        #expect(engine.outcome(of: ops[0].stamp) == .rejected(.notANumber(try Path("/counter"))))
        #expect(engine.statistics.refolds == 1)
        // Only the counter's region was replayed: the batch and the increment.
        #expect(engine.statistics.replayedOps == 2)
    }

    @Test func overlappingWritesTakeTheGeneralRoad() throws {
        var a = Origin(1)
        var c = Origin(3)
        var ops = [try a.op(at: 10, "/a/x", .increment(by: .int(1), from: .int(0)))]
        ops.append(
            try c.op(
                at: 5, "/a",
                .batch([.set(try Path("/a"), .object(["x": .string("s")])), .set(try Path("/a/x"), .int(2))])))
        #expect(
            MergeEngine.disjointWrites(
                [.set(try Path("/a"), .null), .set(try Path("/a/x"), .int(2))], anchorCount: 2) == nil)
        let engine = MergeEngine(registry: FunctionRegistry())
        expectFoldOneByOne(ops, engine: engine)
        #expect(engine.state.value(at: try Path("/a/x")) == .int(3))
    }

    @Test func anIncrementFollowedByAnAppliedIncrementTakesTheCounterShortcut() throws {
        var a = Origin(1)
        var c = Origin(3)
        var ops = [try a.op(at: 1, "/items/i0", .set(.string("old")))]
        for millis in 10...20 {
            ops.append(try a.op(at: UInt64(millis), "/counters/c", .increment(by: .int(1), from: .int(0))))
        }
        ops.append(try a.op(at: 21, "/items/i0", .set(.string("new"))))
        let late = try c.op(
            at: 5, "/",
            .batch([
                .increment(try Path("/counters/c"), by: .int(10), from: .int(100)),
                .set(try Path("/items/i0"), .string("late")),
                .increment(try Path("/counters/d"), by: .int(1), from: .int(0)),
            ]))
        ops.append(late)
        let engine = MergeEngine(registry: FunctionRegistry())
        expectFoldOneByOne(ops, engine: engine)
        #expect(engine.statistics.refolds == 0)
        // The late batch met null at the counter now, not the increment at 10.
        #expect(engine.state.value(at: try Path("/counters/c")) == .int(121))
        #expect(engine.incrementsFromNull.isEmpty)
    }

    @Test func anIncrementWhoseCounterIsUnknownTakesTheGeneralRoad() throws {
        var a = Origin(1)
        var c = Origin(3)
        // The next op at the counter is a set: what it held at the batch is unknown without replaying.
        let ops = [
            try a.op(at: 1, "/counters/c", .set(.string("text"))),
            try a.op(at: 10, "/counters/c", .set(.int(0))),
            try a.op(at: 11, "/items/i0", .set(.int(1))),
            try c.op(
                at: 5, "/",
                .batch([
                    .increment(try Path("/counters/c"), by: .int(1), from: .int(0)),
                    .set(try Path("/items/i0"), .int(2)),
                ])),
        ]
        let engine = MergeEngine(registry: FunctionRegistry())
        expectFoldOneByOne(ops, engine: engine)
        #expect(engine.outcome(of: ops[3].stamp) == .rejected(.notANumber(try Path("/counters/c"))))
        // One re-fold of the regions the batch reaches: the counter's and the item's.
        #expect(engine.statistics.refolds == 1)
    }
}
