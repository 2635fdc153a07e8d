import Testing
import WeftCore
@testable import WeftSync

@Suite struct SyncLimitsTests {
    @Test func aPatternHasRoomForADoubleStarAroundEveryKeyOfTheDeepestPath() throws {
        #expect(SyncLimits.pathPatternSegmentsMax == 2 * CoreLimits.pathDepthMax + 1)
        let deepest = "/" + Array(repeating: "**/k", count: CoreLimits.pathDepthMax).joined(separator: "/") + "/**"
        #expect(throws: Never.self) { try PathPattern(deepest) }
        #expect(throws: SyncError.self) { try PathPattern(deepest + "/k") }
    }

    @Test func limitsAreOrdered() {
        #expect(SyncLimits.batchBytesMax > 0)
        #expect(SyncLimits.batchBytesMax <= SyncLimits.windowBytesMax)
    }

    @Test func aFrameHoldsAFullBatchPlusTheLargestOp() {
        #expect(
            SyncLimits.frameBytesMax >= SyncLimits.frameHeaderBytes + SyncLimits.batchBytesMax + CoreLimits.opBytesMax)
        #expect(SyncLimits.frameBytesMax <= Int(UInt32.max))
    }

    @Test func aSnapshotChunkHoldsTheLongestStringAtTheDeepestPath() {
        let deepestPath = 1 + CoreLimits.pathDepthMax * (2 + CoreLimits.keyBytesMax)
        let longestString = 1 + 4 + CoreLimits.stringBytesMax
        #expect(
            SyncLimits.frameHeaderBytes + 4 + SyncLimits.snapshotChunkBytesMax + deepestPath + longestString
                <= SyncLimits.frameBytesMax)
    }

    @Test func theHandshakeLimitFitsAHelloYetStaysBelowTheFrameLimit() {
        let helloFixedBytes = 4 + 2 + 8 + 1 + 2 + SyncLimits.nameBytesMax + SyncLimits.nonceBytes + 10
        #expect(SyncLimits.handshakeFrameBytesMax > helloFixedBytes + 10_000 * 18)
        #expect(SyncLimits.handshakeFrameBytesMax < SyncLimits.frameBytesMax)
    }

    @Test func windowsAreOrdered() {
        #expect(SyncLimits.windowBytesMin <= SyncLimits.windowBytesMax)
        #expect(SyncLimits.windowBytesMin > SyncLimits.frameHeaderBytes)
        #expect(SyncLimits.windowFramesMax >= 1)
        #expect(SyncLimits.snapshotChunkBytesMax <= SyncLimits.windowBytesMax)
        #expect(SyncLimits.batchOpsMax <= CoreLimits.batchPartsMax)
    }

    @Test func aTokenCanHoldAnHMACKeyAndNonceAndProofMatchSHA256() {
        #expect(SyncLimits.tokenBytesMin >= 16)
        #expect(SyncLimits.tokenBytesMin <= SyncLimits.tokenBytesMax)
        #expect(SyncLimits.proofBytes == 32)
        #expect(SyncLimits.nonceBytes >= 16)
    }

    @Test func timeoutsLeaveRoomForPings() {
        #expect(SyncLimits.idleTimeoutMillisecondsDefault >= 3 * SyncLimits.pingIntervalMillisecondsDefault)
        #expect(SyncLimits.pingIntervalMillisecondsDefault >= SyncLimits.pingIntervalMillisecondsMin)
        #expect(SyncLimits.handshakeTimeoutMillisecondsDefault > 0)
    }

    @Test func theDefaultConfigurationIsValid() throws {
        let configuration = SyncConfiguration(replica: Harness.replica(0), role: .peer, tokens: TokenBook())
        try configuration.validate()
    }

    /// A deadline is the time now plus a delay: a delay near `UInt64.max` (an app's "never") would
    /// overflow it and stop the process, so the configuration refuses it.
    @Test(arguments: [
        \SyncConfiguration.pingIntervalMilliseconds, \.idleTimeoutMilliseconds, \.handshakeTimeoutMilliseconds,
    ])
    func aDelayBeyondTheLongestTimeoutIsRefused(delay: WritableKeyPath<SyncConfiguration, UInt64> & Sendable) {
        var configuration = SyncConfiguration(replica: Harness.replica(0), role: .peer, tokens: TokenBook())
        configuration.idleTimeoutMilliseconds = SyncLimits.timeoutMillisecondsMax
        configuration.handshakeTimeoutMilliseconds = SyncLimits.timeoutMillisecondsMax
        #expect(throws: Never.self) { try configuration.validate() }
        configuration[keyPath: delay] = .max
        let error = #expect(throws: SyncError.self) { try configuration.validate() }
        #expect(error?.code == .invalidConfiguration)
        #expect(SyncLimits.timeoutMillisecondsMax >= 2 * SyncLimits.idleTimeoutMillisecondsDefault)
        #expect(SyncLimits.timeoutMillisecondsMax < UInt64.max / 4, "a deadline far in the future still fits")
    }

    @Test func errorMessagesAndNamesFitTheirFrames() {
        #expect(SyncLimits.errorMessageBytesMax + 8 < SyncLimits.handshakeFrameBytesMax)
        #expect(SyncLimits.clientRequestsPendingMax >= 1)
        #expect(SyncLimits.clientWatchesMax >= 1)
    }
}
