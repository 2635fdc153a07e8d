import Testing
@testable import WeftStore

@Suite struct StoreLimitsTests {
    @Test func limitsAreOrdered() {
        #expect(StoreLimits.groupCommitOpsMax > 0)
        #expect(StoreLimits.groupCommitOpsMax <= StoreLimits.pendingOpsMax)
    }
}
