import CLibUV

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An IPv4 or IPv6 socket address, parsed from a numeric host or copied from the system.
struct SocketAddress: CustomStringConvertible {
    /// Room for either family, as the system keeps it.
    private var storage = sockaddr_storage()

    /// Parses a numeric IPv4 (`127.0.0.1`) or IPv6 (`::1`, `[::1]`) host; nil for anything else, names included.
    ///
    /// - Parameters:
    ///   - host: the numeric host.
    ///   - port: the port, 0...65535.
    init?(numericHost host: String, port: Int) {
        guard (0...65_535).contains(port) else { return nil }
        var ipv4 = sockaddr_in()
        if uv_ip4_addr(host, Int32(port), &ipv4) == 0 {
            Self.copy(ipv4, into: &storage)
            return
        }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        var ipv6 = sockaddr_in6()
        guard uv_ip6_addr(bare, Int32(port), &ipv6) == 0 else { return nil }
        Self.copy(ipv6, into: &storage)
    }

    /// Copies an address the system gave (from `getaddrinfo`, `getpeername`), replacing its port when given.
    ///
    /// - Returns: nil when the address is neither IPv4 nor IPv6.
    init?(_ address: UnsafePointer<sockaddr>, port: Int? = nil) {
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            var ipv4 = UnsafeRawPointer(address).loadUnaligned(as: sockaddr_in.self)
            if let port { ipv4.sin_port = UInt16(truncatingIfNeeded: port).bigEndian }
            Self.copy(ipv4, into: &storage)
        case AF_INET6:
            var ipv6 = UnsafeRawPointer(address).loadUnaligned(as: sockaddr_in6.self)
            if let port { ipv6.sin6_port = UInt16(truncatingIfNeeded: port).bigEndian }
            Self.copy(ipv6, into: &storage)
        default:
            return nil
        }
    }

    /// Whether this is an IPv4 address.
    var isIPv4: Bool { Int32(storage.ss_family) == AF_INET }

    /// The port, in host byte order.
    var port: Int {
        withSockaddr { address in
            if isIPv4 {
                return Int(UInt16(bigEndian: UnsafeRawPointer(address).loadUnaligned(as: sockaddr_in.self).sin_port))
            }
            return Int(UInt16(bigEndian: UnsafeRawPointer(address).loadUnaligned(as: sockaddr_in6.self).sin6_port))
        }
    }

    /// The numeric host, without brackets.
    var host: String {
        var text = [CChar](repeating: 0, count: 64)
        let status = withSockaddr { address in uv_ip_name(address, &text, text.count) }
        guard status == 0 else { return "?" }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `"127.0.0.1:7700"` or `"[::1]:7700"`.
    var description: String { Self.describe(host: host, port: port) }

    /// Lends the address as the `sockaddr` libuv calls take.
    func withSockaddr<Result>(_ body: (UnsafePointer<sockaddr>) -> Result) -> Result {
        withUnsafeBytes(of: storage) { raw in
            body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self))
        }
    }

    /// Formats a host and port for logs and error contexts, bracketing IPv6 hosts.
    static func describe(host: String, port: Int) -> String {
        host.contains(":") && !host.hasPrefix("[") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    private static func copy<Address>(_ address: Address, into storage: inout sockaddr_storage) {
        withUnsafeBytes(of: address) { source in
            withUnsafeMutableBytes(of: &storage) { target in
                target.copyMemory(from: source)
            }
        }
    }
}
