import Testing

@testable import WeftNet

/// A server whose first accepted connection is handed to the test, reading paused from the start.
private struct PausedServer {
    let port: Int
    let connection: Completion<Connection>
    let frames: Recorder<[UInt8]>

    static func start(on loop: EventLoop) async throws -> PausedServer {
        let connection = Completion<Connection>()
        let frames = Recorder<[UInt8]>()
        let port = try await loop.submit {
            try loop.listen(host: "127.0.0.1", port: 0) { accepted in
                accepted.pauseReading()
                accepted.onFrame = { frames.append($0) }
                connection.fulfill(accepted)
            }.port
        }
        return PausedServer(port: port, connection: connection, frames: frames)
    }
}

@Suite(.timeLimit(.minutes(1))) struct ConnectionBackpressureTests {
    @Test func aPausedReaderMakesTheWriterReportBackpressureUntilItResumes() async throws {
        try await withLoop { loop in
            let server = try await PausedServer.start(on: loop)
            let client = try await connect(on: loop, port: server.port)
            let accepted = try await server.connection.value(within: 5_000, "the accept")
            let frameBytes = 64 * 1024
            // Far more than kernel buffers and the write buffer together could hold.
            let framesMax = 1_024
            let pump = FramePump(connection: client, framesMax: framesMax) { _ in frameBytes }
            try await loop.submit { pump.start() }
            try await eventually(on: loop, "backpressure") { !client.isWritable }
            // Let the kernel's buffers fill; from then on the writer is blocked while the reader stays paused.
            try await Task.sleep(for: .milliseconds(100))
            let sentBefore = try await loop.submit { pump.sent }
            try await Task.sleep(for: .milliseconds(100))
            let (writable, buffered, sent) = try await loop.submit {
                (client.isWritable, client.bufferedWriteBytes, pump.sent)
            }
            #expect(!writable)
            #expect(sent == sentBefore)
            #expect(sent < framesMax)
            #expect(buffered > NetLimits.writeBufferBytesLow)
            #expect(buffered <= NetLimits.writeBufferBytesMax + NetLimits.frameHeaderBytes + frameBytes)
            #expect(server.frames.count == 0)

            try await loop.submit { accepted.resumeReading() }
            try await eventually(within: 30_000, "every frame") { server.frames.count == framesMax }
            let frames = server.frames.values
            #expect(frames.indices.allSatisfy { frames[$0] == payload(seed: $0, count: frameBytes) })
            try await eventually(on: loop, "the buffer to drain") {
                client.bufferedWriteBytes == 0 && client.isWritable
            }
            let (changes, failure) = try await loop.submit { (pump.changes, pump.failure) }
            #expect(changes.first == false)
            #expect(changes.last == true)
            #expect(zip(changes, changes.dropFirst()).allSatisfy { $0 != $1 })
            #expect(failure == nil)
        }
    }

    @Test func aWritePastTheCeilingIsRefusedWithoutClosingTheConnection() async throws {
        try await withLoop { loop in
            let server = try await PausedServer.start(on: loop)
            let client = try await connect(on: loop, port: server.port)
            let accepted = try await server.connection.value(within: 5_000, "the accept")
            let frameBytes = 1024 * 1024
            let (written, error, buffered, open) = try await loop.submit { () -> (Int, NetError?, Int, Bool) in
                var written = 0
                while written < 1_000 {
                    do throws(NetError) {
                        try client.write(payload(seed: written, count: frameBytes))
                        written += 1
                    } catch {
                        return (written, error, client.bufferedWriteBytes, client.isOpen)
                    }
                }
                return (written, nil, client.bufferedWriteBytes, client.isOpen)
            }
            #expect(error?.code == .writeBufferFull)
            #expect(buffered <= NetLimits.writeBufferBytesCeiling)
            #expect(buffered + NetLimits.frameHeaderBytes + frameBytes > NetLimits.writeBufferBytesCeiling)
            #expect(open)
            try await loop.submit { accepted.resumeReading() }
            try await eventually(within: 30_000, "every accepted frame") { server.frames.count == written }
            #expect(server.frames.values.last == payload(seed: written - 1, count: frameBytes))
        }
    }

    @Test func pausingInsideOnFrameHoldsBackFramesAlreadyRead() async throws {
        try await withLoop { loop in
            let frames = Recorder<[UInt8]>()
            let accepted = Completion<Connection>()
            let port = try await loop.submit {
                try loop.listen(host: "127.0.0.1", port: 0) { connection in
                    connection.onFrame = { [unowned connection] frame in
                        frames.append(frame)
                        if frames.count == 1 { connection.pauseReading() }
                    }
                    accepted.fulfill(connection)
                }.port
            }
            let client = try await connect(on: loop, port: port)
            var bytes: [UInt8] = []
            for index in 1...10 {
                FrameHeader.append(payloadBytes: 1, to: &bytes)
                bytes.append(UInt8(index))
            }
            try await loop.submit { [bytes] in client._writeUnframed(bytes) }
            try await eventually("the first frame") { frames.count == 1 }
            try await Task.sleep(for: .milliseconds(50))
            #expect(frames.count == 1)
            let server = try await accepted.value(within: 5_000, "the accept")
            let deliveredDuringResume = try await loop.submit { () -> Int in
                server.resumeReading()
                return frames.count
            }
            #expect(deliveredDuringResume == 10)
            #expect(frames.values == (1...10).map { [UInt8($0)] })
        }
    }
}
