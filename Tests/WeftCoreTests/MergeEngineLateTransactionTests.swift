import Testing

@testable import WeftCore

/// Late transactions whose validity the log decides, and which no later op can have counted on: a stale
/// one writes nothing, and a valid one overwritten by the next op at its node is hidden, both without a
/// re-fold. Any other late transaction is re-folded.
@Suite struct MergeEngineLateTransactionTests {
    typealias Origin = MergeEngineCutTests.Origin

    /// `a` writes the item, `b` runs a transaction on it at 5 having seen only its own ops, or also
    /// `a`'s first write, and `a` writes the item again at 10 and the item's neighbour at 11.
    static func ops(sawFirstWrite: Bool, later: OpKind) throws -> (ops: [Op], late: Op) {
        var a = Origin(1)
        var b = Origin(2)
        var ops = [try a.op(at: 1, "/items/i0", .set(.object(["name": .string("first")])))]
        let read = VersionVector(sawFirstWrite ? [a.id: 1, b.id: 0] : [b.id: 0])
        let late = try b.op(at: 5, "/items/i0", .transaction(read: read, result: .object(["name": .string("tx")])))
        ops.append(try a.op(at: 10, "/items/i0", later))
        ops.append(try a.op(at: 11, "/items/i1", .set(.int(1))))
        ops.append(late)
        return (ops, late)
    }

    @Test(arguments: [false, true])
    func aLateTransactionOverwrittenByTheNextSetNeedsNoRefold(sawFirstWrite: Bool) throws {
        let (ops, late) = try Self.ops(sawFirstWrite: sawFirstWrite, later: .set(.string("later")))
        let engine = MergeEngine(registry: FunctionRegistry())
        expectFoldOneByOne(ops, engine: engine)
        let expected: Outcome = sawFirstWrite ? .applied : .rejected(.staleRead(try Path("/items/i0")))
        #expect(engine.outcome(of: late.stamp) == expected)
        #expect(engine.state.value(at: try Path("/items/i0")) == .string("later"))
        #expect(engine.statistics.refolds == 0)
        #expect(engine.statistics.hiddenWrites == 1)
    }

    /// A stale transaction writes nothing whatever comes after it; a valid one under a later write
    /// below its node is re-folded (the later write changes part of what it wrote).
    @Test func aStaleTransactionIsRejectedWhateverFollowsAndAValidOneBelowALaterWriteIsRefolded() throws {
        let later = OpKind.merge([MergeChild(relative: try Path("score"), value: .int(3))])
        for sawFirstWrite in [false, true] {
            let (ops, late) = try Self.ops(sawFirstWrite: sawFirstWrite, later: later)
            let engine = MergeEngine(registry: FunctionRegistry())
            expectFoldOneByOne(ops, engine: engine)
            #expect(engine.statistics.refolds == (sawFirstWrite ? 1 : 0))
            let name: Value = sawFirstWrite ? .string("tx") : .string("first")
            #expect(engine.state.value(at: try Path("/items/i0")) == .object(["name": name, "score": .int(3)]))
            #expect(engine.outcome(of: late.stamp) != nil)
        }
    }

    /// A later transaction at the node that had not seen the late one is stale now, whatever the late one
    /// did: it is rejected and the late one's result stays, without a re-fold.
    @Test func aLaterTransactionThatHadNotSeenItIsStaleNow() throws {
        var a = Origin(1)
        var b = Origin(2)
        var ops = [try a.op(at: 1, "/items/i0", .set(.int(1)))]
        let late = try b.op(at: 5, "/items/i0", .transaction(read: VersionVector([a.id: 1]), result: .int(2)))
        let later = try a.op(at: 10, "/items/i0", .transaction(read: VersionVector([a.id: 1]), result: .int(3)))
        ops += [later, late]
        let engine = MergeEngine(registry: FunctionRegistry())
        expectFoldOneByOne(ops, engine: engine)
        #expect(engine.outcome(of: late.stamp) == .applied)
        #expect(engine.outcome(of: later.stamp) == .rejected(.staleRead(try Path("/items/i0"))))
        #expect(engine.state.value(at: try Path("/items/i0")) == .int(2))
        #expect(engine.statistics.refolds == 0)
    }

    /// A late set followed at its node by a transaction: one that had seen the set writes the node wholly
    /// whatever the set left there, and stays valid (the set is hidden, as it is when such a transaction
    /// comes after the next set); one that had not is stale now: before the next set it is rejected
    /// without a re-fold, after it the set is re-folded.
    @Test(arguments: [(true, true), (true, false), (false, true), (false, false)])
    func aLateSetUnderALaterTransactionIsHiddenWhenTheTransactionHadSeenIt(sawIt: Bool, transactionFirst: Bool) throws {
        var a = Origin(1)
        var b = Origin(2)
        let late = try b.op(at: 5, "/items/i0/name", .set(.string("late")))
        let read = VersionVector(sawIt ? [b.id: 1] : [:])
        let transaction = OpKind.transaction(read: read, result: .string("tx"))
        let set = OpKind.set(.string("set"))
        let ops = [
            try a.op(at: 10, "/items/i0/name", transactionFirst ? transaction : set),
            try a.op(at: 11, "/items/i0/name", transactionFirst ? set : transaction),
            try a.op(at: 12, "/items/i1", .set(.int(1))),
            late,
        ]
        let engine = MergeEngine(registry: FunctionRegistry())
        expectFoldOneByOne(ops, engine: engine)
        #expect(engine.statistics.refolds == (sawIt || transactionFirst ? 0 : 1))
        #expect(engine.statistics.hiddenWrites == (sawIt ? 1 : 0))
        if !sawIt, transactionFirst {
            #expect(engine.outcome(of: ops[0].stamp) == .rejected(.staleRead(try Path("/items/i0/name"))))
        }
    }
}
