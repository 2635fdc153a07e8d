import Testing

@testable import WeftNet

@Suite(.timeLimit(.minutes(5))) struct NetLimitsTests {
    @Test func reconnectDelaysAreOrderedAndPositive() {
        #expect(NetLimits.reconnectDelayMillisecondsMin > 0)
        #expect(NetLimits.reconnectDelayMillisecondsMin <= NetLimits.reconnectDelayMillisecondsMax)
    }

    @Test func aConnectionCountsAsHealthyOnlyAfterOutlastingTheShortestDelay() {
        #expect(NetLimits.reconnectHealthyMillisecondsMin > NetLimits.reconnectDelayMillisecondsMin)
    }

    @Test func writeBufferThresholdsAreOrderedWithRoomForOneLargestWrite() {
        #expect(NetLimits.writeBytesMax > 0)
        #expect(NetLimits.writeBufferBytesLow > 0)
        #expect(NetLimits.writeBufferBytesLow < NetLimits.writeBufferBytesMax)
        #expect(NetLimits.writeBufferBytesMax + NetLimits.writeBytesMax <= NetLimits.writeBufferBytesCeiling)
        // The whole ceiling fits one uv_buf_t length (an unsigned 32-bit count).
        #expect(NetLimits.writeBufferBytesCeiling <= Int(UInt32.max))
    }

    @Test func oneReadIsSmallerThanTheBuffersItFeeds() {
        #expect(NetLimits.readChunkBytes > 0)
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
