import WeftCore
import WeftSync

/// How one connection of a ``SyncDriver`` stands: who is at the other end, whether the session is up,
/// and how far behind the peer is.
public struct SyncPeerStatus: Sendable, Hashable {
    /// Which side opened the connection.
    public enum Direction: String, Sendable, Hashable {
        /// A peer this driver dials (and redials) itself.
        case outbound
        /// A peer that connected to this driver's listener.
        case inbound
    }

    /// `host:port` dialled (outbound) or the remote address (inbound).
    public var address: String
    /// Which side opened the connection.
    public var direction: Direction
    /// The peer's replica id, once its hello arrived.
    public var replica: ReplicaID?
    /// The peer's role, once its hello arrived.
    public var role: SyncRole?
    /// True while the session is authenticated and streaming.
    public var isConnected: Bool
    /// Ops this replica holds that the peer has not acknowledged yet. For a peer this replica dials that
    /// is out of reach: every op held beyond what it last acknowledged, writes made meanwhile included
    /// (for one not reached yet, this replica's own writes that no peer acknowledged).
    public var opsBehind: UInt64
    /// Sessions that reached the connected phase on this address (outbound: across reconnects).
    public var sessionsEstablished: Int
    /// The last error a session or the transport reported, as text.
    public var lastError: String?
    /// The code of the last error when a session reported it (nil for a transport error, such as a
    /// refused connection): ``SyncErrorCode/authenticationFailed`` for a wrong token, for example.
    public var lastErrorCode: SyncErrorCode?
    /// For a dialled peer that refused this replica for a reason only a change of configuration ends: what
    /// to change. It is then dialled again only every ``SyncShellLimits/refusedRedialDelayMilliseconds``.
    public var advice: String?
    /// Bytes written to this peer (frames with their headers), since the driver started (outbound: across
    /// reconnects).
    public var bytesSent: Int = 0
    /// Bytes received from this peer (frames with their headers), counted as for ``bytesSent``.
    public var bytesReceived: Int = 0
}

/// A snapshot of a ``SyncDriver``: where it listens and every peer it knows.
///
/// ```swift
/// let status = driver.status
/// for peer in status.peers where !peer.isConnected { print(peer.address, peer.lastError ?? "") }
/// ```
public struct SyncDriverStatus: Sendable, Hashable {
    /// The address the driver listens on, if it listens.
    public var listeningAddress: String?
    /// Outbound peers (connected or not), then inbound connections still open.
    public var peers: [SyncPeerStatus]

    /// Bytes written to every peer since the driver started, connections closed since included.
    public var bytesSent: Int = 0
    /// Bytes received from every peer since the driver started, connections closed since included.
    public var bytesReceived: Int = 0

    /// The peers whose session is connected.
    public var connectedCount: Int { peers.count(where: \.isConnected) }

    /// What sync is doing, as Couchbase Lite's replicator reports it: see ``SyncActivity``.
    ///
    /// ```swift
    /// for await status in replica.syncStatusUpdates() where status.activity == .idle { break }
    /// ```
    public var activity: SyncActivity {
        let connected = peers.filter { $0.isConnected && $0.role != .client }
        if connected.isEmpty {
            if peers.isEmpty, listeningAddress == nil { return .stopped }
            // A dialled peer not reached yet, with no error so far, is being dialled for the first time.
            let isDialling = peers.contains {
                $0.direction == .outbound && $0.sessionsEstablished == 0 && $0.lastError == nil
            }
            return isDialling ? .connecting : .offline
        }
        return connected.contains { $0.opsBehind > 0 } ? .busy : .idle
    }
}

/// What a replica's sync is doing (``SyncDriverStatus/activity``), after Couchbase Lite's replicator
/// activity levels.
public enum SyncActivity: String, Sendable, Hashable {
    /// Sync never started (no listen, no connect), or it stopped.
    case stopped
    /// Sync runs but no peer is connected: writes wait, and dialled peers are redialled.
    case offline
    /// A dialled peer is being reached for the first time.
    case connecting
    /// Connected, and every connected peer holds every op this replica holds.
    case idle
    /// Connected, and some connected peer still lacks ops this replica holds (they are on their way).
    case busy
}
