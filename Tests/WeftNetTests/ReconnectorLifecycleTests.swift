import Testing
import WeftCore

@testable import WeftNet

/// Short backoff bounds so tests run fast.
private func quickBackoff() throws -> BackoffPolicy {
    try BackoffPolicy(delayMillisecondsMin: 5, delayMillisecondsMax: 40)
}

@Suite(.timeLimit(.minutes(5))) struct ReconnectorLifecycleTests {
    @Test func itReconnectsEachTimeThePeerDropsTheConnection() async throws {
        try await withLoop { loop in
            let accepted = Recorder<Int>()
            let port = try await loop.submit {
                try loop.listen(host: "127.0.0.1", port: 0) { connection in
                    accepted.append(1)
                    connection.close()
                }.port
            }
            let connects = Recorder<Int>()
            let retries = Recorder<Int>()
            let reconnector = Reconnector(
                loop: loop, host: "127.0.0.1", port: port, backoff: try quickBackoff(),
                generator: SeededGenerator(seed: 1)
            ) { _ in connects.append(1) }
            try await loop.submit {
                reconnector.onRetryScheduled = { _, delay in retries.append(delay) }
                try reconnector.start()
            }
            try await eventually("three connections") { connects.count >= 3 && accepted.count >= 3 }
            try await loop.submit { reconnector.stop() }
            let delays = retries.values
            #expect(delays.allSatisfy { (5...40).contains($0) })
            // The peer dropped each connection at once, so the backoff kept growing instead of resetting:
            // the bands are [5, 10], [10, 20], then [20, 40] from the cap on.
            #expect(delays.count >= 3)
            #expect(delays.prefix(3).elementsEqual(delays.prefix(3).sorted()))
            #expect(delays.dropFirst(2).allSatisfy { $0 >= 20 })
        }
    }

    @Test func itKeepsRetryingUntilAListenerAppears() async throws {
        try await withLoop { loop in
            // The port stays bound, without a listener, until the listener takes it: connecting is refused,
            // and no other test's listener or outbound socket can take the port meanwhile.
            let reserved = try ReservedPort()
            let port = reserved.port
            let failures = Recorder<NetError.Code?>()
            let connected = Completion<String>()
            let reconnector = Reconnector(
                loop: loop, host: "127.0.0.1", port: port, backoff: try quickBackoff(),
                generator: SeededGenerator(seed: 2)
            ) { connection in connected.fulfill(connection.remoteAddress) }
            try await loop.submit {
                reconnector.onRetryScheduled = { error, _ in failures.append(error?.code) }
                try reconnector.start()
            }
            try await eventually("three refusals") { failures.count >= 3 }
            #expect(failures.values.allSatisfy { $0 == .connectionRefused })
            try await loop.submit {
                reserved.release()
                _ = try loop.listen(host: "127.0.0.1", port: port) { _ in }
            }
            #expect(try await connected.value(within: 5_000, "the reconnect") == "127.0.0.1:\(port)")
            let (running, open) = try await loop.submit {
                (reconnector.isRunning, reconnector.connection?.isOpen ?? false)
            }
            #expect(running)
            #expect(open)
            try await loop.submit { reconnector.stop() }
        }
    }

    @Test func stopClosesTheConnectionAndEndsTheRetries() async throws {
        try await withLoop { loop in
            let serverCloses = Recorder<NetError?>()
            let port = try await startEchoServer(on: loop, closes: serverCloses)
            let connects = Recorder<Int>()
            let reconnector = Reconnector(
                loop: loop, host: "127.0.0.1", port: port, backoff: try quickBackoff(),
                generator: SeededGenerator(seed: 3)
            ) { _ in connects.append(1) }
            try await loop.submit { try reconnector.start() }
            try await eventually("the connection") { connects.count == 1 }
            try await loop.submit { reconnector.stop() }
            try await eventually("the server to see the close") { serverCloses.count == 1 }
            #expect(serverCloses.values.first! == nil)
            try await Task.sleep(for: .milliseconds(100))
            #expect(connects.count == 1)
            let (running, connection) = try await loop.submit { (reconnector.isRunning, reconnector.connection) }
            #expect(!running)
            #expect(connection == nil)
        }
    }

    @Test func startingWithBadArgumentsThrowsAndLeavesItStopped() async throws {
        try await withLoop { loop in
            let reconnector = Reconnector(loop: loop, host: "127.0.0.1", port: 0) { _ in }
            let (code, running) = try await loop.submit { () -> (NetError.Code?, Bool) in
                do throws(NetError) {
                    try reconnector.start()
                    return (nil, reconnector.isRunning)
                } catch {
                    return (error.code, reconnector.isRunning)
                }
            }
            #expect(code == .invalidAddress)
            #expect(!running)
        }
    }

    @Test func theLoopShuttingDownEndsIt() async throws {
        let loop = try EventLoop(label: "weft.net.test.reconnector")
        let port = try await startEchoServer(on: loop)
        let connected = Completion<Int>()
        let reconnector = Reconnector(loop: loop, host: "127.0.0.1", port: port) { _ in connected.fulfill(1) }
        try await loop.submit { try reconnector.start() }
        _ = try await connected.value(within: 5_000, "the connection")
        loop.shutdown()
        #expect(!reconnector.isRunning)
        #expect(reconnector.connection == nil)
    }
}
