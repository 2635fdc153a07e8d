import PropertyBased
import Testing

@testable import WeftCore

/// Every replica that receives the same ops — in any order, in any batches, with duplicates — lands
/// exactly where the reference fold lands.
@Suite struct MergeEnginePropertyTests {
    /// Delivers `ops` to a fresh engine in a random order, random batch sizes, with random duplicates,
    /// and checks the engine's summaries against its log after every batch.
    static func deliver(_ ops: [Op], rng: inout SeededGenerator, engine: MergeEngine) {
        for batch in deliveries(ops, rng: &rng) {
            engine.apply(batch)
            expectInvariants(engine)
        }
    }

    /// The batches ``deliver(_:rng:engine:)`` applies: `ops` in a random order, with random duplicates,
    /// cut into batches of random sizes.
    static func deliveries(_ ops: [Op], rng: inout SeededGenerator) -> [[Op]] {
        var shuffled = ops
        for op in ops where rng.chance(0.2) { shuffled.append(op) }
        rng.shuffle(&shuffled)
        var batches: [[Op]] = []
        var start = 0
        while start < shuffled.count {
            let size = 1 + Int(rng.below(UInt64(min(64, shuffled.count - start))))
            batches.append(Array(shuffled[start..<(start + size)]))
            start += size
        }
        return batches
    }

    static func makeOps(seed: UInt64, count: Int) -> (ops: [Op], replicas: Int) {
        var rng = SeededGenerator(seed: seed)
        let replicas = 3 + Int(rng.below(3))
        var workload = Workload(seed: seed, replicas: replicas)
        return ((0..<count).map { _ in workload.next() }, replicas)
    }

