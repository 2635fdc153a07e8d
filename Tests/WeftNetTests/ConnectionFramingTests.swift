import Testing

@testable import WeftNet

/// A server that records every frame and every close of the connections it accepts.
private struct RecordingServer {
    let port: Int
    let frames: Recorder<[UInt8]>
    let closes: Recorder<NetError?>

    static func start(on loop: EventLoop) async throws -> RecordingServer {
        let frames = Recorder<[UInt8]>()
        let closes = Recorder<NetError?>()
        let port = try await loop.submit {
            try loop.listen(host: "127.0.0.1", port: 0) { connection in
                connection.onFrame = { frames.append($0) }
                connection.onClose = { closes.append($0) }
            }.port
        }
        return RecordingServer(port: port, frames: frames, closes: closes)
    }
}

/// The wire form of one frame.
private func wire(_ frame: [UInt8]) -> [UInt8] {
    var bytes: [UInt8] = []
    FrameHeader.append(payloadBytes: frame.count, to: &bytes)
    return bytes + frame
}

@Suite(.timeLimit(.minutes(1))) struct ConnectionFramingTests {
    @Test func aFrameSplitAcrossSeveralReadsArrivesWhole() async throws {
        try await withLoop { loop in
            let server = try await RecordingServer.start(on: loop)
            let client = try await connect(on: loop, port: server.port)
            let frame = payload(seed: 9, count: 1_000)
            let bytes = wire(frame)
            let pieces = [bytes[0..<2], bytes[2..<5], bytes[5..<600], bytes[600...]].map { Array($0) }
            // Each piece leaves on its own turn, 15 ms apart, so the server reads them separately.
            try await loop.submit {
                for (index, piece) in pieces.enumerated() {
                    try loop.scheduleTimer(after: 15 * index) { client._writeUnframed(piece) }
                }
            }
            try await eventually("the frame") { server.frames.count == 1 }
            #expect(server.frames.values == [frame])
            try await Task.sleep(for: .milliseconds(30))
            #expect(server.frames.count == 1)
            #expect(server.closes.count == 0)
        }
    }

    @Test func severalFramesInOneWriteArriveAsSeparateFrames() async throws {
        try await withLoop { loop in
            let server = try await RecordingServer.start(on: loop)
            let client = try await connect(on: loop, port: server.port)
            let frames = (1...50).map { payload(seed: $0, count: $0) }
            try await loop.submit { client._writeUnframed(frames.flatMap(wire)) }
            try await eventually("fifty frames") { server.frames.count == frames.count }
            #expect(server.frames.values == frames)
        }
    }

    @Test func anOversizedHeaderClosesThatConnectionWhileTheListenerServesOthers() async throws {
        try await withLoop { loop in
            let closes = Recorder<NetError?>()
            let port = try await startEchoServer(on: loop, closes: closes)
            let badClientCloses = Recorder<NetError?>()
            let badClient = try await connect(on: loop, port: port) { connection in
                connection.onClose = { badClientCloses.append($0) }
            }
            try await loop.submit { badClient._writeUnframed([0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3]) }
            try await eventually("the server to drop the bad client") { closes.count == 1 }
            let error = try #require(closes.values.first ?? nil)
            #expect(error.code == .frameTooLarge)
            #expect(error.description.contains("4294967295"))
            try await eventually("the bad client to see it") { badClientCloses.count == 1 }

            let echoed = Completion<[UInt8]>()
            let goodClient = try await connect(on: loop, port: port) { connection in
                connection.onFrame = { echoed.fulfill($0) }
            }
            try await loop.submit { try goodClient.write([1, 42]) }
            #expect(try await echoed.value(within: 5_000, "the echo to the good client") == [1, 42])
        }
    }

    @Test func aHeaderAnnouncingAnEmptyFrameClosesTheConnection() async throws {
        try await withLoop { loop in
            let server = try await RecordingServer.start(on: loop)
            let client = try await connect(on: loop, port: server.port)
            try await loop.submit { client._writeUnframed(wire([5]) + [0, 0, 0, 0]) }
            try await eventually("the close") { server.closes.count == 1 }
            #expect(server.frames.values == [[5]])
            #expect(server.closes.values.first??.code == .frameEmpty)
        }
    }

    @Test func aPeerClosingInTheMiddleOfAFrameIsReportedAsTruncated() async throws {
        try await withLoop { loop in
            let server = try await RecordingServer.start(on: loop)
            let client = try await connect(on: loop, port: server.port)
            try await loop.submit {
                client._writeUnframed([0, 0, 0, 10, 1, 2, 3])
                client.close()
            }
            try await eventually("the close") { server.closes.count == 1 }
            #expect(server.frames.count == 0)
            let error = try #require(server.closes.values.first ?? nil)
            #expect(error.code == .frameTruncated)
            #expect(error.reason.contains("7 bytes"))
        }
    }

    @Test func framesOutsideTheLimitsAreRefusedAndTheConnectionStaysOpen() async throws {
        try await withLoop { loop in
            let server = try await RecordingServer.start(on: loop)
            let client = try await connect(on: loop, port: server.port)
            let tooLarge = [UInt8](repeating: 1, count: NetLimits.framePayloadBytesMax + 1)
            let codes = try await loop.submit { () -> [NetError.Code] in
                var codes: [NetError.Code] = []
                do throws(NetError) { try client.write([]) } catch { codes.append(error.code) }
                do throws(NetError) { try client.write(tooLarge) } catch { codes.append(error.code) }
                return codes
            }
            #expect(codes == [.frameEmpty, .frameTooLarge])
            try await loop.submit { try client.write([3, 3]) }
            try await eventually("the valid frame") { server.frames.count == 1 }
            #expect(server.frames.values == [[3, 3]])
            #expect(server.closes.count == 0)
        }
    }

    @Test func writingToAClosedConnectionIsRefused() async throws {
        try await withLoop { loop in
            let server = try await RecordingServer.start(on: loop)
            let client = try await connect(on: loop, port: server.port)
            let code = try await loop.submit { () -> NetError.Code? in
                client.close()
                do throws(NetError) {
                    try client.write([1])
                    return nil
                } catch {
                    return error.code
                }
            }
            #expect(code == .notOpen)
        }
    }
}
