import Testing

@testable import WeftNet

/// A server whose first accepted connection is handed to the test, reading paused from the start.
private struct PausedServer {
    let port: Int
    let connection: Completion<Connection>
    let received: ByteRecorder

    static func start(on loop: EventLoop) async throws -> PausedServer {
        let connection = Completion<Connection>()
        let received = ByteRecorder()
        let port = try await loop.submit {
            try loop.listen(host: "127.0.0.1", port: 0) { accepted in
                accepted.pauseReading()
                accepted.onRead = { received.append($0) }
                connection.fulfill(accepted)
            }.port
        }
        return PausedServer(port: port, connection: connection, received: received)
    }
}

@Suite(.timeLimit(.minutes(5))) struct ConnectionBackpressureTests {
    @Test func aPausedReaderMakesTheWriterReportBackpressureUntilItResumes() async throws {
        try await withLoop { loop in
            let server = try await PausedServer.start(on: loop)
            let client = try await connect(on: loop, port: server.port)
            let accepted = try await server.connection.value(within: 5_000, "the accept")
            let writeBytes = 64 * 1024
            // Far more than kernel buffers and the write buffer together could hold.
            let writesMax = 1_024
            let pump = WritePump(connection: client, writesMax: writesMax) { _ in writeBytes }
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
            #expect(sent < writesMax)
            #expect(buffered > NetLimits.writeBufferBytesLow)
            #expect(buffered <= NetLimits.writeBufferBytesMax + writeBytes)
            #expect(server.received.count == 0)

            try await loop.submit { accepted.resumeReading() }
            try await eventually(within: 30_000, "every byte") { server.received.count == writesMax * writeBytes }
            #expect(server.received.bytes == pump.expectedBytes)
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
            let writeBytes = 1024 * 1024
            let (written, error, buffered, open) = try await loop.submit { () -> (Int, NetError?, Int, Bool) in
                var written = 0
                while written < 1_000 {
                    do throws(NetError) {
                        try client.write(payload(seed: written, count: writeBytes))
                        written += 1
                    } catch {
                        return (written, error, client.bufferedWriteBytes, client.isOpen)
                    }
                }
                return (written, nil, client.bufferedWriteBytes, client.isOpen)
            }
            #expect(error?.code == .writeBufferFull)
            #expect(buffered <= NetLimits.writeBufferBytesCeiling)
            #expect(buffered + writeBytes > NetLimits.writeBufferBytesCeiling)
            #expect(open)
            try await loop.submit { accepted.resumeReading() }
            try await eventually(within: 30_000, "every accepted write") {
                server.received.count == written * writeBytes
            }
            #expect(
                server.received.bytes.suffix(writeBytes).elementsEqual(payload(seed: written - 1, count: writeBytes)))
        }
    }

    @Test func pausingInsideOnReadStopsReadingUntilResumed() async throws {
        try await withLoop { loop in
            let received = ByteRecorder()
            let accepted = Completion<Connection>()
            let port = try await loop.submit {
                try loop.listen(host: "127.0.0.1", port: 0) { connection in
                    connection.onRead = { [unowned connection] bytes in
                        received.append(bytes)
                        connection.pauseReading()
                    }
                    accepted.fulfill(connection)
                }.port
            }
            let client = try await connect(on: loop, port: port)
            try await loop.submit { try client.write([1]) }
            try await eventually("the first byte") { received.count == 1 }
            try await loop.submit { try client.write(Array(2...10)) }
            try await Task.sleep(for: .milliseconds(50))
            #expect(received.count == 1, "nothing is read while paused")
            let server = try await accepted.value(within: 5_000, "the accept")
            try await loop.submit { server.resumeReading() }
            try await eventually("the rest") { received.count == 10 }
            #expect(received.bytes == Array(1...10))
        }
    }
}
