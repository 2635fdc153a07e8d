#if canImport(Glibc)
    import Glibc
#endif
import Testing
import WeftCore
import WeftSync

@_spi(Engine) @testable import Weft

@Suite(.timeLimit(.minutes(5))) struct SyncDriverReconnectTests {
    @Test func aDroppedConnectionIsRedialledAndTheSessionResumesFromVersionVectors() async throws {
        let hubTarget = EngineTarget(node: 0)
        var hub = try SyncDriver(target: hubTarget, configuration: SyncFixture.configuration(node: 0, others: [1]))
        let (peer, peerTarget) = try SyncFixture.driver(node: 1, others: [0])
        do {
            let port = try await hub.listen(on: "127.0.0.1", port: 0)
            try await peer.addPeer(host: "127.0.0.1", port: port)
            for index in 0..<100 { try peerTarget.write(.set(.int(Int64(index))), at: "/before/\(index)") }
            try await SyncFixture.wait("the first session to converge") {
                hubTarget.digest == peerTarget.digest && hubTarget.versionVector[peerTarget.replica] == 100
            }
            let batchesBefore = hubTarget.remoteBatchesApplied

            // The hub goes away: the peer sees its connection drop and keeps writing meanwhile.
            await hub.shutdown()
            try await SyncFixture.wait("the peer to see the drop") { peer.status.connectedCount == 0 }
            for index in 0..<50 { try peerTarget.write(.set(.int(Int64(index))), at: "/during/\(index)") }
            try hubTarget.write(.set(.string("hub was away")), at: "/hub")

            // A new hub on the same port, over the same replica: the peer redials with backoff.
            hub = try SyncDriver(target: hubTarget, configuration: SyncFixture.configuration(node: 0, others: [1]))
            try await hub.listen(on: "127.0.0.1", port: port)
            try await SyncFixture.wait("the second session to converge") {
                hubTarget.digest == peerTarget.digest && hubTarget.versionVector[peerTarget.replica] == 150
                    && peerTarget.versionVector[hubTarget.replica] == 1
            }
            #expect(peer.status.peers.first?.sessionsEstablished == 2)
            #expect(try peerTarget.value(at: "/hub") == .string("hub was away"))
            // Resumed from version vectors: only the 50 new ops crossed, in a handful of batches.
            #expect(hubTarget.remoteBatchesApplied - batchesBefore <= 50)
            #expect(try hubTarget.value(at: "/during/49") == .int(49))
        } catch {
            await hub.shutdown()
            await peer.shutdown()
            throw error
        }
        await hub.shutdown()
        await peer.shutdown()
    }

    @Test func aPeerThatShutsDownTellsTheSessionsItDialedAndThoseDialingIt() async throws {
        // Node 1 dials the hub; node 2 is dialed by node 1: node 1's shutdown reaches both sides.
        let hubLogs = LogRecorder()
        let (hub, _) = try SyncFixture.driver(node: 0, others: [1], logs: hubLogs)
        let (middle, _) = try SyncFixture.driver(node: 1, others: [0, 2])
        let dialerLogs = LogRecorder()
        let (dialer, _) = try SyncFixture.driver(node: 2, others: [1], logs: dialerLogs)
        do {
            let hubPort = try await hub.listen(on: "127.0.0.1", port: 0)
            let middlePort = try await middle.listen(on: "127.0.0.1", port: 0)
            try await middle.addPeer(host: "127.0.0.1", port: hubPort)
            try await dialer.addPeer(host: "127.0.0.1", port: middlePort)
            try await SyncFixture.wait("both sessions") {
                hub.status.connectedCount == 1 && dialer.status.connectedCount == 1
            }
            await middle.shutdown()
            try await SyncFixture.wait("the hub to hear the shutdown on the session dialed to it") {
                hubLogs.messages.contains { $0.contains("sync session closed by peer") && $0.contains("shutdown") }
            }
            // From its log: its status's last error is soon the refused redial.
            try await SyncFixture.wait("the dialer to hear the shutdown on the session it dialed") {
                dialerLogs.messages.contains { $0.contains("sync session closed by peer") && $0.contains("shutdown") }
            }
        } catch {
            await hub.shutdown()
            await middle.shutdown()
            await dialer.shutdown()
            throw error
        }
        await hub.shutdown()
        await dialer.shutdown()
    }

    @Test func aPeerRefusedRightAfterEachHandshakeIsRedialledWithGrowingDelays() async throws {
        // The skewed peer's ops are stamped ten minutes ahead: the hub refuses them and closes every
        // session just after its handshake. Each handshake used to reset the backoff, so the peer
        // redialled every 50-100 ms for ever; the backoff starts over only after a healthy connection.
        let hubTarget = EngineTarget(node: 0)
        let hub = try SyncDriver(target: hubTarget, configuration: SyncFixture.configuration(node: 0, others: [1]))
        let skewedTarget = EngineTarget(node: 1, wallOffsetMillis: 10 * 60_000)
        let skewed = try SyncDriver(
            target: skewedTarget, configuration: SyncFixture.configuration(node: 1, others: [0]))
        do {
            try skewedTarget.write(.set(.int(1)), at: "/ahead")
            let port = try await hub.listen(on: "127.0.0.1", port: 0)
            try await skewed.addPeer(host: "127.0.0.1", port: port)
            try await Task.sleep(for: .seconds(3))
            let sessions = skewed.status.peers.first?.sessionsEstablished ?? 0
            #expect(sessions >= 2, "it redials")
            #expect(sessions <= 10, "\(sessions) sessions in 3 s: the delays did not grow")
            #expect(try hubTarget.value(at: "/ahead") == .null)
        } catch {
            await hub.shutdown()
            await skewed.shutdown()
            throw error
        }
        await hub.shutdown()
        await skewed.shutdown()
    }

    @Test func eachNewAttemptShowsWhatEndedTheLastOneUntilItConnects() async throws {
        // A listener that never answers: every attempt ends on the handshake timeout. Each new attempt
        // started with no error, so `weft status` showed a peer failing for ever with no reason.
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 64) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        try #require(bound)
        let port = Int(UInt16(bigEndian: address.sin_port))
        var configuration = SyncFixture.configuration(node: 1, others: [0])
        configuration.handshakeTimeoutMilliseconds = 200
        let dialer = try SyncDriver(target: EngineTarget(node: 1), configuration: configuration)
        do {
            try await dialer.addPeer(host: "127.0.0.1", port: port)
            try await SyncFixture.wait("a handshake to time out") {
                dialer.status.peers.first?.lastError?.contains("timeout") == true
            }
            var withoutReason = 0
            for _ in 0..<40 {
                if dialer.status.peers.first?.lastError == nil { withoutReason += 1 }
                try await Task.sleep(for: .milliseconds(25))
            }
            #expect(withoutReason == 0, "\(withoutReason) of 40 looks showed no reason")
        } catch {
            await dialer.shutdown()
            throw error
        }
        await dialer.shutdown()
    }
}
