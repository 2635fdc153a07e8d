import Foundation
import Testing

/// What a probe gets from a daemon at its limits before authentication (Docs/SECURITY.md).
@Suite(.serialized, .timeLimit(.minutes(5))) struct DaemonLimitsTests {
    /// With every slot taken by idle connections, a real client got "connectionLost: the connection
    /// closed" (exit 3) and no reason; it now hears "too many connections", and the log names the limit.
    @Test func aClientPastTheConnectionLimitIsToldWhy() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let tokens = try DaemonIntegrationTests.tokens(scratch, names: ["hub"])
        let hub = try await Daemon(
            database: scratch.file("hub.sqlite"), tokens: tokens, name: "hub", openFiles: (200, 200))
        defer { hub.stop() }
        let limit = 200 - 128
        let sockets = (0..<limit).compactMap { _ in RawSocket.connect(port: hub.port) }
        defer { for socket in sockets { close(socket) } }
        #expect(sockets.count == limit)
        try await eventually("the slots to fill", seconds: 10) {
            let result = try await DaemonIntegrationTests.client(hub, name: "hub", ["get", "/x"])
            return result.status == 3 && result.stderr.contains("too many connections")
        }
        #expect(hub.log.contains("refusing connection: too many connections"), "\(hub.log)")
        #expect(hub.log.contains("limit=\(limit)"), "\(hub.log)")
    }

    /// `printf '\xff\xff\xff\xff' | nc` returned EOF where Docs/PROTOCOL.md §2 promises the error frame
    /// frameTooLarge.
    @Test func anOversizedHeaderGetsTheErrorFrameThePageDocumentsCallsFor() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let hub = try await Daemon(
            database: scratch.file("hub.sqlite"), tokens: try DaemonIntegrationTests.tokens(scratch, names: []),
            name: "hub")
        defer { hub.stop() }
        let socket = try #require(RawSocket.connect(port: hub.port))
        defer { close(socket) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let header: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF]
        #expect(header.withUnsafeBytes { write(socket, $0.baseAddress, $0.count) } == 4)
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(socket, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            answer += buffer[0..<count]
        }
        // An error frame: length, type 12, code 2 (frameTooLarge), then its message.
        #expect(answer.count > 7, "\(answer)")
        #expect(answer.dropFirst(4).first == 12)
        #expect(Array(answer.dropFirst(5).prefix(2)) == [0, 2])
        #expect(String(decoding: answer, as: UTF8.self).contains("header announces 4294967299 bytes"))
    }
}
