#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A blocking TCP client with a receive timeout, for tests that speak garbage to a listener.
final class RawSocket {
    private let descriptor: Int32

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    init(port: Int, timeoutSeconds: Int = 5) throws {
        #if canImport(Glibc)
            descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw Failure(description: "socket failed: \(errno)") }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc_connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard status == 0 else {
            close(descriptor)
            throw Failure(description: "connect failed: \(errno)")
        }
    }

    deinit { close(descriptor) }

    func send(_ bytes: [UInt8]) throws {
        let sent = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard sent == bytes.count else { throw Failure(description: "short write: \(sent) of \(bytes.count)") }
    }

    /// Reads until the peer closes (or the timeout), at most `limit` bytes.
    func readUntilClosed(limit: Int = 1 << 20) throws -> (bytes: [UInt8], closed: Bool) {
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while result.count < limit {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return (result, true) }
            if count < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK { return (result, false) }
                if errno == ECONNRESET { return (result, true) }
                throw Failure(description: "read failed: \(errno)")
            }
            result.append(contentsOf: buffer[0..<count])
        }
        return (result, false)
    }
}

private func Glibc_connect(_ socket: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    connect(socket, address, length)
}
