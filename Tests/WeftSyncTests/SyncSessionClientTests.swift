import Testing
import WeftCore
@testable import WeftSync

@Suite struct SyncSessionClientTests {
    /// Node 0 is a client (endpoint 0) of the daemon at node 1 (endpoint 1).
    func connectedClient() -> Harness {
        var harness = Harness(nodeCount: 2)
        harness.write(node: 1, .set(.string("daemon data")), at: "/a")
        harness.connect(0, 1) { configuration, side in
            if side == .initiator { configuration.role = .client }
        }
        harness.run()
        return harness
    }

    func request(_ harness: inout Harness, _ request: ClientRequest) {
        let actions = try! harness.endpoints[0].session.onClientRequest(request, now: harness.now)
        harness.perform(actions, at: 0)
        harness.run()
    }

    func reply(_ harness: inout Harness, _ reply: ClientReply) {
        harness.perform(harness.endpoints[1].session.onClientReply(reply, now: harness.now), at: 1)
        harness.run()
    }

    func event(_ harness: inout Harness, _ event: ClientEvent) {
        harness.perform(harness.endpoints[1].session.onClientEvent(event, now: harness.now), at: 1)
        harness.run()
    }

    @Test func aClientConnectsWithoutReplicating() {
        let harness = connectedClient()
        #expect(harness.endpoints[1].statuses.last?.peerRole == .client)
        #expect(harness.endpoints[0].session.phase == .connected)
        #expect(harness.opsSent(by: 1).isEmpty)
        #expect(harness.logs[0].versionVector == VersionVector())
        for message in harness.endpoints[0].messagesSent + harness.endpoints[1].messagesSent {
            if case .hello(let hello) = message { #expect(hello.versionVector == VersionVector()) }
        }
    }

    @Test func aRequestReachesTheDaemonsOwnerAndTheReplyComesBack() {
        var harness = connectedClient()
        let get = ClientRequest(id: 1, command: .get(try! Path("/a")))
        request(&harness, get)
        #expect(harness.endpoints[1].requests == [get])
        let answer = ClientReply(id: 1, result: .ok(.string("daemon data")))
        reply(&harness, answer)
        #expect(harness.endpoints[0].replies == [answer])
    }

    @Test func watchEventsFlowUntilTheWatchIsClosed() {
        var harness = connectedClient()
        let path = try! Path("/a")
        request(&harness, ClientRequest(id: 7, command: .watch(path)))
        reply(&harness, ClientReply(id: 7, result: .ok(.null)))
        event(&harness, ClientEvent(watchID: 7, path: path, value: .int(1)))
        #expect(harness.endpoints[0].events == [ClientEvent(watchID: 7, path: path, value: .int(1))])
        request(&harness, ClientRequest(id: 8, command: .unwatch(watchID: 7)))
        reply(&harness, ClientReply(id: 8, result: .ok(.null)))
        let sentBefore = harness.endpoints[1].messagesSent.count
        event(&harness, ClientEvent(watchID: 7, path: path, value: .int(2)))
        #expect(harness.endpoints[1].messagesSent.count == sentBefore)
        #expect(harness.endpoints[0].events.count == 1)
    }

    @Test func aWatchThatFailedSendsNoEvents() {
        var harness = connectedClient()
        let path = try! Path("/private")
        request(&harness, ClientRequest(id: 3, command: .watch(path)))
        reply(&harness, ClientReply(id: 3, result: .failed(SyncError(.requestFailed, "permission denied"))))
        event(&harness, ClientEvent(watchID: 3, path: path, value: .int(1)))
        #expect(harness.endpoints[0].events.isEmpty)
        #expect(
            harness.endpoints[0].replies.first?.result
                == .failed(SyncError(.requestFailed, "permission denied", raisedByPeer: true)))
    }

    /// A value larger than a frame: two strings of 9 MiB (a string may be 10 MiB, a frame 15 MiB).
    static let outgrownValue = Value.object([
        "one": .string(String(repeating: "a", count: 9 << 20)), "two": .string(String(repeating: "b", count: 9 << 20)),
    ])

