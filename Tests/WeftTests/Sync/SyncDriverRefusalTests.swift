import Testing
import WeftCore
import WeftSync

@_spi(Engine) @testable import Weft

@Suite(.timeLimit(.minutes(5))) struct SyncDriverRefusalTests {
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
            // The refusal was answered, after the throttle's delay for this host (see AuthenticationThrottle).
            let failures = try await hub.loop.submit { hub.authenticationThrottle.records["127.0.0.1"]?.failures }
            #expect((failures ?? 0) >= 1)
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

            // Bytes that are not even a frame (a length far past the limit) got a bare close, where
            // Docs/PROTOCOL.md promises the error frame `frameTooLarge`; a zero length is `malformedFrame`.
            for (bytes, code) in [
                ([UInt8](repeating: 0xFF, count: 64), SyncErrorCode.frameTooLarge), ([0, 0, 0, 0], .malformedFrame),
            ] {
                let noise = try RawSocket(port: port)
                try noise.send(bytes)
                let refusal = try noise.readUntilClosed()
                #expect(refusal.closed)
                #expect(Self.errorFrame(in: refusal.bytes)?.code == code, "\(refusal.bytes.prefix(40))")
            }

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

    @Test func aFrameLargerThanAHelloIsRefusedFromItsHeaderWithAnErrorFrame() async throws {
        // Before a handshake frames held up to 4 MiB: 250 strangers each sending most of one made the
        // daemon hold a gigabyte. A header announcing more than a hello is refused as soon as it arrives.
        let logs = LogRecorder()
        let (hub, _) = try SyncFixture.driver(node: 0, others: [1], logs: logs)
        do {
            let port = try await hub.listen(on: "127.0.0.1", port: 0)
            let stranger = try RawSocket(port: port, timeoutSeconds: 3)
            // The header of the burst in issue 40: 4 MiB announced, `WEFT` and zeros following.
            let announced = UInt32(4 * 1024 * 1024 - 4)
            try stranger.send(
                [
                    UInt8(truncatingIfNeeded: announced >> 24), UInt8(truncatingIfNeeded: announced >> 16),
                    UInt8(truncatingIfNeeded: announced >> 8), UInt8(truncatingIfNeeded: announced), 1,
                ] + Array("WEFT".utf8) + [UInt8](repeating: 0, count: 1000))
            let refusal = try stranger.readUntilClosed()
            #expect(refusal.closed, "closed before the handshake timeout")
            let error = Self.errorFrame(in: refusal.bytes)
            #expect(error?.code == .frameTooLarge)
            #expect(error?.message.contains("at most \(SyncLimits.handshakeFrameBytesMax)") == true)
        } catch {
            await hub.shutdown()
            throw error
        }
        await hub.shutdown()
    }

    /// Strangers that each send most of a hello-sized frame fill the shared handshake pool, not the
    /// daemon's memory: past the pool they are refused with `busy`, what they held comes back when they
    /// go, and a real peer is served throughout.
    @Test func theBytesHeldBeforeAuthenticationStayUnderTheSharedCap() async throws {
        let logs = LogRecorder()
        let (hub, hubTarget) = try SyncFixture.driver(node: 0, others: [1], logs: logs)
        let (peer, peerTarget) = try SyncFixture.driver(node: 1, others: [0])
        do {
            let port = try await hub.listen(on: "127.0.0.1", port: 0)
            let announced = SyncLimits.handshakeFrameBytesMax - SyncLimits.frameHeaderBytes
            let header: [UInt8] = [
                UInt8(truncatingIfNeeded: announced >> 24), UInt8(truncatingIfNeeded: announced >> 16),
                UInt8(truncatingIfNeeded: announced >> 8), UInt8(truncatingIfNeeded: announced), 1,
            ]
            let partial = header + [UInt8](repeating: 0, count: announced - 64)
            let strangersNeeded = SyncShellLimits.handshakeBytesSharedMax / partial.count + 4
            var strangers: [RawSocket] = []
            for _ in 0..<strangersNeeded {
                let stranger = try RawSocket(port: port, timeoutSeconds: 3)
                try stranger.send(partial)
                strangers.append(stranger)
            }
            try await SyncFixture.wait("the pool to be spent") { logs.contains("handshake budget spent") }
            let (lent, lentMax) = try await hub.loop.submit {
                (hub.handshakeBudget.sharedBytes, hub.handshakeBudget.sharedBytesMax)
            }
            #expect(lent <= lentMax)
            #expect(lent > lentMax / 2, "the strangers did hold bytes")

            try await peer.addPeer(host: "127.0.0.1", port: port)
            try peerTarget.write(.set(.bool(true)), at: "/served")
            try await SyncFixture.wait("a real peer to be served meanwhile") {
                try hubTarget.value(at: "/served") == .bool(true)
            }
            strangers = []
            var lentAfter = lent
            for _ in 0..<1_000 where lentAfter > 0 {
                try await Task.sleep(for: .milliseconds(10))
                lentAfter = try await hub.loop.submit { hub.handshakeBudget.sharedBytes }
            }
            #expect(lentAfter == 0, "the pool was given back when the strangers went")
        } catch {
            await hub.shutdown()
            await peer.shutdown()
            throw error
        }
        await hub.shutdown()
        await peer.shutdown()
    }

    /// The first error frame in `bytes`, if they start with one.
    static func errorFrame(in bytes: [UInt8]) -> SyncError? {
        var decoder = FrameDecoder()
        decoder.append(bytes)
        guard let frame = try? decoder.nextFrame(), case .error(let error)? = try? MessageCodec.decode(frame) else {
            return nil
        }
        return error
    }
}
