import Testing
@testable import WeftSync

@Suite struct SyncLimitsTests {
    @Test func limitsAreOrdered() {
        #expect(SyncLimits.batchBytesMax > 0)
        #expect(SyncLimits.batchBytesMax <= SyncLimits.windowBytesMax)
    }
}
