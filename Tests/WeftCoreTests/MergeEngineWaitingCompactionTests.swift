import Testing
import WeftTestSupport

@testable import WeftCore

/// A call waiting for a function this replica lacks must still run at its place in stamp order once the
/// function is registered: compaction stops below it instead of folding the ops around it.
@Suite struct MergeEngineWaitingCompactionTests {
    static let double: FunctionRegistry.Function = { node, _ in
        guard case .int(let value) = node else { return nil }
        return .int(value * 2)
    }

    static let origin = ReplicaID(rawValue: 7)!

    static func op(_ sequence: UInt64, _ path: String, _ kind: OpKind) throws -> Op {
        try .make(kind, at: path, origin: origin, millis: 1_000 + sequence, sequence: sequence)
    }

    static func ops() throws -> [Op] {
        [
            try op(1, "/n", .set(.int(1))),
            try op(2, "/n", .call(FunctionCall(name: "double", version: 1, arguments: .null))),
            try op(3, "/n", .increment(by: .int(1), from: .int(0))),
            try op(4, "/m", .set(.int(5))),
        ]
    }

    @Test func compactionStopsBelowAWaitingCallWhichThenRunsInPlace() throws {
        let ops = try Self.ops()
        let engine = MergeEngine(registry: FunctionRegistry())
        engine.apply(ops)
        #expect(engine.outcome(of: ops[1].stamp) == .waiting)
        #expect(engine.compactionFrontier(upTo: ops[3].stamp) == ops[0].stamp)
        #expect(engine.compact(upTo: ops[0].stamp) == 1)
        // Nothing more to fold while the call waits.
        #expect(engine.compactionFrontier(upTo: ops[3].stamp) == nil)
        engine.register(name: "double", version: 1, Self.double)
        var registry = FunctionRegistry()
        registry.register(name: "double", version: 1, Self.double)
        let expected = ReferenceFold.fold(ops, registry: registry)
        #expect(engine.state == expected.state)
        #expect(engine.state.value(at: try Path("/n")) == .int(3))
        #expect(engine.outcome(of: ops[1].stamp) == .applied)
        // Once the call ran, everything stable folds.
        #expect(engine.compactionFrontier(upTo: ops[3].stamp) == ops[3].stamp)
        engine.compact(upTo: ops[3].stamp)
        #expect(engine.base == expected.state)
    }

    @Test func withNothingWaitingTheStableFrontierIsUsedAsIs() throws {
        let ops = try Self.ops()
        var registry = FunctionRegistry()
        registry.register(name: "double", version: 1, Self.double)
        let engine = MergeEngine(registry: registry)
        engine.apply(ops)
        #expect(engine.compactionFrontier(upTo: ops[2].stamp) == ops[2].stamp)
        engine.compact(upTo: ops[2].stamp)
        #expect(engine.compactionFrontier(upTo: ops[2].stamp) == nil)
        #expect(engine.compactionFrontier(upTo: ops[3].stamp) == ops[3].stamp)
    }

    @Test func aWaitingCallFirstInTheLogLeavesNothingToFold() throws {
        let call = try Self.op(1, "/n", .call(FunctionCall(name: "double", version: 1, arguments: .null)))
        let later = try Self.op(2, "/n", .set(.int(4)))
        let engine = MergeEngine(registry: FunctionRegistry())
        engine.apply([call, later])
        #expect(engine.compactionFrontier(upTo: later.stamp) == nil)
    }
}
