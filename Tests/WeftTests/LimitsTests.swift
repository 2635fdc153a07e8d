import Testing
import WeftCore
import WeftStore

@testable import Weft

@Suite struct WeftLimitsTests {
    @Test func limitsAreOrdered() {
        #expect(WeftLimits.transactionRetriesMax > 0)
        #expect(WeftLimits.transactionRetriesMax <= WeftLimits.subscriberEventsBufferedMax)
        #expect(WeftLimits.subscriberEventsCoalescedMax >= 10 * WeftLimits.subscriberEventsBufferedMax)
    }

    @Test func replicaLimitsRelateToTheStoresLimits() {
        #expect(WeftLimits.loadSliceRowsMax >= 1)
        #expect(WeftLimits.loadSliceRowsMax <= StoreLimits.opsPerQueryMax)
        #expect(WeftLimits.preservedRegionNodesMax >= 1)
        #expect(WeftLimits.changeBatchesQueuedMax >= 1)
        #expect(WeftLimits.syncStatusUpdatesBufferedMax >= 1)
        // An array nested to the deepest path takes one attempt per level, and one more.
        #expect(WeftLimits.decodingAttemptsMax > CoreLimits.pathDepthMax)
        #expect(WeftLimits.receiptsTrackedMax >= StoreLimits.pendingOpsMax)
        #expect(WeftLimits.groupCommitDelayMillisecondsMax >= StoreLimits.groupCommitDelayMillisecondsMax)
        #expect(StoreLimits.groupCommitOpsMax <= StoreLimits.pendingOpsMax)
    }

    @Test func optionsAreClampedToTheLimits() {
        var options = ReplicaOptions()
        options.groupCommitDelayMilliseconds = 10_000
        options.groupCommitOpsMax = 1_000_000
        options.pendingOpsMax = 1
        let clamped = options.clamped
        #expect(clamped.groupCommitDelayMilliseconds == WeftLimits.groupCommitDelayMillisecondsMax)
        #expect(clamped.groupCommitOpsMax == StoreLimits.groupCommitOpsMax)
        #expect(clamped.pendingOpsMax == clamped.groupCommitOpsMax)
    }
}
