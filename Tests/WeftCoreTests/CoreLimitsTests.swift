import Testing
@testable import WeftCore

@Suite struct CoreLimitsTests {
    @Test func limitsRelateAsTheDataModelSays() {
        #expect(CoreLimits.keyBytesMax == 768)
        #expect(CoreLimits.pathDepthMax == 32)
        #expect(CoreLimits.stringBytesMax == 10 * 1024 * 1024)
        #expect(CoreLimits.jsonNestingMax == CoreLimits.pathDepthMax + 1)
        #expect(CoreLimits.stringBytesMax < CoreLimits.opBytesMax)
        #expect(CoreLimits.opBytesMax <= CoreLimits.jsonBytesMax)
        #expect(CoreLimits.stampMillisMax == (1 << 48) - 1)
        #expect(CoreLimits.driftMillisMaxDefault < CoreLimits.stampMillisMax)
        #expect(CoreLimits.batchPartsMax <= CoreLimits.objectChildrenMax)
        #expect(CoreLimits.functionNameBytesMax <= CoreLimits.keyBytesMax)
    }
}
