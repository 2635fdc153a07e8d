import Testing

@testable import WeftCore

/// Late batches of writes on disjoint nodes whose increments provably succeed (blind writes always do)
/// always apply, so the engine takes them write by write, as it does a late merge: in order, hidden by a
/// later whole write, through the counter shortcut, or re-folded in its region alone.
@Suite struct MergeEngineBlindBatchTests {
    typealias Origin = MergeEngineCutTests.Origin

    /// A batch stamped 5 that increments `/counters/c` and sets `/items/i0` to 2.
    static func lateBatch(_ origin: inout Origin) throws -> Op {
        try origin.op(
            at: 5, "/",
            .batch([
                .increment(try Path("/counters/c"), by: .int(1), from: .int(0)),
                .set(try Path("/items/i0"), .int(2)),
            ]))
    }

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
        // The next op at the counter is a set, and a write below the counter since its op before: what it
        // held at the batch is unknown without replaying.
        let ops = [
            try a.op(at: 1, "/counters/c", .set(.string("text"))),
            try a.op(at: 3, "/counters/c/x", .set(.int(7))),
            try a.op(at: 10, "/counters/c", .set(.int(0))),
            try a.op(at: 11, "/items/i0", .set(.int(1))),
            try Self.lateBatch(&c),
        ]
        let engine = MergeEngine(registry: FunctionRegistry())
        expectFoldOneByOne(ops, engine: engine)
        #expect(engine.outcome(of: ops[4].stamp) == .rejected(.notANumber(try Path("/counters/c"))))
        // One re-fold of the regions the batch reaches: the counter's and the item's.
        #expect(engine.statistics.refolds == 1)
    }

    /// What the counter held at a late batch, read from its op before (a set) or after (an increment that
    /// met a non-number), or from the state for an increment in order: a non-number rejects the batch
    /// for the first such part in its order, and it writes nothing, without a re-fold.
    @Test(arguments: [
        // The op before the counter's late part set text; a set follows.
        [(1, "/counters/c", OpKind.set(.string("text"))), (10, "/counters/c", .set(.int(0)))],
        // The increment after the late part met text.
        [(1, "/counters/c", .set(.string("text"))), (10, "/counters/c", .increment(by: .int(1), from: .int(0)))],
        // The counter holds text and nothing came after the batch there: the part is in order.
        [(1, "/counters/c", .set(.string("text")))],
    ])
    func aPartThatMeetsANonNumberRejectsTheLateBatchWithoutARefold(_ counterOps: [(Int, String, OpKind)]) throws {
        var a = Origin(1)
        var b = Origin(2)
        var c = Origin(3)
        var ops = try counterOps.map { try a.op(at: UInt64($0.0), $0.1, $0.2) }
        ops.append(try a.op(at: 11, "/items/i0", .set(.int(1))))
        ops.append(try b.op(at: 2, "/counters/d", .set(.bool(true))))
        let late = try c.op(
            at: 5, "/",
            .batch([
                .increment(try Path("/counters/e"), by: .int(1), from: .int(0)),
                .set(try Path("/items/i0"), .int(2)),
                .increment(try Path("/counters/c"), by: .int(1), from: .int(0)),
                .increment(try Path("/counters/d"), by: .int(1), from: .int(0)),
            ]))
        ops.append(late)
        let engine = MergeEngine(registry: FunctionRegistry())
        let before = ReferenceFold.fold(ops.dropLast(), registry: engine.registry).state
        expectFoldOneByOne(ops, engine: engine)
        // /counters/d fails too (it held true), but /counters/c comes first in the batch.
        #expect(engine.outcome(of: late.stamp) == .rejected(.notANumber(try Path("/counters/c"))))
        #expect(engine.state == before)
        #expect(engine.statistics.refolds == 0)
    }

    /// A later transaction that had not seen the batch was valid without it and is rejected with it,
    /// whatever the batch's outcome: the batch goes to a re-fold.
    @Test func aRejectedLateBatchUnderALaterTransactionIsRefolded() throws {
        var a = Origin(1)
        var c = Origin(3)
        let ops = [
            try a.op(at: 1, "/counters/c", .set(.string("text"))),
            try a.op(at: 10, "/items/i0", .transaction(read: VersionVector([a.id: 1]), result: .int(9))),
            try c.op(
                at: 5, "/",
                .batch([
                    .increment(try Path("/counters/c"), by: .int(1), from: .int(0)),
                    .set(try Path("/items/i0/name"), .string("late")),
                ])),
        ]
        let engine = MergeEngine(registry: FunctionRegistry())
        expectFoldOneByOne(ops, engine: engine)
        #expect(engine.outcome(of: ops[2].stamp) == .rejected(.notANumber(try Path("/counters/c"))))
        #expect(engine.outcome(of: ops[1].stamp) == .rejected(.staleRead(try Path("/items/i0"))))
        #expect(engine.statistics.refolds == 1)
    }

    /// The op before a late part set a number, and the op after it is a set: the batch applies, and its
    /// part is hidden.
    @Test func aPartAfterANumberLetsTheLateBatchApply() throws {
        var a = Origin(1)
        var c = Origin(3)
        let ops = [
            try a.op(at: 1, "/counters/c", .set(.int(4))),
            try a.op(at: 10, "/counters/c", .set(.int(0))),
            try Self.lateBatch(&c),
        ]
        let engine = MergeEngine(registry: FunctionRegistry())
        expectFoldOneByOne(ops, engine: engine)
        #expect(engine.outcome(of: ops[2].stamp) == .applied)
        #expect(engine.state.value(at: try Path("/items/i0")) == .int(2))
        #expect(engine.statistics.refolds == 0)
    }
}
