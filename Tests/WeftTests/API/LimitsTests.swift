import Testing
import WeftCore
import WeftNet
import WeftStore
import WeftSync

@_spi(Engine) @testable import Weft

@Suite struct WeftLimitsTests {
    @Test func limitsAreOrdered() {
        #expect(WeftLimits.transactionRetriesMax > 0)
        #expect(WeftLimits.transactionRetriesMax <= WeftLimits.subscriberEventsBufferedMax)
        #expect(WeftLimits.subscriberEventsCoalescedMax >= 10 * WeftLimits.subscriberEventsBufferedMax)
        #expect(WeftLimits.deliveryStampsMax >= 1)
        #expect(WeftLimits.deliveryStampsMax <= WeftLimits.deliveryStampsScanMax)
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

    /// WeftNet moves bytes and knows nothing of frames: what a session sends in one go (a window of frames
    /// and one largest frame, as the channel queues it) must fit one write.
    @Test func theTransportTakesEverythingASessionSendsInOneGo() {
        #expect(SyncShellLimits.queuedBytesMax <= NetLimits.writeBytesMax)
        #expect(SyncLimits.frameBytesMax <= NetLimits.writeBytesMax)
        #expect(NetLimits.readChunkBytes >= SyncLimits.frameHeaderBytes)
    }

    /// Before authentication: a client's hello fits its reserve, the largest hello fits the pool, and the
    /// pool with every connection's reserve stays a small fixed amount.
    @Test func theHandshakeBudgetFitsAHelloAndStaysSmall() {
        let clientHelloBytes =
            SyncLimits.frameHeaderBytes + 4 + 2 + 8 + 1 + 2 + SyncLimits.nameBytesMax
            + SyncLimits.nonceBytes + 10 + 1
        #expect(clientHelloBytes <= SyncShellLimits.handshakeBytesReserved)
        #expect(SyncLimits.handshakeFrameBytesMax <= SyncShellLimits.handshakeBytesSharedMax)
        let worstCase =
            NetLimits.connectionsMax * SyncShellLimits.handshakeBytesReserved
            + SyncShellLimits.handshakeBytesSharedMax
        #expect(worstCase <= 16 * 1024 * 1024)
        #expect(SyncShellLimits.failedAuthenticationDelayMillisecondsBase > 0)
        #expect(
            SyncShellLimits.failedAuthenticationDelayMillisecondsBase
                <= SyncShellLimits.failedAuthenticationDelayMillisecondsMax)
        #expect(
            SyncShellLimits.failedAuthenticationDelayMillisecondsMax
                < SyncLimits.handshakeTimeoutMillisecondsDefault)
        #expect(SyncShellLimits.failedAuthenticationHostsMax >= 1)
    }
}
