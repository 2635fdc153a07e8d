import Testing

@testable import WeftNet
import WeftSync

@Suite(.timeLimit(.minutes(1))) struct NetLimitsTests {
    @Test func reconnectDelaysAreOrderedAndPositive() {
        #expect(NetLimits.reconnectDelayMillisecondsMin > 0)
        #expect(NetLimits.reconnectDelayMillisecondsMin <= NetLimits.reconnectDelayMillisecondsMax)
    }

    @Test func aConnectionCountsAsHealthyOnlyAfterOutlastingTheShortestDelay() {
        #expect(NetLimits.reconnectHealthyMillisecondsMin > NetLimits.reconnectDelayMillisecondsMin)
    }

    @Test func aFramePayloadIsTheFrameMinusItsHeader() {
        #expect(NetLimits.frameHeaderBytes == MemoryLayout<UInt32>.size)
        #expect(NetLimits.framePayloadBytesMax == NetLimits.frameBytesMax - NetLimits.frameHeaderBytes)
        #expect(NetLimits.framePayloadBytesMax > 0)
        #expect(NetLimits.framePayloadBytesMax <= Int(UInt32.max))
    }

    @Test func theTransportCarriesEveryFrameTheSyncProtocolMayProduce() {
        #expect(NetLimits.frameBytesMax >= SyncLimits.frameBytesMax)
        #expect(NetLimits.frameBytesMax >= SyncLimits.batchBytesMax + NetLimits.frameHeaderBytes)
    }

    @Test func writeBufferThresholdsAreOrderedWithRoomForOneLargestFrame() {
        #expect(NetLimits.writeBufferBytesLow > 0)
        #expect(NetLimits.writeBufferBytesLow < NetLimits.writeBufferBytesMax)
        #expect(NetLimits.writeBufferBytesMax + NetLimits.frameBytesMax <= NetLimits.writeBufferBytesCeiling)
        // The whole ceiling fits one uv_buf_t length (an unsigned 32-bit count).
        #expect(NetLimits.writeBufferBytesCeiling <= Int(UInt32.max))
    }

    @Test func oneReadIsSmallerThanTheBuffersItFeeds() {
        #expect(NetLimits.readChunkBytes > NetLimits.frameHeaderBytes)
        #expect(NetLimits.readChunkBytes <= NetLimits.writeBufferBytesLow)
        #expect(NetLimits.readChunkBytes <= Int(UInt32.max))
    }

    @Test func countsAndTimeoutsArePositive() {
        #expect(NetLimits.connectionsMax > 0)
        #expect(NetLimits.listenBacklog > 0)
        #expect(NetLimits.listenBacklog <= NetLimits.connectionsMax)
        #expect(NetLimits.executeQueueClosuresMax > 0)
        #expect(NetLimits.connectTimeoutMillisecondsMax > NetLimits.reconnectDelayMillisecondsMin)
        #expect(NetLimits.closeLingerMillisecondsMax > 0)
        #expect(NetLimits.hostBytesMax == 253)
    }
}
