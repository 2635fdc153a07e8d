import Testing
import WeftCore
import WeftSync

@testable import Weft

@Suite(.timeLimit(.minutes(1))) struct SyncDriverRefusalTests {
    @Test func aPeerWithTheWrongTokenIsRefusedAndTheRefusalIsLogged() async throws {
        let logs = LogRecorder()
        let (hub, hubTarget) = try SyncFixture.driver(node: 0, others: [1], logs: logs)
        var configuration = SyncFixture.configuration(node: 1, others: [])
        configuration.tokens.set(
            try AuthToken(string: "not the secret the hub holds"), for: hubTarget.replica.description)
        let intruderTarget = EngineTarget(node: 1)
        let intruder = try SyncDriver(target: intruderTarget, configuration: configuration)
        do {
            try intruderTarget.write(.set(.string("forged")), at: "/owned")
            let port = try await hub.listen(on: "127.0.0.1", port: 0)
            try await intruder.addPeer(host: "127.0.0.1", port: port)
            try await SyncFixture.wait("the hub to log the refusal") {
                logs.contains("sync session closed") && logs.contains("authenticationFailed")
            }
            try await SyncFixture.wait("the intruder to learn why") {
                intruder.status.peers.first?.lastError?.contains("authentication") == true
            }
            #expect(intruder.status.peers.first?.sessionsEstablished == 0)
            #expect(try hubTarget.value(at: "/owned") == .null)
            #expect(hubTarget.versionVector[intruderTarget.replica] == 0)
        } catch {
            await hub.shutdown()
            await intruder.shutdown()
            throw error
        }
        await hub.shutdown()
        await intruder.shutdown()
    }

    @Test func garbageGetsAnErrorFrameAndTheListenerKeepsServingOthers() async throws {
        let logs = LogRecorder()
        let (hub, hubTarget) = try SyncFixture.driver(node: 0, others: [1], logs: logs)
        let (peer, peerTarget) = try SyncFixture.driver(node: 1, others: [0])
        do {
            let port = try await hub.listen(on: "127.0.0.1", port: 0)

            // A well-framed message of an unknown type: the session answers with an error frame, then closes.
            let unknownType = try RawSocket(port: port)
            try unknownType.send([0, 0, 0, 4, 0xEE, 1, 2, 3])
            let answer = try unknownType.readUntilClosed()
            #expect(answer.closed)
            #expect(answer.bytes.count > 5)
            #expect(Array(answer.bytes.prefix(5)).last == MessageType.error.rawValue)

            // Bytes that are not even a frame (a length far past the limit): WeftNet drops the connection.
            let noise = try RawSocket(port: port)
            try noise.send([UInt8](repeating: 0xFF, count: 64))
            #expect(try noise.readUntilClosed().closed)

            try await peer.addPeer(host: "127.0.0.1", port: port)
            try peerTarget.write(.set(.bool(true)), at: "/still/serving")
            try await SyncFixture.wait("a real peer to sync after the garbage") {
                try hubTarget.value(at: "/still/serving") == .bool(true)
            }
            #expect(logs.contains("unknownMessage") || logs.contains("malformedFrame"))
            #expect(hub.status.connectedCount == 1)
        } catch {
            await hub.shutdown()
            await peer.shutdown()
            throw error
        }
        await hub.shutdown()
        await peer.shutdown()
    }

    @Test func aFrameLargerThanAHandshakeTakesIsRefusedFromItsHeader() async throws {
        // Before a handshake frames hold at most 4 MiB, but the connection waited for up to 16 MiB of
        // payload before the session could say so: a stranger made the daemon hold 16 MiB a socket.
        let logs = LogRecorder()
        let (hub, _) = try SyncFixture.driver(node: 0, others: [1], logs: logs)
        do {
            let port = try await hub.listen(on: "127.0.0.1", port: 0)
            let stranger = try RawSocket(port: port, timeoutSeconds: 3)
            let announced = UInt32(SyncLimits.handshakeFrameBytesMax)
            try stranger.send([
                UInt8(truncatingIfNeeded: announced >> 24), UInt8(truncatingIfNeeded: announced >> 16),
                UInt8(truncatingIfNeeded: announced >> 8), UInt8(truncatingIfNeeded: announced), 1, 2, 3,
            ])
            let started = ContinuousClock.now
            #expect(try stranger.readUntilClosed().closed, "closed before the handshake timeout")
            #expect(ContinuousClock.now - started < .seconds(2))
        } catch {
            await hub.shutdown()
            throw error
        }
        await hub.shutdown()
    }
}
