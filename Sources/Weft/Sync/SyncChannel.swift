import Logging
import WeftNet
import WeftSync

/// One connection of a ``SyncDriver`` and the session that runs over it. Confined to the loop thread.
///
/// It owns the session's timers, the frames waiting for the socket while the connection pushes back, and
/// what the handshake budget counts for it.
final class _SyncChannel {
    let connection: Connection
    var session: SyncSession
    let side: SyncSide
    /// The outbound peer this channel serves, nil for an accepted connection.
    let outbound: _OutboundPeer?
    var status: SyncPeerStatus
    var timers: [SyncTimer: TimerHandle] = [:]
    /// Encoded frames (each send of the session, headers included) held while the connection is not
    /// writable, oldest first.
    var queued: [[UInt8]] = []
    var queuedBytes = 0
    /// The answer to a failed authentication, held for the throttle's delay (``AuthenticationThrottle``).
    var heldAnswer: TimerHandle?
    /// Whether the session reported the connected phase at least once.
    var wasConnected = false
    var isClosed = false

    init(connection: Connection, session: SyncSession, side: SyncSide, outbound: _OutboundPeer?) {
        self.connection = connection
        self.session = session
        self.side = side
        self.outbound = outbound
        status = SyncPeerStatus(
            address: outbound?.address ?? connection.remoteAddress,
            direction: outbound == nil ? .inbound : .outbound, replica: nil, role: nil, isConnected: false,
            opsBehind: 0, sessionsEstablished: outbound?.status.sessionsEstablished ?? 0,
            // A redial keeps the last error until its session connects (a wrong token stays visible).
            lastError: outbound?.status.lastError, lastErrorCode: outbound?.status.lastErrorCode,
            bytesSent: outbound?.status.bytesSent ?? 0, bytesReceived: outbound?.status.bytesReceived ?? 0)
    }

    /// Writes the frames in `bytes` (as the session encoded them, headers included) or, while the
    /// connection pushes back, queues them.
    ///
    /// - Throws: ``SyncError`` with ``SyncErrorCode/limitExceeded`` when more than
    ///   ``SyncShellLimits/queuedBytesMax`` wait for a connection that pushes back, or
    ///   ``SyncErrorCode/connectionLost`` when the connection refuses the write.
    func send(_ bytes: [UInt8]) throws(SyncError) {
        guard connection.isOpen, !bytes.isEmpty else { return }
        if queued.isEmpty && connection.isWritable {
            try write(bytes)
            return
        }
        guard queuedBytes + bytes.count <= SyncShellLimits.queuedBytesMax else {
            throw SyncError(
                .limitExceeded, "more than \(SyncShellLimits.queuedBytesMax) bytes wait for \(status.address)")
        }
        queued.append(bytes)
        queuedBytes += bytes.count
    }

    /// Writes queued frames while the connection takes them: while it is writable, called when it turns
    /// writable again; or, for a channel about to close (`ignoringBackpressure`), as far as its buffer
    /// takes them, since the connection drains its buffer before it closes.
    func flushQueue(ignoringBackpressure: Bool = false) throws(SyncError) {
        var written = 0
        defer {
            queued.removeFirst(written)
            precondition(queuedBytes >= 0, "queued bytes went negative")
            precondition(!queued.isEmpty || queuedBytes == 0, "an empty queue holds bytes")
        }
        while written < queued.count, connection.isOpen, ignoringBackpressure || connection.isWritable {
            let bytes = queued[written]
            try write(bytes)
            queuedBytes -= bytes.count
            written += 1
        }
    }

    private func write(_ bytes: [UInt8]) throws(SyncError) {
        do {
            try connection.write(bytes)
            status.bytesSent += bytes.count
        } catch {
            throw SyncError(.connectionLost, "\(error)")
        }
    }

    /// Forgets the frames still queued: the session is over, and they would only delay its last frame.
    func dropQueued() {
        queued = []
        queuedBytes = 0
    }

    /// Stops every timer and forgets queued frames; the channel is done.
    func tearDown() {
        for timer in timers.values { timer.cancel() }
        timers = [:]
        heldAnswer?.cancel()
        heldAnswer = nil
        queued = []
        queuedBytes = 0
        isClosed = true
    }
}

/// A peer the driver dials and redials: the reconnector and what is known about the peer across
/// connections. Confined to the loop thread.
final class _OutboundPeer {
    let address: String
    /// The token the peer at this address must prove, whatever its name; nil to look it up in the book.
    let token: AuthToken?
    var reconnector: Reconnector?
    var status: SyncPeerStatus
    weak var channel: _SyncChannel?
    /// The replicating member last connected at this address: what it acknowledged (in the driver's
    /// book) tells its backlog while it is out of reach.
    var member: ReplicaID?
    /// The code of the lasting refusal last logged with its advice, so that a refusal repeated at each
    /// redial is said once (cleared by a session that ends otherwise).
    var refusalLogged: SyncErrorCode?

    init(address: String, token: AuthToken? = nil) {
        self.address = address
        self.token = token
        status = SyncPeerStatus(
            address: address, direction: .outbound, replica: nil, role: nil, isConnected: false, opsBehind: 0,
            sessionsEstablished: 0, lastError: nil)
    }
}
