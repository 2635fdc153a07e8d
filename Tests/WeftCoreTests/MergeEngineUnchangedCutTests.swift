import Testing

@testable import WeftCore

/// Re-folds whose arriving ops all turn out to write nothing (a refused call, a stale transaction, an
/// increment of a non-number) stop right after them: every later op decides as before, except
/// transactions the arriving ops make stale. And the regression cases the stress runs found.
@Suite struct MergeEngineUnchangedCutTests {
    typealias Origin = MergeEngineCutTests.Origin

    static func transfer(_ from: String, _ to: String, _ amount: Int64) -> OpKind {
        .call(
            FunctionCall(
                name: "transfer", version: 1,
                arguments: .object(["from": .string(from), "to": .string(to), "amount": .int(amount)])))
    }

    @Test func aRefusedLateCallStopsTheRefoldAtOnce() throws {
        var a = Origin(1)
        var c = Origin(3)
        var ops = [try a.op(at: 1, "/accounts", .set(.object(["a0": .int(10), "a1": .int(0)])))]
        for millis in 10...40 { ops.append(try a.op(at: UInt64(millis), "/accounts", Self.transfer("a0", "a1", 1))) }
        // Stamped before all of them, it asks for more than a0 holds: refused, and nothing changes.
        let late = try c.op(at: 5, "/accounts", Self.transfer("a0", "a1", 50))
        ops.append(late)
        let engine = MergeEngine(registry: Workload.registry)
        expectFoldOneByOne(ops, engine: engine)
        #expect(engine.outcome(of: late.stamp) == .rejected(.refusedByFunction(name: "transfer")))
        #expect(engine.statistics.refolds == 1)
        #expect(engine.statistics.cutRefolds == 1)
        // The snapshot-free region replays from its set to the late call and one op past it.
        #expect(engine.statistics.replayedOps <= 3)
    }

    @Test func aTransactionMadeStaleByARefusedCallIsStillDecided() throws {
        var a = Origin(1)
        var b = Origin(2)
        var c = Origin(3)
        var ops = [try a.op(at: 1, "/accounts", .set(.object(["a0": .int(10), "a1": .int(0)])))]
        for millis in 10...20 { ops.append(try a.op(at: UInt64(millis), "/accounts", Self.transfer("a0", "a1", 1))) }
        // b had seen every op of a, not c's late call: the rule rejects it now, refused call or not.
        let stale = try b.op(
            at: 30, "/accounts", .transaction(read: VersionVector([a.id: a.sequence]), result: .int(0)))
        ops.append(stale)
        for millis in 31...35 { ops.append(try a.op(at: UInt64(millis), "/accounts", Self.transfer("a0", "a1", 1))) }
        ops.append(try c.op(at: 5, "/accounts", Self.transfer("a0", "a1", 50)))
        let engine = MergeEngine(registry: Workload.registry)
        expectFoldOneByOne(ops, engine: engine)
        #expect(engine.outcome(of: stale.stamp) == .rejected(.staleRead(try Path("/accounts"))))
    }

    /// Workload seeds where an undecided op of the batch was replayed by an earlier re-fold of the same
    /// batch (so the state was not the fold of recorded outcomes) and a cut kept its writes.
    @Test(arguments: [690, 955, 1367, 1585, 1889, 2532, 2636])
    func workloadSeedsEqualTheReferenceFold(seed: Int) {
        let (ops, replicas) = MergeEnginePropertyTests.makeOps(seed: UInt64(seed), count: 60 + seed % 240)
        var rng = SeededGenerator(seed: UInt64(seed) ^ 0xA5A5)
        expectFoldInRandomDeliveries(
            ops, registry: Workload.registry, engines: replicas, rng: &rng, label: "seed \(seed)")
    }

    /// Counter-traffic seeds that found a blind write hidden by a batch that read the node, a rejected
    /// batch re-decided from the wrong part, and the cut above.
    @Test(arguments: [534_602_701, 2034, 7314, 8271, 13063, 16325, 18220, 18879, 20504, 21685, 22976])
    func counterTrafficSeedsEqualTheReferenceFold(seed: Int) {
        var rng = SeededGenerator(seed: UInt64(seed) ^ 0x5EED)
        expectFoldInRandomDeliveries(
            MergeEngineCounterWindowTests.counterTraffic(seed: UInt64(seed), count: 40 + seed % 80),
            registry: FunctionRegistry(), engines: 3, rng: &rng, label: "seed \(seed)")
    }
}
