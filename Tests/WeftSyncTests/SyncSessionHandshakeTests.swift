import Testing
import WeftCore
@testable import WeftSync

@Suite struct SyncSessionHandshakeTests {
    @Test func peersSharingATokenBothBecomeConnected() {
        var harness = Harness(nodeCount: 2)
        harness.connect(0, 1)
        harness.run()
        for endpoint in 0..<2 {
            #expect(harness.endpoints[endpoint].session.phase == .connected)
            let last = harness.endpoints[endpoint].statuses.last
            #expect(last?.phase == .connected)
            #expect(last?.peer == Harness.replica(1 - endpoint))
            #expect(last?.peerRole == .peer)
        }
        #expect(harness.endpoints[0].messagesSent.map(\.type) == [.hello, .authResponse])
        #expect(harness.endpoints[1].messagesSent.map(\.type) == [.hello, .welcome])
    }

    @Test func aWrongTokenIsRefusedAndNoOpCrosses() {
        var harness = Harness(nodeCount: 2)
        harness.write(node: 0, .set(.int(1)), at: "/secret")
        harness.connect(0, 1) { configuration, side in
            if side == .acceptor {
                configuration.tokens.set(
                    try! AuthToken(string: "not the shared secret at all"), for: Harness.replica(0).description)
            }
        }
        harness.run()
        let acceptorError = harness.endpoints[1].session.closeError
        #expect(acceptorError?.code == .authenticationFailed)
        #expect(acceptorError?.raisedByPeer == false)
        let initiatorError = harness.endpoints[0].session.closeError
        #expect(initiatorError?.code == .authenticationFailed)
        #expect(initiatorError?.raisedByPeer == true)
        #expect(harness.logs[1].versionVector == VersionVector())
        #expect(!harness.endpoints[0].messagesSent.contains { $0.type == .ops })
    }

    @Test func aPeerWithoutATokenIsRefusedLikeAWrongOne() {
        var harness = Harness(nodeCount: 2)
        harness.connect(0, 1) { configuration, side in
            if side == .acceptor { configuration.tokens = TokenBook() }
        }
        harness.run()
        #expect(harness.endpoints[1].session.closeError?.code == .authenticationFailed)
        #expect(harness.endpoints[0].session.closeError?.code == .authenticationFailed)
        #expect(harness.endpoints[1].messagesSent.map(\.type) == [.error])
    }

    @Test func theInitiatorRefusesAWelcomeWithAForgedProof() {
        var pair = ConnectedPair()
        var generator = SeededGenerator(seed: 3)
        _ = pair.acceptor.onStart(.acceptor, nonce: .random(using: &generator), source: pair.acceptorLog, now: 0)
        let hello = pair.initiator.onStart(
            .initiator, nonce: .random(using: &generator), source: pair.initiatorLog, now: 0)
        let challenge = pair.acceptor.onBytesReceived(hello.bytesSent, source: pair.acceptorLog, now: 0)
        _ = pair.initiator.onBytesReceived(challenge.bytesSent, source: pair.initiatorLog, now: 0)
        let forged = MessageCodec.encode(.welcome(AuthProof(bytes: [UInt8](repeating: 0, count: 32))!))
        let actions = pair.initiator.onBytesReceived(forged, source: pair.initiatorLog, now: 0)
        #expect(actions.errorSent?.code == .authenticationFailed)
        #expect(actions.closeReason??.code == .authenticationFailed)
        #expect(pair.initiator.phase == .closed)
    }

    @Test func aReplayedProofFailsAgainstAFreshNonce() {
        var pair = ConnectedPair()
        var generator = SeededGenerator(seed: 3)
        _ = pair.acceptor.onStart(.acceptor, nonce: .random(using: &generator), source: pair.acceptorLog, now: 0)
        let hello = pair.initiator.onStart(
            .initiator, nonce: .random(using: &generator), source: pair.initiatorLog, now: 0)
        let challenge = pair.acceptor.onBytesReceived(hello.bytesSent, source: pair.acceptorLog, now: 0)
        let response = pair.initiator.onBytesReceived(challenge.bytesSent, source: pair.initiatorLog, now: 0)

        // An eavesdropper replays the initiator's hello and proof to a new acceptor session.
        var (replayed, _) = startedSession(node: 1, side: .acceptor)
        _ = replayed.onBytesReceived(hello.bytesSent, source: pair.acceptorLog, now: 0)
        let actions = replayed.onBytesReceived(response.bytesSent, source: pair.acceptorLog, now: 0)
        #expect(actions.closeReason??.code == .authenticationFailed)
        #expect(!actions.messagesSent.contains { $0.type == .welcome })
    }

    @Test func anotherProtocolVersionGetsAnErrorFrameNamingBothVersions() {
        var (acceptor, _) = startedSession(node: 1, side: .acceptor)
        let actions = acceptor.onBytesReceived(
            MessageCodec.encode(.hello(hello(from: 0, version: 7))), source: EmptyOpSource(), now: 1000)
        #expect(actions.errorSent?.code == .unsupportedVersion)
        #expect(actions.errorSent?.message == "protocol version 7 is not supported; this replica speaks version 3")
        #expect(actions.closeReason??.code == .unsupportedVersion)
        #expect(acceptor.phase == .closed)
    }

    @Test func aPeerUsingTheLocalReplicaIdIsRefused() {
        var (acceptor, _) = startedSession(node: 1, side: .acceptor)
        let actions = acceptor.onBytesReceived(
            MessageCodec.encode(.hello(hello(from: 1))), source: EmptyOpSource(), now: 1000)
        #expect(actions.errorSent?.code == .duplicateReplica)
        #expect(actions.errorSent?.message.contains("copied database") == true)
    }

