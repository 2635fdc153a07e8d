/// The bytes that connections which have not authenticated hold, against a fixed cap: each may keep
/// ``reservedBytes`` of unfinished frame on its own (a client's hello needs a few hundred bytes), and
/// what any holds beyond that is drawn from one pool of at most ``sharedBytesMax`` bytes (a peer's hello
/// carries a version vector, up to ``SyncLimits/handshakeFrameBytesMax``).
///
/// A stranger who opens many connections and sends each a large frame's header and part of its payload
/// fills the pool, not the daemon's memory: the connection whose bytes the pool cannot cover is refused,
/// and clients whose hellos fit their reserve are still served. Loop-confined, like the driver.
///
/// ```swift
/// var budget = HandshakeBudget()
/// if !budget.hold(session.bufferedByteCount, for: ObjectIdentifier(channel)) { refuse(channel) }
/// budget.release(ObjectIdentifier(channel))   // authenticated, or gone
/// ```
struct HandshakeBudget {
    /// Bytes each unauthenticated connection may hold without drawing on the pool.
    let reservedBytes: Int
    /// Most bytes the pool lends, across every unauthenticated connection.
    let sharedBytesMax: Int
    /// Bytes lent now.
    private(set) var sharedBytes = 0
    /// What each connection drew from the pool.
    private var drawn: [ObjectIdentifier: Int] = [:]

    init(
        reservedBytes: Int = SyncShellLimits.handshakeBytesReserved,
        sharedBytesMax: Int = SyncShellLimits.handshakeBytesSharedMax
    ) {
        precondition(reservedBytes >= 0, "a negative reserve")
        precondition(sharedBytesMax >= 0, "a negative pool")
        self.reservedBytes = reservedBytes
        self.sharedBytesMax = sharedBytesMax
    }

    /// Connections drawing on the pool now.
    var borrowerCount: Int { drawn.count }

    /// Records that `connection` holds `bufferedBytes`: true when its reserve and the pool cover them.
    /// When they do not, the connection's draw is returned and it must be refused (its bytes dropped).
    mutating func hold(_ bufferedBytes: Int, for connection: ObjectIdentifier) -> Bool {
        precondition(bufferedBytes >= 0, "negative buffered bytes")
        let previous = drawn[connection] ?? 0
        let wanted = max(0, bufferedBytes - reservedBytes)
        guard sharedBytes - previous + wanted <= sharedBytesMax else {
            release(connection)
            return false
        }
        sharedBytes += wanted - previous
        drawn[connection] = wanted == 0 ? nil : wanted
        precondition(sharedBytes >= 0 && sharedBytes <= sharedBytesMax, "the pool lent \(sharedBytes) bytes")
        return true
    }

    /// Returns what `connection` drew: it authenticated, or it is gone.
    mutating func release(_ connection: ObjectIdentifier) {
        guard let previous = drawn.removeValue(forKey: connection) else { return }
        sharedBytes -= previous
        precondition(sharedBytes >= 0, "the pool went negative")
    }
}
