import Testing
import WeftCore

@testable import WeftNet

@Suite(.timeLimit(.minutes(5))) struct ConnectionEchoTests {
    @Test func bytesSentToAnEchoServerComeBackUnchanged() async throws {
        try await withLoop { loop in
            let port = try await startEchoServer(on: loop)
            #expect(port > 0)
            let received = ByteRecorder()
            let client = try await connect(on: loop, port: port) { connection in
                connection.onRead = { received.append($0) }
            }
            try await loop.submit { try client.write([7, 1, 2, 3]) }
            try await eventually("the echo") { received.count == 4 }
            #expect(received.bytes == [7, 1, 2, 3])
        }
    }

    @Test func manyWritesOfVaryingSizesRoundTripInOrderWhileBothDirectionsAreBusy() async throws {
        try await withLoop { loop in
            let port = try await startEchoServer(on: loop)
            var random = SeededGenerator(seed: 11)
            let sizes = (0..<1_500).map { index in
                index % 100 == 0 ? random.int(in: 100_000...400_000) : random.int(in: 1...9_000)
            }
            let received = ByteRecorder()
            let client = try await connect(on: loop, port: port) { connection in
                connection.onRead = { received.append($0) }
            }
            let pump = WritePump(connection: client, writesMax: sizes.count) { sizes[$0] }
            try await loop.submit { pump.start() }
            let total = sizes.reduce(0, +)
            try await eventually(within: 30_000, "every echo") { received.count == total }
            #expect(received.bytes == pump.expectedBytes, "the bytes came back changed or out of order")
            let failure = try await loop.submit { pump.failure }
            #expect(failure == nil)
        }
    }

    @Test func aWriteOfTheLargestAllowedSizeRoundTrips() async throws {
        try await withLoop { loop in
            let port = try await startEchoServer(on: loop)
            let received = ByteRecorder()
            let client = try await connect(on: loop, port: port) { connection in
                connection.onRead = { received.append($0) }
            }
            let bytes = payload(seed: 5, count: NetLimits.writeBytesMax)
            try await loop.submit { try client.write(bytes) }
            try await eventually(within: 30_000, "the largest write") { received.count == bytes.count }
            #expect(received.bytes == bytes)
            #expect(received.readCount > 1, "read in chunks of at most \(NetLimits.readChunkBytes) bytes")
        }
    }

    @Test func eachEndNamesItsPeer() async throws {
        try await withLoop { loop in
            let accepted = Completion<String>()
            let port = try await loop.submit {
                try loop.listen(host: "127.0.0.1", port: 0) { connection in
                    accepted.fulfill(connection.remoteAddress)
                }.port
            }
            let client = try await connect(on: loop, port: port)
            let serverSide = try await accepted.value(within: 5_000, "the accept")
            #expect(serverSide.hasPrefix("127.0.0.1:"))
            #expect(serverSide != "127.0.0.1:\(port)")
            let clientSide = try await loop.submit { client.remoteAddress }
            #expect(clientSide == "127.0.0.1:\(port)")
        }
    }

    @Test func anOrderlyCloseReachesBothEndsWithoutAnError() async throws {
        try await withLoop { loop in
            let serverCloses = Recorder<NetError?>()
            let port = try await startEchoServer(on: loop, closes: serverCloses)
            let clientCloses = Recorder<NetError?>()
            let client = try await connect(on: loop, port: port) { connection in
                connection.onClose = { clientCloses.append($0) }
            }
            try await loop.submit { client.close() }
            try await eventually("both ends to close") { serverCloses.count == 1 && clientCloses.count == 1 }
            #expect(serverCloses.values.first! == nil)
            #expect(clientCloses.values.first! == nil)
            let open = try await loop.submit { client.isOpen }
            #expect(!open)
        }
    }

    @Test func closingWithBufferedWritesDeliversThemFirst() async throws {
        try await withLoop { loop in
            let received = ByteRecorder()
            let serverCloses = Recorder<NetError?>()
            let port = try await loop.submit {
                try loop.listen(host: "127.0.0.1", port: 0) { connection in
                    connection.onRead = { received.append($0) }
                    connection.onClose = { serverCloses.append($0) }
                }.port
            }
            let client = try await connect(on: loop, port: port)
            let writes = 150
            let buffered = try await loop.submit { () throws(NetError) -> Int in
                for index in 0..<writes {
                    try client.write(payload(seed: index, count: 64 * 1024))
                }
                client.close()
                return client.bufferedWriteBytes
            }
            #expect(buffered > 0)
            try await eventually(within: 10_000, "the peer to see the close") { serverCloses.count == 1 }
            #expect(received.bytes == (0..<writes).flatMap { payload(seed: $0, count: 64 * 1024) })
            #expect(serverCloses.values.first! == nil)
        }
    }

    /// WeftNet cuts nothing: a write split into pieces that leave on separate turns arrives as the same
    /// bytes, whatever the reads were, and the peer closing its side is an orderly close.
    @Test func piecesWrittenOnSeparateTurnsArriveAsOneStreamInOrder() async throws {
        try await withLoop { loop in
            let received = ByteRecorder()
            let closes = Recorder<NetError?>()
            let port = try await loop.submit {
                try loop.listen(host: "127.0.0.1", port: 0) { connection in
                    connection.onRead = { received.append($0) }
                    connection.onClose = { closes.append($0) }
                }.port
            }
            let client = try await connect(on: loop, port: port)
            let bytes = payload(seed: 9, count: 1_000)
            let pieces = [bytes[0..<2], bytes[2..<5], bytes[5..<600], bytes[600...]].map { Array($0) }
            try await loop.submit {
                for (index, piece) in pieces.enumerated() {
                    try loop.scheduleTimer(after: 15 * index) { try? client.write(piece) }
                }
                try loop.scheduleTimer(after: 15 * pieces.count) { client.close() }
            }
            try await eventually("the close") { closes.count == 1 }
            #expect(received.bytes == bytes)
            #expect(closes.values.first! == nil)
        }
    }

    @Test func writesOutsideTheLimitsAreRefusedAndTheConnectionStaysOpen() async throws {
        try await withLoop { loop in
            let received = ByteRecorder()
            let port = try await loop.submit {
                try loop.listen(host: "127.0.0.1", port: 0) { connection in
                    connection.onRead = { received.append($0) }
                }.port
            }
            let client = try await connect(on: loop, port: port)
            let tooLarge = [UInt8](repeating: 1, count: NetLimits.writeBytesMax + 1)
            let (code, buffered) = try await loop.submit { () -> (NetError.Code?, Int) in
                try? client.write([])
                do throws(NetError) {
                    try client.write(tooLarge)
                    return (nil, client.bufferedWriteBytes)
                } catch {
                    return (error.code, client.bufferedWriteBytes)
                }
            }
            #expect(code == .writeTooLarge)
            #expect(buffered == 0, "an empty write and a refused one queue nothing")
            try await loop.submit { try client.write([3, 3]) }
            try await eventually("the valid write") { received.count == 2 }
            #expect(received.bytes == [3, 3])
        }
    }

    @Test func writingToAClosedConnectionIsRefused() async throws {
        try await withLoop { loop in
            let port = try await startEchoServer(on: loop)
            let client = try await connect(on: loop, port: port)
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