    @Test func twoClientsRefuseEachOther() {
        var (client, _) = startedSession(node: 0, side: .initiator, role: .client)
        let actions = client.onBytesReceived(
            MessageCodec.encode(.hello(hello(from: 1, role: .client))), source: EmptyOpSource(), now: 1000)
        #expect(actions.closeReason??.code == .roleMismatch)
    }

    @Test func anInitiatorRefusesAnAcceptorClaimingToBeAClient() {
        var (peer, _) = startedSession(node: 0, side: .initiator)
        let actions = peer.onBytesReceived(
            MessageCodec.encode(.hello(hello(from: 1, role: .client))), source: EmptyOpSource(), now: 1000)
        #expect(actions.closeReason??.code == .roleMismatch)
    }

    @Test func opsBeforeTheHelloAreAnUnexpectedMessage() {
        var (acceptor, _) = startedSession(node: 1, side: .acceptor)
        let actions = acceptor.onBytesReceived(
            MessageCodec.encode(.ops(EncodedOps(Samples.ops))), source: EmptyOpSource(), now: 1000)
        #expect(actions.errorSent?.code == .unexpectedMessage)
        #expect(actions.errorSent?.message == "a ops message is not expected while waiting for a hello")
        #expect(actions.opsToApply.isEmpty)
    }

    @Test func garbageBytesCloseTheSessionWithAnErrorFrame() {
        var (acceptor, _) = startedSession(node: 1, side: .acceptor)
        let actions = acceptor.onBytesReceived(
            Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8), source: EmptyOpSource(), now: 1000)
        #expect(actions.errorSent?.code == .frameTooLarge)
        #expect(actions.closeReason != nil)
        #expect(acceptor.onBytesReceived([1, 2, 3], source: EmptyOpSource(), now: 1001).isEmpty)
    }

    @Test func anAnonymousPeerCannotSendAFrameLargerThanTheHandshakeLimit() {
        var (acceptor, _) = startedSession(node: 1, side: .acceptor)
        let length = UInt32(SyncLimits.handshakeFrameBytesMax)
        let header: [UInt8] = [
            UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), 1,
        ]
        let actions = acceptor.onBytesReceived(header, source: EmptyOpSource(), now: 1000)
        #expect(actions.errorSent?.code == .frameTooLarge)
    }

    @Test func anErrorFrameFromThePeerClosesWithoutAnswering() {
        var (acceptor, _) = startedSession(node: 1, side: .acceptor)
        let actions = acceptor.onBytesReceived(
            MessageCodec.encode(.error(SyncError(.shutdown, "going away"))), source: EmptyOpSource(), now: 1000)
        #expect(actions.bytesSent.isEmpty)
        #expect(actions.closeReason == .some(SyncError(.shutdown, "going away", raisedByPeer: true)))
        #expect(acceptor.closeError?.raisedByPeer == true)
    }

    @Test func theTokenNeverCrossesTheWire() {
        var harness = Harness(nodeCount: 2)
        harness.write(node: 0, .set(.string("payload")), at: "/x")
        harness.connect(0, 1)
        harness.run()
        let token = Array("shared secret of 0 and 1".utf8)
        for endpoint in 0..<2 {
            var bytes: [UInt8] = []
            for message in harness.endpoints[endpoint].messagesSent { bytes += MessageCodec.encode(message) }
            let found = bytes.indices.contains { start in bytes[start...].starts(with: token) }
            #expect(!found)
        }
        #expect(harness.logs[1].versionVector == harness.logs[0].versionVector)
    }

    @Test func anInvalidConfigurationIsATypedError() {
        var configuration = Harness(nodeCount: 2).configuration(node: 0)
        configuration.windowBytes = 10
        #expect(syncError { _ = try SyncSession(configuration: configuration) }?.code == .invalidConfiguration)
        configuration = Harness(nodeCount: 2).configuration(node: 0)
        configuration.idleTimeoutMilliseconds = configuration.pingIntervalMilliseconds
        #expect(syncError { _ = try SyncSession(configuration: configuration) }?.code == .invalidConfiguration)
        #expect(syncError { _ = try AuthToken(string: "short") }?.code == .invalidConfiguration)
    }
}

@Suite struct SyncErrorDescriptionTests {
    /// A peer chooses the name in its hello and the message of its error frames, and both reach the
    /// log through the error's description: a newline there would forge a log line, an escape sequence
    /// would rewrite the operator's terminal.
    @Test func aDescriptionEscapesTheControlCharactersAPeerSent() {
        let forged = "x\ninfo sync session connected\r\u{1B}[2J\u{7F}\u{2028}end"
        for error in [
            SyncError(.authenticationFailed, "authentication failed for \"\(forged)\"", raisedByPeer: false),
            SyncError(.protocolViolation, forged, raisedByPeer: true),
        ] {
            let text = error.description
            #expect(!text.unicodeScalars.contains { $0.properties.generalCategory == .control }, "\(text)")
            #expect(!text.contains("\u{2028}"))
            #expect(text.contains("x\\ninfo sync session connected\\r\\u{1B}[2J\\u{7F}\\u{2028}end"), "\(text)")
            #expect(error.message.contains("\n"), "the message itself is kept as sent")
        }
        #expect(SyncError(.timeout, "plain words, é and 日本").description == "timeout: plain words, é and 日本")
    }
}
