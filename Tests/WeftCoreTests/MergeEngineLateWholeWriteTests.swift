import Testing

@testable import WeftCore

/// A late whole write of a counter (a set, or a valid transaction) followed there only by increments,
/// with nothing later above or below: the increments are replayed on the counter alone, in stamp order,
/// from the written value, without a re-fold.
@Suite struct MergeEngineLateWholeWriteTests {
    typealias Origin = MergeEngineCutTests.Origin

    /// The counter held `before` from 1 on, increments came at 10–12, and a late write at 5 leaves
    /// `written`; a later late increment at 7 then checks that outcomes and null marks were kept right
    /// (after a written null, the increment at 10 met null until the one at 7 came).
    @Test(arguments: [
        (Value.string("text"), Value.int(5), Value.int(5 + 3 + 4)),
        (.int(1), .null, .int(200 + 4 + 3)),
        (.int(1), .string("text"), .string("text")),
        (.null, .double(0.5), .double(0.5 + 3 + 4)),
    ])
    func theIncrementsAfterALateSetAreReplayedOnTheCounter(before: Value, written: Value, expected: Value) throws {
        var a = Origin(1)
        var b = Origin(2)
        var ops = [try a.op(at: 1, "/counters/c", .set(before))]
        for millis in 10...12 {
            ops.append(try a.op(at: UInt64(millis), "/counters/c", .increment(by: .int(1), from: .int(100))))
        }
        ops.append(try a.op(at: 13, "/items/i0", .set(.int(1))))
        let engine = MergeEngine(registry: FunctionRegistry())
        engine.apply(ops)
        let late = try b.op(at: 5, "/counters/c", .set(written))
        engine.apply([late])
        #expect(engine.statistics.refolds == 0)
        #expect(engine.statistics.counterShortcuts == 1)
        #expect(engine.incrementsFromNull == Set(written.isNull ? [ops[1].stamp] : []))
        let increment = try b.op(at: 7, "/counters/c", .increment(by: .int(4), from: .int(200)))
        engine.apply([increment])
        let all = ops + [late, increment]
        let fold = ReferenceFold.fold(all, registry: engine.registry)
        #expect(engine.state == fold.state)
        #expect(engine.value(at: try Path("/counters/c")) == expected)
        for op in all { #expect(engine.outcome(of: op.stamp) == fold.outcomes[op.stamp], "\(op.stamp)") }
        // Only the first increment after null met it: the late one at 7 once it came.
        let metNull = written.isNull ? [increment.stamp] : []
        #expect(engine.incrementsFromNull == Set(metNull))
    }

    @Test func aValidTransactionBeforeIncrementsIsReplayedLikeASet() throws {
        var a = Origin(1)
        var b = Origin(2)
        let ops = [
            try a.op(at: 1, "/counters/c", .set(.string("text"))),
            try a.op(at: 10, "/counters/c", .increment(by: .int(1), from: .int(0))),
            try a.op(at: 11, "/counters/c", .increment(by: .int(2), from: .int(0))),
            try b.op(at: 5, "/counters/c", .transaction(read: VersionVector([a.id: 1]), result: .int(40))),
        ]
        let engine = MergeEngine(registry: FunctionRegistry())
        expectFoldOneByOne(ops, engine: engine)
        #expect(engine.value(at: try Path("/counters/c")) == .int(43))
        #expect(engine.statistics.refolds == 0)
    }

    /// Anything but increments after the write, or a write below the counter after it, means a re-fold.
    @Test(arguments: [
        (
            "/counters/c", OpKind.increment(by: .int(1), from: .int(0)), "/counters/c",
            OpKind.set(.int(9))
        ),
        ("/counters/c/x", .set(.int(1)), "/counters/c", .increment(by: .int(1), from: .int(0))),
    ])
    func otherOpsAfterTheWriteMeanARefold(
        firstPath: String, first: OpKind, secondPath: String, second: OpKind
    ) throws {
        var a = Origin(1)
        var b = Origin(2)
        let ops = [
            try a.op(at: 1, "/counters/c", .set(.int(1))),
            try a.op(at: 10, firstPath, first),
            try a.op(at: 11, secondPath, second),
            try b.op(at: 5, "/counters/c", .set(.int(50))),
        ]
        let engine = MergeEngine(registry: FunctionRegistry())
        expectFoldOneByOne(ops, engine: engine)
        #expect(engine.statistics.refolds == 1)
    }

    /// An applied batch whose only write at the counter is an increment takes part in the replay while it
    /// still succeeds; after text it would fail (and take back its item), which needs a re-fold.
    @Test(arguments: [(Value.int(40), 0), (.string("text"), 1)])
    func anAppliedBatchIncrementingTheCounterIsReplayedWhileItSucceeds(written: Value, refolds: Int) throws {
        var a = Origin(1)
        var b = Origin(2)
        let ops = [
            try a.op(at: 1, "/counters/c", .set(.int(1))),
            try a.op(at: 10, "/counters/c", .increment(by: .int(1), from: .int(0))),
            try a.op(
                at: 11, "/",
                .batch([
                    .increment(try Path("/counters/c"), by: .int(5), from: .int(0)),
                    .set(try Path("/items/i0"), .int(2)),
                ])),
            try a.op(at: 12, "/counters/c", .increment(by: .int(2), from: .int(0))),
            try b.op(at: 5, "/counters/c", .set(written)),
        ]
        let engine = MergeEngine(registry: FunctionRegistry())
        expectFoldOneByOne(ops, engine: engine)
        #expect(engine.statistics.refolds == refolds)
        if refolds == 0 { #expect(engine.value(at: try Path("/counters/c")) == .int(48)) }
    }
}
