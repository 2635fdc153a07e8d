import Testing

@testable import WeftNet

@Suite(.timeLimit(.minutes(5))) struct ListenerAcceptingTests {
    @Test func aClosedListenerRefusesNewClientsButKeepsItsConnections() async throws {
        try await withLoop { loop in
            let echoed = ByteRecorder()
            let listener = try await loop.submit {
                try loop.listen(host: "127.0.0.1", port: 0) { connection in
                    connection.onRead = { [unowned connection] bytes in try? connection.write(bytes) }
                }
            }
            let port = listener.port
            let client = try await connect(on: loop, port: port) { connection in
                connection.onRead = { echoed.append($0) }
            }
            try await eventually(on: loop, "the server to count the client") { listener.connectionCount == 1 }
            try await loop.submit { listener.close() }
            let refused = Completion<Result<Connection, NetError>>()
            try await loop.submit {
                try loop.connect(host: "127.0.0.1", port: port) { refused.fulfill($0) }
            }
            if case .success = try await refused.value(within: 5_000, "the refused connect") {
                Issue.record("a closed listener accepted a connection")
            }
            try await loop.submit { try client.write([8]) }
            try await eventually("the echo") { echoed.count == 1 }
            try await loop.submit { client.close() }
            try await eventually(on: loop, "the count to drop") { listener.connectionCount == 0 }
        }
    }

    /// A client past the limit got a bare close: it is now sent the listener's refusal first.
    @Test func connectionsBeyondTheLimitGetTheRefusalAndCloseWhileOthersStayOpen() async throws {
        try await withLoop { loop in
            let accepted = Recorder<String>()
            let refusal = Array("too many connections".utf8)
            let listener = try await loop.submit {
                try loop.listen(host: "127.0.0.1", port: 0, connectionsMax: 2, refusal: refusal) { connection in
                    accepted.append(connection.remoteAddress)
                }
            }
            let closes = Recorder<Int>()
            let heard = (0..<3).map { _ in ByteRecorder() }
            var clients: [Connection] = []
            for index in 0..<3 {
                clients.append(
                    try await connect(on: loop, port: listener.port) { connection in
                        connection.onRead = { heard[index].append($0) }
                        connection.onClose = { _ in closes.append(index) }
                    })
                try await eventually(on: loop, "the server to settle") {
                    listener.connectionCount == min(index + 1, 2)
                }
            }
            try await eventually("the third client to be dropped") { closes.count == 1 }
            #expect(closes.values == [2])
            #expect(heard[2].bytes == refusal)
            #expect(heard[0].count == 0 && heard[1].count == 0)
            #expect(accepted.count == 2)
            let (first, second) = try await loop.submit { [clients] in (clients[0].isOpen, clients[1].isOpen) }
            #expect(first && second)

            // Room again once a client leaves.
            try await loop.submit { [clients] in clients[0].close() }
            try await eventually(on: loop, "the count to drop") { listener.connectionCount == 1 }
            _ = try await connect(on: loop, port: listener.port)
            try await eventually("a new client to be accepted") { accepted.count == 3 }
        }
    }

    @Test func limitsOutOfRangeAreRefused() async throws {
        try await withLoop { loop in
            let codes = try await loop.submit { () -> [NetError.Code] in
                var codes: [NetError.Code] = []
                for (backlog, connectionsMax) in [(0, 10), (NetLimits.listenBacklog + 1, 10), (10, 0)] {
                    do throws(NetError) {
                        _ = try loop.listen(
                            host: "127.0.0.1", port: 0, backlog: backlog, connectionsMax: connectionsMax
                        ) { _ in }
                    } catch {
                        codes.append(error.code)
                    }
                }
                return codes
            }
            #expect(codes == [.invalidArgument, .invalidArgument, .invalidArgument])
        }
    }
}
