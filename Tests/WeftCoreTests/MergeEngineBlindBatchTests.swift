import Testing

@testable import WeftCore

/// Late batches of blind writes (sets and merges, no increment) on disjoint nodes always apply, so the
/// engine takes them write by write, as it does a late merge: in order, hidden by a later whole write,
/// or re-folded in its region alone.
@Suite struct MergeEngineBlindBatchTests {
    typealias Origin = MergeEngineCutTests.Origin

    func expectFold(_ ops: [Op], engine: MergeEngine) {
        for op in ops { engine.apply([op]) }
        let expected = ReferenceFold.fold(ops, registry: FunctionRegistry())
        #expect(engine.state == expected.state)
        for op in ops { #expect(engine.outcome(of: op.stamp) == expected.outcomes[op.stamp], "\(op.stamp)") }
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
        expectFold(ops, engine: engine)
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
        expectFold(ops, engine: engine)
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
            MergeEngine.disjointBlindWrites(
                [.set(try Path("/a"), .null), .set(try Path("/a/x"), .int(2))], anchorCount: 2) == nil)
        let engine = MergeEngine(registry: FunctionRegistry())
        expectFold(ops, engine: engine)
        #expect(engine.state.value(at: try Path("/a/x")) == .int(3))
    }
}
