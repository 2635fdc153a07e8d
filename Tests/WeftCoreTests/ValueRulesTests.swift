import Testing

@testable import WeftCore

/// The rules of the tree, as both writes (`ValueCheck`) and function results (the fold) check them.
@Suite struct ValueRulesTests {
    @Test func aNodeBreaksARuleByItselfOrThroughItsChildrensKeys() throws {
        #expect(Value.int(1).brokenRule(depth: 0) == nil)
        #expect(Value.double(0.5).brokenRule(depth: 31) == nil)
        #expect(Value.double(.infinity).brokenRule(depth: 1)?.rule == .nonFiniteNumber(.infinity))
        let long = String(repeating: "x", count: CoreLimits.stringBytesMax + 1)
        #expect(Value.string(long).brokenRule(depth: 1)?.rule == .stringTooLong(bytes: CoreLimits.stringBytesMax + 1))
        let object = Value.object(["a": .int(1)])
        #expect(object.brokenRule(depth: CoreLimits.pathDepthMax - 1) == nil)
        let tooDeep = try #require(object.brokenRule(depth: CoreLimits.pathDepthMax))
        #expect(tooDeep.rule == .tooDeep)
        #expect(tooDeep.key == "a")
        let badKey = try #require(Value.object([Key(unchecked: "a.b"): .int(1)]).brokenRule(depth: 0))
        guard case .invalidKey = badKey.rule else {
            Issue.record("\(badKey.rule)")
            return
        }
        #expect(badKey.key == Key(unchecked: "a.b"))
        // Only the node itself: a child's infinite number is the child's to report.
        #expect(Value.object(["a": .double(.nan)]).brokenRule(depth: 0) == nil)
    }
}
