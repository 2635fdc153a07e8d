import Testing

@testable import WeftNet

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Connects and returns the completion's result instead of throwing it.
private func attempt(
    on loop: EventLoop, host: String = "127.0.0.1", port: Int, timeoutMilliseconds: Int = 5_000
) async throws -> Result<Connection, NetError> {
    let outcome = Completion<Result<Connection, NetError>>()
    try await loop.submit {
        try loop.connect(host: host, port: port, timeoutMilliseconds: timeoutMilliseconds) { outcome.fulfill($0) }
    }
    return try await outcome.value(within: timeoutMilliseconds + 5_000, "connect to \(host):\(port)")
}

@Suite(.timeLimit(.minutes(5))) struct ConnectionEstablishingTests {
    @Test func connectingToAPortNobodyListensOnFailsWithConnectionRefused() async throws {
        try await withLoop { loop in
            let reserved = try ReservedPort()
            let port = reserved.port
            defer { reserved.release() }
            let result = try await attempt(on: loop, port: port)
            guard case let .failure(error) = result else {
                Issue.record("connected to a closed port")
                return
            }
            #expect(error.code == .connectionRefused)
            #expect(error.description == "connect 127.0.0.1:\(port): connection refused")
            let resources = try await loop.submit { loop.resources.count }
            #expect(resources == 0)
        }
    }

    @Test func listeningOnATakenPortFailsWithAddressInUseNamingTheAddress() async throws {
        try await withLoop { loop in
            let port = try await startEchoServer(on: loop)
            let error = try await loop.submit { () -> NetError? in
                do throws(NetError) {
                    _ = try loop.listen(host: "127.0.0.1", port: port) { _ in }
                    return nil
                } catch {
                    return error
                }
            }
            #expect(error?.code == .addressInUse)
            #expect(error?.description == "bind 127.0.0.1:\(port): address already in use")
        }
    }

    @Test func listeningOnANameInsteadOfANumericAddressIsRefused() async throws {
        try await withLoop { loop in
            let code = try await loop.submit { () -> NetError.Code? in
                do throws(NetError) {
                    _ = try loop.listen(host: "localhost", port: 0) { _ in }
                    return nil
                } catch {
                    return error.code
                }
            }
            #expect(code == .invalidAddress)
        }
    }

    @Test func connectArgumentsOutOfRangeAreRefusedBeforeAnythingStarts() async throws {
        try await withLoop { loop in
            let codes = try await loop.submit { () -> [NetError.Code] in
                var codes: [NetError.Code] = []
                let cases: [(String, Int, Int)] = [
                    ("127.0.0.1", 0, 1_000), ("127.0.0.1", 65_536, 1_000), ("", 80, 1_000),
                    (String(repeating: "a", count: 300), 80, 1_000), ("127.0.0.1", 80, 0),
                    ("127.0.0.1", 80, NetLimits.connectTimeoutMillisecondsMax + 1),
                ]
                for (host, port, timeout) in cases {
                    do throws(NetError) {
                        try loop.connect(host: host, port: port, timeoutMilliseconds: timeout) { _ in
                            Issue.record("a refused connect called its completion")
                        }
                    } catch {
                        codes.append(error.code)
                    }
                }
                return codes
            }
            #expect(
                codes == [
                    .invalidAddress, .invalidAddress, .invalidAddress, .invalidAddress, .invalidArgument,
                    .invalidArgument,
                ])
        }
    }

    @Test func aHostNameIsResolvedBeforeConnecting() async throws {
        try await withLoop { loop in
            let port = try await startEchoServer(on: loop)
            let echoed = ByteRecorder()
            let client = try await connect(on: loop, port: port, host: "localhost") { connection in
                connection.onRead = { echoed.append($0) }
            }
            try await loop.submit { try client.write([2, 4, 6]) }
            try await eventually("the echo") { echoed.count == 3 }
            #expect(echoed.bytes == [2, 4, 6])
        }
    }

    @Test func aHostNameThatDoesNotResolveFailsWithHostNotFound() async throws {
        try await withLoop { loop in
            let result = try await attempt(on: loop, host: "no-such-host.invalid", port: 7700)
            guard case let .failure(error) = result else {
                Issue.record("connected to a host that cannot exist")
                return
            }
            #expect(error.code == .hostNotFound)
            #expect(error.context == "resolve no-such-host.invalid:7700")
        }
    }

    @Test func closingAConnectionBeforeItIsEstablishedFailsItsCompletion() async throws {
        try await withLoop { loop in
            let port = try await startEchoServer(on: loop)
            let outcome = Completion<Result<Connection, NetError>>()
            try await loop.submit {
                let connection = try loop.connect(host: "127.0.0.1", port: port) { outcome.fulfill($0) }
                connection.close()
            }
            let result = try await outcome.value(within: 5_000, "the completion")
            guard case let .failure(error) = result else {
                Issue.record("a closed attempt still connected")
                return
            }
            #expect(error.code == .notOpen)
        }
    }

    @Test func aConnectionThatIsNeverAcceptedTimesOut() async throws {
        // A raw socket listening with the shortest backlog and never accepting: once its queue is full the
        // kernel drops further handshakes, so a connect hangs until its timeout.
        let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(server >= 0)
        defer { close(server) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(server, raw, length) == 0 && listen(server, 0) == 0 && getsockname(server, raw, &length) == 0
            }
        }
        try #require(bound)
        let port = Int(UInt16(bigEndian: address.sin_port))
        try await withLoop { loop in
            var codes: [NetError.Code] = []
            for _ in 0..<6 {
                if case let .failure(error) = try await attempt(on: loop, port: port, timeoutMilliseconds: 300) {
                    codes.append(error.code)
                    break
                }
            }
            #expect(codes == [.timedOut])
        }
    }
}
