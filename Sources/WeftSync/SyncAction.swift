import WeftCore

/// The timers a session asks its owner to run. Scheduling a timer replaces any pending one of the
/// same kind.
public enum SyncTimer: Sendable, Hashable, CaseIterable {
    /// Fires when it may be time to send a ping (or a fresh ack) so the peer sees the session alive.
    case keepAlive
    /// Fires when the handshake or the idle timeout may have run out.
    case idle
}

/// Where a session stands, as reported to its owner.
public enum SyncPhase: Sendable, Hashable {
    /// Hellos and proofs are being exchanged.
    case handshaking
    /// Authenticated: ops (or client requests) flow.
    case connected
    /// Over; the status's error says why, when it was not a clean close.
    case closed
}

/// A report on a session for logs, dashboards and op status.
public struct SyncStatus: Sendable, Hashable {
    /// The peer's replica id, once its hello arrived.
    public var peer: ReplicaID?
    /// The name the peer introduced itself with (may be empty).
    public var peerName: String
    /// The peer's role, once its hello arrived.
    public var peerRole: SyncRole?
    /// Where the session stands.
    public var phase: SyncPhase
    /// Ops this replica holds that the peer has not acknowledged yet.
    public var opsBehind: UInt64
    /// Why the session closed, when it closed on an error.
    public var error: SyncError?
    /// True once connected to a replicating peer that may read the whole tree: it is sent every op, so
    /// it is a member whose acknowledgements count for stability. A peer with narrower grants is sent
    /// its share (placeholders and cut ops, not the ops), and what it says it holds does not count.
    public var peerIsMember: Bool

    /// A status from its parts.
    public init(
        peer: ReplicaID?, peerName: String, peerRole: SyncRole?, phase: SyncPhase, opsBehind: UInt64,
        error: SyncError?, peerIsMember: Bool = false
    ) {
        self.peer = peer
        self.peerName = peerName
        self.peerRole = peerRole
        self.phase = phase
        self.opsBehind = opsBehind
        self.error = error
        self.peerIsMember = peerIsMember
    }
}

/// What a session asks its owner to do. The owner performs the actions of one call in order.
///
/// ```swift
/// for action in session.onBytesReceived(bytes, source: log, now: loop.now) {
///     switch action {
///     case .send(let bytes): connection.write(bytes)
///     case .applyOps(let ops, _): try engine.apply(ops); /* then */ session.onLocalOpsAppended(…)
///     case .scheduleTimer(let timer, let delay): timers[timer].start(after: delay)
///     case .cancelTimer(let timer): timers[timer].stop()
///     case .close: connection.closeAfterFlush()
///     default: …
///     }
/// }
/// ```
public enum SyncAction: Sendable, Hashable {
    /// Write these bytes to the transport (one or more whole frames).
    case send([UInt8])
    /// Merge these ops received from `peer` (none of them already covered by the local version
    /// vector when they arrived). Check their stamps with ``HybridClock/receive(_:wallMillis:)``;
    /// on drift call ``SyncSession/onClose(error:now:)`` with ``SyncErrorCode/clockDrift``. Once
    /// merged (and durable), call ``SyncSession/onLocalOpsAppended(source:now:)`` so the session acks.
    /// Each op comes with the bytes it arrived in, which a store can keep as they are.
    case applyOps(EncodedOps, from: ReplicaID)
    /// Put each of these partial ops, decided again by `peer` (the hub of this replica, limited to a
    /// share), in place of the op held under its origin and sequence, and re-fold (see
    /// ``WeftCore/MergeEngine/revising(_:baseVector:)``). The log holds the same ops after it, so there is
    /// nothing new to acknowledge. Every op named was received (or folded into the base).
    case reviseOps(EncodedOps, from: ReplicaID)
    /// Replace the base state with this snapshot (keeping local ops above its frontier), then call
    /// ``SyncSession/onLocalOpsAppended(source:now:)``. The tail of the log follows as ops.
    case installSnapshot(SyncSnapshot, from: ReplicaID)
    /// The peer acknowledged ops: record it to compute op status and the stable frontier (see
    /// ``AcknowledgementBook``).
    case recordAcknowledgement(Acknowledgement, from: ReplicaID)
    /// A peer limited to a share acknowledged ops (their projections): record it for the stable frontier
    /// only (``AcknowledgementBook/recordShare(_:from:)``). A placeholder is no copy of an op, so these
    /// acks make nothing acknowledged.
    case recordShareAcknowledgement(Acknowledgement, from: ReplicaID)
    /// Start (or restart) a timer; when it fires, call ``SyncSession/onTimerFired(_:source:now:)``.
    case scheduleTimer(SyncTimer, afterMilliseconds: UInt64)
    /// Stop a timer.
    case cancelTimer(SyncTimer)
    /// The session's status changed.
    case reportStatus(SyncStatus)
    /// Daemon side: a client asks this; answer with ``SyncSession/onClientReply(_:now:)``.
    case handleRequest(ClientRequest)
    /// Client side: the daemon answered a request.
    case deliverReply(ClientReply)
    /// Client side: a watched value changed.
    case deliverEvent(ClientEvent)
    /// Client side: the result of a live query changed.
    case deliverQueryEvent(ClientQueryEvent)
    /// Close the transport once the bytes sent before are written. The error is nil for a clean close.
    case close(SyncError?)
}
