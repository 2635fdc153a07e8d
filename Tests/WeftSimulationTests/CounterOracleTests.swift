import Testing
import WeftTestSupport
import WeftCore
@testable import WeftSimulation

@Suite struct CounterOracleTests {
    static let replica = ReplicaID(rawValue: 7)!

    static func op(_ index: Int, _ path: String, _ kind: OpKind) -> Op {
        .make(
            kind, at: (try? Path(path)) ?? .root, origin: replica, millis: 100 + UInt64(index),
            sequence: UInt64(index + 1))
    }

    static func expected(_ ops: [Op]) -> Value {
        let fold = ReferenceFold.fold(ops, registry: Workload.registry)
        return CounterOracle.expected(sortedOps: ops, foldOutcomes: fold.outcomes, registry: Workload.registry)
    }

    @Test func aCounterIsTheSumOfItsIncrementsAfterItsLastSet() {
        let ops = [
            Self.op(0, "/counters/c0", .increment(by: .int(5), from: .int(0))),
            Self.op(1, "/counters/c0", .set(.int(100))),
            Self.op(2, "/counters/c0", .increment(by: .int(3), from: .int(0))),
            Self.op(3, "/counters/c0", .increment(by: .int(-1), from: .int(0))),
            Self.op(4, "/counters/c1", .increment(by: .int(2), from: .int(40))),
            Self.op(5, "/items/i0/name", .set(.string("ignored"))),
        ]
        let tree = Self.expected(ops)
        #expect(tree.value(at: try! Path("/counters/c0")) == .int(102))
        #expect(tree.value(at: try! Path("/counters/c1")) == .int(42))
        #expect(tree["items"] == .null)
    }

    @Test func aBatchWithAnIncrementOfAStringIsDroppedWhole() {
        let ops = [
            Self.op(0, "/counters/c0", .set(.string("text"))),
            Self.op(
                1, "/counters",
                .batch([
                    .increment(try! Path("/counters/c1"), by: .int(4), from: .int(0)),
                    .increment(try! Path("/counters/c0"), by: .int(1), from: .int(0)),
                ])),
        ]
        let tree = Self.expected(ops)
        #expect(tree.value(at: try! Path("/counters/c1")) == .null)
        #expect(tree.value(at: try! Path("/counters/c0")) == .string("text"))
    }

    @Test func theOracleAgreesWithTheFoldOnWorkloadTraffic() {
        var workload = Workload(seed: 5, replicas: 4)
        let ops = (0..<2_000).map { _ in workload.next() }.sorted { $0.stamp < $1.stamp }
        let fold = ReferenceFold.fold(ops, registry: Workload.registry)
        let tree = CounterOracle.expected(sortedOps: ops, foldOutcomes: fold.outcomes, registry: Workload.registry)
        for root in CounterOracle.roots { #expect(tree[root] == fold.state[root], "/\(root)") }
        #expect(!tree["counters"].isNull)
    }

    @Test func theBankRuleSeesOverdraftsAndLostMoney() {
        let funded = Value.object(["b0": .int(50), "b1": .int(50), "b2": .int(50), "b3": .int(50)])
        #expect(CounterOracle.bankViolation(in: .object(["bank": funded])) == nil)
        #expect(CounterOracle.bankViolation(in: .null) == nil)
        var overdrawn = funded
        overdrawn.write(.int(-5), at: ["b0"][...])
        overdrawn.write(.int(105), at: ["b1"][...])
        #expect(CounterOracle.bankViolation(in: .object(["bank": overdrawn]))?.contains("below zero") == true)
        var leaking = funded
        leaking.write(.int(49), at: ["b2"][...])
        #expect(CounterOracle.bankViolation(in: .object(["bank": leaking]))?.contains("sum") == true)
    }
}
