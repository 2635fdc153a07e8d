import Testing
import WeftCore
@testable import WeftSync

/// A peer learns each move of this replica's durable log at once (an ack on `onLocalOpsAppended`), not
/// at the keep-alive tick, and no more than one such ack per
/// `SyncLimits.durableAcknowledgementIntervalMillisecondsMin`.
@Suite struct SyncSessionDurableAcknowledgementTests {
    let interval = SyncLimits.durableAcknowledgementIntervalMillisecondsMin

    private func acks(_ actions: [SyncAction]) -> [Acknowledgement] {
        actions.messagesSent.compactMap { if case .ack(let ack) = $0 { return ack } else { return nil } }
    }

    @Test func aDurableMoveIsAckedAtOnceWithTheNewVector() throws {
        var pair = ConnectedPair()
        _ = pair.handshake()
        try pair.initiatorLog.write(.set(.int(1)), at: "/a")
        let actions = pair.initiator.onLocalOpsAppended(source: pair.initiatorLog, now: 2000)
        #expect(acks(actions) == [Acknowledgement(versionVector: pair.initiatorLog.versionVector)])
        // The peer records what this replica holds: its own new op among it.
        let received = pair.acceptor.onBytesReceived(actions.bytesSent, source: pair.acceptorLog, now: 2000)
        #expect(pair.acceptor.peerAcknowledged?[Harness.replica(0)] == 1)
        #expect(received.contains { if case .recordAcknowledgement = $0 { return true } else { return false } })
    }

    @Test func aSecondMoveWithinTheIntervalWaitsForItsEndThenGoesOutCoalesced() throws {
        var pair = ConnectedPair()
        _ = pair.handshake()
        try pair.initiatorLog.write(.set(.int(1)), at: "/a")
        #expect(acks(pair.initiator.onLocalOpsAppended(source: pair.initiatorLog, now: 5000)).count == 1)
        try pair.initiatorLog.write(.set(.int(2)), at: "/b")
        let early = pair.initiator.onLocalOpsAppended(source: pair.initiatorLog, now: 5000)
        #expect(acks(early).isEmpty, "within the interval: no second ack")
        #expect(early.scheduled(.keepAlive) == interval, "the keep-alive fires when the interval ends")
        try pair.initiatorLog.write(.set(.int(3)), at: "/c")
        let again = pair.initiator.onLocalOpsAppended(source: pair.initiatorLog, now: 5000)
        #expect(acks(again).isEmpty && again.scheduled(.keepAlive) == nil, "one timer for the moves meanwhile")
        let fired = pair.initiator.onTimerFired(.keepAlive, source: pair.initiatorLog, now: 5000 + interval)
        #expect(acks(fired) == [Acknowledgement(versionVector: pair.initiatorLog.versionVector)])
        #expect(pair.initiatorLog.versionVector[Harness.replica(0)] == 3)
    }

    @Test func nothingNewSendsNoAck() throws {
        var pair = ConnectedPair()
        _ = pair.handshake()
        #expect(acks(pair.initiator.onLocalOpsAppended(source: pair.initiatorLog, now: 2000)).isEmpty)
        try pair.initiatorLog.write(.set(.int(1)), at: "/a")
        #expect(acks(pair.initiator.onLocalOpsAppended(source: pair.initiatorLog, now: 3000)).count == 1)
        #expect(acks(pair.initiator.onLocalOpsAppended(source: pair.initiatorLog, now: 4000)).isEmpty)
    }

    @Test func theLimitIsPositiveAndFarBelowTheKeepAlive() {
        #expect(interval >= 1)
        #expect(interval * 100 <= SyncLimits.pingIntervalMillisecondsDefault)
    }
}
