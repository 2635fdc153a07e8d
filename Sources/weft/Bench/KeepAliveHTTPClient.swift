import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A minimal HTTP/1.1 client over one blocking keep-alive socket, for `weft bench http` only: it sends
/// a request, reads the status line, the headers and a `Content-Length` or chunked body, and reuses the
/// connection. The measured server is the real one (Hummingbird); this client keeps its own cost per
/// request to a `send` and a `recv` or two, so that the figures are the server's, not URLSession's.
/// Each one is used by one thread at a time.
final class KeepAliveHTTPClient: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private var chunk = [UInt8](repeating: 0, count: 65_536)

    /// Connects to 127.0.0.1:`port`.
    init(port: Int) throws {
        guard let descriptor = loopbackSocket(port: port, noDelay: true) else {
            throw Failure(description: "cannot connect to 127.0.0.1:\(port)")
        }
        self.descriptor = descriptor
    }

    deinit { Glibc.close(descriptor) }

    /// Sends one request and answers the status and the body.
    func send(_ method: String, _ target: String, bearer: String, body: String?) throws -> (status: Int, body: [UInt8]) {
        var request = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(bearer)\r\n"
        if let body {
            request += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        } else {
            request += "\r\n"
        }
        var bytes = Array(request.utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeMutableBytes { Glibc.send(descriptor, $0.baseAddress! + sent, $0.count - sent, 0) }
            guard count > 0 else { throw Failure(description: "the server closed the connection") }
            sent += count
        }
        bytes.removeAll()
        let head = try readHead()
        let lines = head.split(separator: "\r\n")
        guard let statusLine = lines.first, let status = Int(statusLine.split(separator: " ").dropFirst().first ?? "")
        else { throw Failure(description: "not an HTTP answer: \(head.prefix(80))") }
        var length: Int?
        var chunked = false
        for line in lines.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let name = parts[0].lowercased()
            let value = parts[1].trimmingCharacters(in: .whitespaces)
            if name == "content-length" { length = Int(value) }
            if name == "transfer-encoding", value.lowercased().contains("chunked") { chunked = true }
        }
        if chunked { return (status, try readChunked()) }
        return (status, try read(count: length ?? 0))
    }

    /// The status line and headers, up to the blank line.
    private func readHead() throws -> String {
        while true {
            if let end = find([13, 10, 13, 10]) {
                let head = String(decoding: buffer[0..<end], as: UTF8.self)
                buffer.removeFirst(end + 4)
                return head
            }
            try fill()
        }
    }

    private func readChunked() throws -> [UInt8] {
        var body: [UInt8] = []
        while true {
            while find([13, 10]) == nil { try fill() }
            guard let end = find([13, 10]),
                let size = Int(String(decoding: buffer[0..<end], as: UTF8.self).split(separator: ";")[0], radix: 16)
            else { throw Failure(description: "a bad chunk size") }
            buffer.removeFirst(end + 2)
            body += try read(count: size)
            _ = try read(count: 2)
            if size == 0 { return body }
        }
    }

    private func read(count: Int) throws -> [UInt8] {
        while buffer.count < count { try fill() }
        let bytes = Array(buffer[0..<count])
        buffer.removeFirst(count)
        return bytes
    }

    private func find(_ marker: [UInt8]) -> Int? {
        guard buffer.count >= marker.count else { return nil }
        for index in 0...(buffer.count - marker.count) where buffer[index] == marker[0] {
            if Array(buffer[index..<index + marker.count]) == marker { return index }
        }
        return nil
    }

    private func fill() throws {
        let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { throw Failure(description: "the server closed the connection") }
        buffer += chunk[0..<count]
    }
}

/// A TCP socket connected to 127.0.0.1:`port`, or nil when it cannot be made or connected.
func loopbackSocket(port: Int, noDelay: Bool = false) -> Int32? {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { return nil }
    if noDelay {
        var on: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
    }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard connected == 0 else {
        Glibc.close(descriptor)
        return nil
    }
    return descriptor
}
