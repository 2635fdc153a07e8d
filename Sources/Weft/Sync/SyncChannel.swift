import Logging
import WeftNet
import WeftSync

/// One connection of a ``SyncDriver`` and the session that runs over it. Confined to the loop thread.
///
/// It owns the session's timers and the frames waiting for the socket while the connection pushes back.
final class _SyncChannel {
    let connection: Connection
    var session: SyncSession
    let side: SyncSide
    /// The outbound peer this channel serves, nil for an accepted connection.
    let outbound: _OutboundPeer?
    var status: SyncPeerStatus
    var timers: [SyncTimer: TimerHandle] = [:]
    /// Frame payloads (type byte first) held while the connection is not writable, oldest first.
    var queuedPayloads: [[UInt8]] = []
    var queuedBytes = 0
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

    /// Writes the whole frames in `bytes` (`[u32 length][type][payload]`, as the session encodes them).
    ///
    /// WeftNet adds its own `[u32 length]` header to each payload, and the two headers have the same
    /// layout, so each frame is handed over without its header and comes out identical on the wire.
    ///
    /// - Throws: ``SyncError`` with ``SyncErrorCode/limitExceeded`` when more than
    ///   ``SyncShellLimits/queuedBytesMax`` wait for a connection that pushes back, or
    ///   ``SyncErrorCode/connectionLost`` when the connection refuses the write.
    func send(_ bytes: [UInt8]) throws(SyncError) {
        var index = 0
        while index < bytes.count {
            precondition(bytes.count - index >= SyncLimits.frameHeaderBytes, "a session sent a truncated frame")
            var length = 0
            for offset in 0..<NetLimits.frameHeaderBytes { length = length << 8 | Int(bytes[index + offset]) }
            let start = index + NetLimits.frameHeaderBytes
            let end = start + length
            precondition(length >= 1, "a session frame holds at least its type byte")
            precondition(end <= bytes.count, "a session frame runs past the bytes sent")
            try enqueue(bytes[start..<end])
            index = end
        }
        precondition(index == bytes.count, "session bytes end inside a frame")
    }

    private func enqueue(_ payload: ArraySlice<UInt8>) throws(SyncError) {
        guard connection.isOpen else { return }
        if queuedPayloads.isEmpty && connection.isWritable {
            try write(payload)
            return
        }
        guard queuedBytes + payload.count <= SyncShellLimits.queuedBytesMax else {
            throw SyncError(
                .limitExceeded, "more than \(SyncShellLimits.queuedBytesMax) bytes wait for \(status.address)")
        }
        queuedPayloads.append(Array(payload))
        queuedBytes += payload.count
    }

    /// Writes queued frames while the connection takes them: while it is writable, called when it turns
    /// writable again; or, for a channel about to close (`ignoringBackpressure`), as far as its buffer
    /// takes them, since the connection drains its buffer before it closes.
    func flushQueue(ignoringBackpressure: Bool = false) throws(SyncError) {
        var written = 0
        defer {
            queuedPayloads.removeFirst(written)
            precondition(queuedBytes >= 0, "queued bytes went negative")
            precondition(!queuedPayloads.isEmpty || queuedBytes == 0, "an empty queue holds bytes")
        }
        while written < queuedPayloads.count, connection.isOpen, ignoringBackpressure || connection.isWritable {
            let payload = queuedPayloads[written]
            try write(payload[...])
            queuedBytes -= payload.count
            written += 1
        }
    }

    private func write(_ payload: ArraySlice<UInt8>) throws(SyncError) {
        do {
            try connection.write(payload)
            status.bytesSent += NetLimits.frameHeaderBytes + payload.count
        } catch {
            throw SyncError(.connectionLost, "\(error)")
        }
    }

    /// Forgets the frames still queued: the session is over, and they would only delay its last frame.
    func dropQueued() {
        queuedPayloads = []
        queuedBytes = 0
    }

    /// Stops every timer and forgets queued frames; the channel is done.
    func tearDown() {
        for timer in timers.values { timer.cancel() }
        timers = [:]
        queuedPayloads = []
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

    init(address: String, token: AuthToken? = nil) {
        self.address = address
        self.token = token
        status = SyncPeerStatus(
            address: address, direction: .outbound, replica: nil, role: nil, isConnected: false, opsBehind: 0,
            sessionsEstablished: 0, lastError: nil)
    }
}