    @Test func aReplyLargerThanAFrameFailsTheRequestAndTheSessionGoesOn() {
        var harness = connectedClient()
        request(&harness, ClientRequest(id: 1, command: .get(.root)))
        reply(&harness, ClientReply(id: 1, result: .ok(Self.outgrownValue)))
        guard case .failed(let error)? = harness.endpoints[0].replies.first?.result else {
            Issue.record("expected a failed reply, got \(harness.endpoints[0].replies)")
            return
        }
        #expect(error.code == .limitExceeded)
        #expect(error.message.contains("read a smaller subtree"))
        #expect(harness.endpoints[1].session.phase == .connected)
        request(&harness, ClientRequest(id: 2, command: .get(try! Path("/a"))))
        reply(&harness, ClientReply(id: 2, result: .ok(.string("daemon data"))))
        #expect(harness.endpoints[0].replies.last == ClientReply(id: 2, result: .ok(.string("daemon data"))))
    }

    @Test func aWatchedValueThatOutgrowsAFrameClosesTheSessionWithTheReason() {
        var harness = connectedClient()
        let path = try! Path("/a")
        request(&harness, ClientRequest(id: 7, command: .watch(path)))
        reply(&harness, ClientReply(id: 7, result: .ok(.null)))
        let actions = harness.endpoints[1].session.onClientEvent(
            ClientEvent(watchID: 7, path: path, value: Self.outgrownValue), now: harness.now)
        #expect(actions.errorSent?.code == .limitExceeded)
        #expect(actions.errorSent?.message.contains("watch a smaller subtree") == true)
        #expect(harness.endpoints[1].session.phase == .closed)
    }

    @Test func aClientCannotReuseTheIdOfAPendingRequest() {
        var harness = connectedClient()
        request(&harness, ClientRequest(id: 1, command: .get(.root)))
        let error = syncError {
            _ = try harness.endpoints[0].session.onClientRequest(ClientRequest(id: 1, command: .get(.root)), now: 0)
        }
        #expect(error?.code == .requestFailed)
    }

    @Test func aClientCannotHaveMoreRequestsInFlightThanTheLimit() {
        var harness = connectedClient()
        for id in 0..<UInt64(SyncLimits.clientRequestsPendingMax) {
            request(&harness, ClientRequest(id: id, command: .get(.root)))
        }
        let error = syncError {
            _ = try harness.endpoints[0].session.onClientRequest(ClientRequest(id: 9999, command: .get(.root)), now: 0)
        }
        #expect(error?.code == .limitExceeded)
        #expect(harness.endpoints[1].requests.count == SyncLimits.clientRequestsPendingMax)
    }

    @Test func aDaemonClosesOnAClientFloodingItWithRequests() {
        var harness = connectedClient()
        let flood = (0...UInt64(SyncLimits.clientRequestsPendingMax)).flatMap {
            MessageCodec.encode(.request(ClientRequest(id: $0, command: .get(.root))))
        }
        let actions = harness.endpoints[1].session.onBytesReceived(flood, source: harness.logs[1], now: harness.now)
        #expect(actions.errorSent?.code == .limitExceeded)
    }

    @Test func aDaemonRefusesOpsFromAClient() {
        var harness = connectedClient()
        let actions = harness.endpoints[1].session.onBytesReceived(
            MessageCodec.encode(.ops([Samples.ops[0]])), source: harness.logs[1], now: harness.now)
        #expect(actions.errorSent?.code == .unexpectedMessage)
        #expect(actions.errorSent?.message == "a ops message is not expected in a client session")
    }

    @Test func aPeerRefusesRequestsFromAnotherPeer() {
        var pair = ConnectedPair()
        _ = pair.handshake()
        let actions = pair.acceptor.onBytesReceived(
            MessageCodec.encode(.request(ClientRequest(id: 1, command: .get(.root)))), source: pair.acceptorLog, now: 1)
        #expect(actions.errorSent?.code == .unexpectedMessage)
    }

    @Test func aReplyToNoPendingRequestIsAProtocolViolation() {
        var harness = connectedClient()
        let actions = harness.endpoints[0].session.onBytesReceived(
            MessageCodec.encode(.reply(ClientReply(id: 42, result: .ok(.null)))), source: harness.logs[0],
            now: harness.now)
        #expect(actions.errorSent?.code == .protocolViolation)
    }
}
