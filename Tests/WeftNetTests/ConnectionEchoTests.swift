import Testing
import WeftCore

@testable import WeftNet

@Suite(.timeLimit(.minutes(1))) struct ConnectionEchoTests {
    @Test func aFrameSentToAnEchoServerComesBackUnchanged() async throws {
        try await withLoop { loop in
            let port = try await startEchoServer(on: loop)
            #expect(port > 0)
            let received = Completion<[UInt8]>()
            let client = try await connect(on: loop, port: port) { connection in
                connection.onFrame = { received.fulfill($0) }
            }
            try await loop.submit { try client.write([7, 1, 2, 3]) }
            #expect(try await received.value(within: 5_000, "the echo") == [7, 1, 2, 3])
        }
    }

    @Test func manyFramesOfVaryingSizesRoundTripInOrderWhileBothDirectionsAreBusy() async throws {
        try await withLoop { loop in
            let port = try await startEchoServer(on: loop)
            var random = SeededGenerator(seed: 11)
            let sizes = (0..<1_500).map { index in
                index % 100 == 0 ? random.int(in: 100_000...400_000) : random.int(in: 1...9_000)
            }
            let received = Recorder<[UInt8]>()
            let client = try await connect(on: loop, port: port) { connection in
                connection.onFrame = { received.append($0) }
            }
            let pump = FramePump(connection: client, framesMax: sizes.count) { sizes[$0] }
            try await loop.submit { pump.start() }
            try await eventually(within: 30_000, "every echo") { received.count == sizes.count }
            let frames = received.values
            for index in sizes.indices where frames[index] != payload(seed: index, count: sizes[index]) {
                Issue.record("frame \(index) came back changed")
                break
            }
            let failure = try await loop.submit { pump.failure }
            #expect(failure == nil)
        }
    }

    @Test func aFrameOfTheLargestAllowedSizeRoundTrips() async throws {
        try await withLoop { loop in
            let port = try await startEchoServer(on: loop)
            let received = Completion<[UInt8]>()
            let client = try await connect(on: loop, port: port) { connection in
                connection.onFrame = { received.fulfill($0) }
            }
            let frame = payload(seed: 5, count: NetLimits.framePayloadBytesMax)
            try await loop.submit { try client.write(frame) }
            let echoed = try await received.value(within: 30_000, "the largest frame")
            #expect(echoed.count == NetLimits.framePayloadBytesMax)
            #expect(echoed == frame)
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
            let received = Recorder<[UInt8]>()
            let serverCloses = Recorder<NetError?>()
            let port = try await loop.submit {
                try loop.listen(host: "127.0.0.1", port: 0) { connection in
                    connection.onFrame = { received.append($0) }
                    connection.onClose = { serverCloses.append($0) }
                }.port
            }
            let client = try await connect(on: loop, port: port)
            let frames = 150
            let buffered = try await loop.submit { () throws(NetError) -> Int in
                for index in 0..<frames {
                    try client.write(payload(seed: index, count: 64 * 1024))
                }
                client.close()
                return client.bufferedWriteBytes
            }
            #expect(buffered > 0)
            try await eventually(within: 10_000, "the peer to see the close") { serverCloses.count == 1 }
            #expect(received.count == frames)
            #expect(
                received.values.enumerated().allSatisfy { $0.element == payload(seed: $0.offset, count: 64 * 1024) })
            #expect(serverCloses.values.first! == nil)
        }
    }
}