    @Test func everyReplicaEqualsTheReferenceFoldWhateverTheDeliveryOrder() async {
        await propertyCheck(count: 500, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            await Task.yield()  // CPU-bound cases: the run's other tests go between them
            let (ops, replicas) = Self.makeOps(seed: UInt64(seed), count: 60 + seed % 140)
            let expected = ReferenceFold.fold(ops, registry: Workload.registry)
            var rng = SeededGenerator(seed: UInt64(seed) ^ 0xA5A5)
            var digests = Set<StateDigest>()
            for _ in 0..<replicas {
                let engine = MergeEngine(registry: Workload.registry)
                Self.deliver(ops, rng: &rng, engine: engine)
                #expect(engine.state == expected.state, "seed \(seed)")
                for op in ops { #expect(engine.outcome(of: op.stamp) == expected.outcomes[op.stamp], "seed \(seed)") }
                digests.insert(engine.digest)
            }
            #expect(digests == [StateDigest(of: expected.state)], "seed \(seed)")
        }
    }

    @Test func countersEqualTheExactSumOfIncrementsAfterTheLastSet() async {
        var shape = Workload.Shape()
        shape.mix.transactions = 0
        shape.mix.batches = 0
        await propertyCheck(count: 500, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            await Task.yield()  // CPU-bound cases: the run's other tests go between them
            var workload = Workload(seed: UInt64(seed), replicas: 4, shape: shape)
            let ops = (0..<150).map { _ in workload.next() }
            let engine = MergeEngine(registry: Workload.registry)
            var rng = SeededGenerator(seed: UInt64(seed))
            Self.deliver(ops, rng: &rng, engine: engine)
            for counter in 0..<shape.counters {
                let path = Path(uncheckedKeys: ["counters", "c\(counter)"])
                let touching = ops.filter { $0.path == path }.sorted { $0.stamp < $1.stamp }
                var expected: Number? = nil
                var exact = true
                for op in touching {
                    switch op.kind {
                    case .set(let value): expected = Number(value)
                    case .increment(let by, let from):
                        if case .double = by { exact = false }
                        expected = (expected ?? from).adding(by)
                    default: exact = false
                    }
                }
                guard exact else { continue }
                #expect(engine.value(at: path) == (expected?.value ?? .null), "seed \(seed) counter \(counter)")
            }
        }
    }

    @Test func registeredTransfersNeverDriveABalanceBelowZero() async {
        var shape = Workload.Shape()
        shape.mix.calls = 30
        shape.accountIncrementShare = 0
        await propertyCheck(count: 500, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            await Task.yield()  // CPU-bound cases: the run's other tests go between them
            var workload = Workload(seed: UInt64(seed), replicas: 4, shape: shape)
            let traffic = (0..<120).map { _ in workload.next() }
            // A bank opens with 50 in each account, before any traffic.
            let funding = Op(
                stamp: Stamp(millis: 1, counter: 0, replica: ReplicaID(rawValue: 1)!), sequence: 1,
                path: Path(uncheckedKeys: ["accounts"]),
                kind: .set(.object(["a0": .int(50), "a1": .int(50), "a2": .int(50), "a3": .int(50)])))
            let ops = [funding] + traffic
            let engine = MergeEngine(registry: Workload.registry)
            var rng = SeededGenerator(seed: UInt64(seed) &+ 1)
            Self.deliver(ops, rng: &rng, engine: engine)
            let accounts = engine.value(at: Path(uncheckedKeys: ["accounts"]))
            // Only when nothing but transfers touched the accounts (batches and increments can also).
            let transfersOnly = !traffic.contains { op in
                if case .call = op.kind { return false }
                return op.anchors.contains { $0.keys.first == "accounts" }
            }
            #expect(transfersOnly, "seed \(seed): only transfers may touch the accounts in this workload")
            #expect(traffic.contains { if case .call = $0.kind { true } else { false } })
            var total: Int64 = 0
            for (_, balance) in accounts.children {
                guard case .int(let amount) = balance else {
                    Issue.record("seed \(seed): balance \(balance) is not an integer")
                    continue
                }
                #expect(amount >= 0, "seed \(seed)")
                total += amount
            }
            #expect(total == 200, "seed \(seed): transfers move money, they never make or lose it")
            #expect(engine.state == ReferenceFold.fold(ops, registry: Workload.registry).state, "seed \(seed)")
        }
    }

    @Test func duplicateDeliveryChangesNothing() {
        let (ops, _) = Self.makeOps(seed: 99, count: 300)
        let engine = MergeEngine(registry: Workload.registry)
        engine.apply(ops)
        let before = engine.digest
        let report = engine.apply(ops.reversed())
        #expect(report.duplicates == ops.count)
        #expect(report.changes.isEmpty)
        #expect(engine.digest == before)
    }

    @Test func compactionKeepsTheStateAndLateOpsStillFoldExactly() async {
        await propertyCheck(count: 200, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            await Task.yield()  // CPU-bound cases: the run's other tests go between them
            let (ops, _) = Self.makeOps(seed: UInt64(seed), count: 200)
            let sorted = ops.sorted { $0.stamp < $1.stamp }
            let frontier = sorted[99].stamp
            let engine = MergeEngine(registry: Workload.registry)
            var rng = SeededGenerator(seed: UInt64(seed) &+ 2)
            Self.deliver(Array(sorted[..<100]) + Array(sorted[150...]), rng: &rng, engine: engine)
            let before = engine.state
            engine.compact(upTo: frontier)
            expectInvariants(engine)
            #expect(engine.state == before)
            #expect(engine.opCount == 50)
            Self.deliver(Array(sorted[100..<150]), rng: &rng, engine: engine)
            #expect(engine.state == ReferenceFold.fold(ops, registry: Workload.registry).state, "seed \(seed)")
            let refused = engine.apply([sorted[3]])
            #expect(refused.duplicates + refused.refused.count == 1)
        }
    }

    @Test func aCallForAMissingFunctionWaitsUntilTheFunctionIsRegistered() {
        let (ops, _) = Self.makeOps(seed: 5, count: 200)
        let engine = MergeEngine()
        engine.apply(ops)
        let calls = ops.filter { if case .call = $0.kind { true } else { false } }
        #expect(!calls.isEmpty)
        for call in calls { #expect(engine.outcome(of: call.stamp) == .waiting) }
        engine.register(name: "transfer", version: 1, Workload.transfer)
        #expect(engine.state == ReferenceFold.fold(ops, registry: Workload.registry).state)
    }
}
