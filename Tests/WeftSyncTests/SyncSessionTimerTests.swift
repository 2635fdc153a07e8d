import Testing
import WeftCore
@testable import WeftSync

@Suite struct SyncSessionTimerTests {
    let ping = SyncLimits.pingIntervalMillisecondsDefault
    let idle = SyncLimits.idleTimeoutMillisecondsDefault
    let handshake = SyncLimits.handshakeTimeoutMillisecondsDefault

    @Test func startingSchedulesTheHandshakeTimeout() {
        let (_, actions) = startedSession(node: 0, side: .initiator)
        #expect(actions.scheduled(.idle) == handshake)
        #expect(actions.scheduled(.keepAlive) == nil)
    }

    @Test func aHandshakeThatDoesNotCompleteTimesOut() {
        var (session, _) = startedSession(node: 1, side: .acceptor, now: 1000)
        // Bytes that do not complete the handshake do not extend it.
        _ = session.onBytesReceived([0, 0], source: EmptyOpSource(), now: 1000 + handshake - 1)
        let actions = session.onTimerFired(.idle, source: EmptyOpSource(), now: 1000 + handshake)
        #expect(actions.errorSent?.code == .timeout)
        #expect(actions.errorSent?.message == "the handshake did not complete within \(handshake) ms")
        #expect(actions.cancels(.idle) && actions.cancels(.keepAlive))
        #expect(session.phase == .closed)
    }

    @Test func becomingReadySchedulesTheIdleTimeoutAndTheKeepAlive() {
        var pair = ConnectedPair()
        let (initiator, acceptor) = pair.handshake()
        for actions in [initiator, acceptor] {
            #expect(actions.scheduled(.idle) == idle)
            #expect(actions.scheduled(.keepAlive) == ping)
        }
    }

    @Test func anEarlyIdleTimerReschedulesForTheTimeLeft() {
        var pair = ConnectedPair()
        _ = pair.handshake()
        let actions = pair.initiator.onTimerFired(.idle, source: pair.initiatorLog, now: 1000 + idle / 4)
        #expect(actions == [.scheduleTimer(.idle, afterMilliseconds: idle - idle / 4)])
    }

    @Test func receivingBytesPushesTheIdleDeadline() {
        var pair = ConnectedPair()
        _ = pair.handshake()
        _ = pair.initiator.onBytesReceived(MessageCodec.encode(.pong(1)), source: pair.initiatorLog, now: 1000 + 15_000)
        let actions = pair.initiator.onTimerFired(.idle, source: pair.initiatorLog, now: 1000 + idle)
        #expect(actions == [.scheduleTimer(.idle, afterMilliseconds: 15_000)])
    }

