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

    /// A write below the counter after the late one, or a batch that increments the counter and writes
    /// it again, means a re-fold.
    @Test(arguments: [
        (
            "/counters/c",
            OpKind.batch([
                .increment(Path(uncheckedKeys: ["counters", "c"]), by: .int(1), from: .int(0)),
                .set(Path(uncheckedKeys: ["counters", "c"]), .int(3)),
            ]), "/counters/c", OpKind.increment(by: .int(1), from: .int(0))
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

    /// Increments after the late write and then a whole write of the counter (a set, a merge child, or
    /// a transaction that had seen the late write): the increments are decided from the written value,
    /// the whole write hides it, and the state stays as it is.
    @Test(arguments: [
        OpKind.set(.int(9)), .merge([MergeChild(relative: Path(uncheckedKeys: ["c"]), value: .int(9))]),
        .transaction(read: VersionVector(), result: .int(9)),
    ])
    func aWholeWriteAfterTheIncrementsHidesTheLateWrite(hiding: OpKind) throws {
        var a = Origin(1)
        var b = Origin(2)
        let read = VersionVector([b.id: 1, a.id: 3])
        var kind = hiding
        var hidingPath = "/counters/c"
        switch hiding {
        case .transaction(_, let result): kind = .transaction(read: read, result: result)
        case .merge: hidingPath = "/counters"
        default: break
        }
        let ops = [
            try a.op(at: 1, "/counters/c", .set(.string("text"))),
            try a.op(at: 10, "/counters/c", .increment(by: .int(1), from: .int(0))),
            try a.op(at: 11, "/counters/c", .increment(by: .int(2), from: .int(0))),
            try a.op(at: 12, hidingPath, kind),
            try a.op(at: 13, "/counters/c", .increment(by: .int(4), from: .int(0))),
            try b.op(at: 5, "/counters/c", .set(.int(40))),
        ]
        let engine = MergeEngine(registry: FunctionRegistry())
        expectFoldOneByOne(ops, engine: engine)
        #expect(engine.statistics.refolds == 0)
        #expect(engine.outcome(of: ops[1].stamp) == .applied)
        #expect(engine.value(at: try Path("/counters/c")) == .int(13))
    }

    /// Rejected batches after the late write, whose only write at the counter is an increment: one
    /// rejected at the counter stays rejected while its increment still fails there; one rejected
    /// elsewhere stays rejected, and names the counter when its increment there comes first and now
    /// fails. One that would now apply takes a re-fold (its other writes come back).
    @Test(arguments: [
        // Rejected at the counter (text), still failing after text written: no re-fold.
        (Value.string("text"), true, Value.string("late"), 0, "/counters/c"),
        // Rejected at the counter, now a number: it applies, a re-fold.
        (.string("text"), true, .int(40), 1, "/counters/c"),
        // Rejected at the other counter, the counter first and now failing: it names the counter.
        (.int(1), true, .string("late"), 0, "/counters/c"),
        // Rejected at the other counter, the counter second: unchanged.
        (.int(1), false, .string("late"), 0, "/counters/d"),
    ])
    func aRejectedBatchIncrementingTheCounterStaysRejected(
        before: Value, counterFirst: Bool, written: Value, refolds: Int, reason: String
    ) throws {
        var a = Origin(1)
        var b = Origin(2)
        let counter = Path(uncheckedKeys: ["counters", "c"])
        let other = Path(uncheckedKeys: ["counters", "d"])
        let parts: [Write] = [
            .increment(counter, by: .int(5), from: .int(0)), .increment(other, by: .int(1), from: .int(0)),
        ]
        let ops = [
            try a.op(at: 1, "/counters/c", .set(before)),
            try a.op(at: 2, "/counters/d", .set(before.isNumber ? .string("text") : .int(1))),
            try a.op(at: 10, "/counters/c", .increment(by: .int(1), from: .int(0))),
            try a.op(at: 11, "/", .batch(counterFirst ? parts : parts.reversed())),
            try a.op(at: 12, "/items/i0", .set(.int(2))),
            try b.op(at: 5, "/counters/c", .set(written)),
        ]
        let engine = MergeEngine(registry: FunctionRegistry())
        expectFoldOneByOne(ops, engine: engine)
        #expect(engine.statistics.refolds == refolds)
        if refolds == 0 { #expect(engine.outcome(of: ops[3].stamp) == .rejected(.notANumber(try Path(reason)))) }
    }
}