    @Test func aSilentPeerIsClosedAfterTheIdleTimeout() {
        var pair = ConnectedPair()
        _ = pair.handshake()
        let actions = pair.initiator.onTimerFired(.idle, source: pair.initiatorLog, now: 1000 + idle)
        #expect(actions.errorSent?.code == .timeout)
        #expect(actions.errorSent?.message == "nothing received from the peer for \(idle) ms")
        #expect(actions.closeReason??.code == .timeout)
        #expect(
            actions.contains {
                if case .reportStatus(let status) = $0 { return status.phase == .closed } else { return false }
            })
    }

    @Test func aQuietIntervalSendsAPingThatThePeerAnswers() {
        var pair = ConnectedPair()
        _ = pair.handshake()
        let actions = pair.initiator.onTimerFired(.keepAlive, source: pair.initiatorLog, now: 1000 + ping)
        #expect(actions.messagesSent == [.ping(1)])
        #expect(actions.scheduled(.keepAlive) == ping)
        let answer = pair.acceptor.onBytesReceived(actions.bytesSent, source: pair.acceptorLog, now: 1000 + ping)
        #expect(answer.messagesSent == [.pong(1)])
        #expect(pair.initiator.onBytesReceived(answer.bytesSent, source: pair.initiatorLog, now: 1000 + ping).isEmpty)
    }

    @Test func aRecentSendPostponesThePing() {
        var pair = ConnectedPair()
        _ = pair.handshake()
        let answered = pair.initiator.onBytesReceived(
            MessageCodec.encode(.ping(9)), source: pair.initiatorLog, now: 3000)
        #expect(answered.messagesSent == [.pong(9)])
        let actions = pair.initiator.onTimerFired(.keepAlive, source: pair.initiatorLog, now: 1000 + ping)
        #expect(actions == [.scheduleTimer(.keepAlive, afterMilliseconds: 2000)])
    }

    @Test func localWritesAreAckedAtOnceSoTheKeepAliveTickOnlyPings() {
        var pair = ConnectedPair()
        _ = pair.handshake()
        try! pair.initiatorLog.write(.set(.int(1)), at: "/a")
        let appended = pair.initiator.onLocalOpsAppended(source: pair.initiatorLog, now: 1000)
        #expect(appended.messagesSent.contains(.ack(Acknowledgement(versionVector: pair.initiatorLog.versionVector))))
        let actions = pair.initiator.onTimerFired(.keepAlive, source: pair.initiatorLog, now: 1000 + ping)
        #expect(actions.messagesSent == [.ping(1)])
        #expect(actions.scheduled(.keepAlive) == ping)
    }

    @Test func aKeepAliveTickCarriesAFreshAckWhenTheLogGrewElsewhere() {
        var pair = ConnectedPair()
        _ = pair.handshake()
        var third = MemoryOpLog(replica: Harness.replica(3))
        try! third.write(.set(.int(3)), at: "/c")
        pair.acceptorLog.apply(third.allOps)
        let actions = pair.acceptor.onTimerFired(.keepAlive, source: pair.acceptorLog, now: 1000 + ping)
        #expect(actions.messagesSent == [.ack(Acknowledgement(versionVector: pair.acceptorLog.versionVector))])
        let recorded = pair.initiator.onBytesReceived(actions.bytesSent, source: pair.initiatorLog, now: 1000 + ping)
        #expect(pair.initiator.peerAcknowledged?[Harness.replica(3)] == 1)
        #expect(recorded.contains { if case .recordAcknowledgement = $0 { return true } else { return false } })
    }

    @Test func closingCancelsBothTimersAndLaterTimersAreIgnored() {
        var pair = ConnectedPair()
        _ = pair.handshake()
        let actions = pair.initiator.onClose(error: nil, now: 2000)
        #expect(actions.bytesSent.isEmpty)
        #expect(actions.cancels(.idle) && actions.cancels(.keepAlive))
        #expect(actions.closeReason == .some(nil))
        #expect(pair.initiator.onTimerFired(.idle, source: pair.initiatorLog, now: 99_000).isEmpty)
        #expect(pair.initiator.onClose(error: nil, now: 99_000).isEmpty)
    }

    @Test func pingsKeepAnIdleLinkAliveForAMinute() {
        var harness = Harness(nodeCount: 2)
        harness.connect(0, 1)
        harness.run()
        for _ in 0..<60 {
            harness.advance(byMilliseconds: 1000)
            harness.run()
        }
        #expect(harness.endpoints.allSatisfy { $0.session.phase == .connected })
        let pings = harness.endpoints[0].messagesSent.filter { $0.type == .ping }.count
        #expect(pings >= 60_000 / Int(ping) - 1)
    }

    @Test func aPeerThatStopsAnsweringIsClosedOnTime() {
        var harness = Harness(nodeCount: 2)
        harness.connect(0, 1)
        harness.run()
        let connectedAt = harness.now
        // The acceptor's process hangs: it neither reads nor fires timers.
        harness.endpoints[1].timers = [:]
        harness.endpoints[1].isClosed = true
        harness.advance(byMilliseconds: idle + ping)
        #expect(harness.endpoints[0].session.closeError?.code == .timeout)
        let closedAt = harness.endpoints[0].statuses.last.map { _ in harness.now }
        #expect(closedAt != nil)
        #expect(harness.now - connectedAt >= idle)
    }
}
