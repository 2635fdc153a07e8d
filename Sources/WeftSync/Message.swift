import WeftCore

/// Which end of a connection a session is: the initiator dialled, the acceptor answered.
public enum SyncSide: Sendable, Hashable {
    case initiator
    case acceptor
}

/// What a replica is to its peer. Peers and hubs replicate the same way; a client does not replicate
/// but sends ``ClientRequest``s to a daemon.
public enum SyncRole: UInt8, Sendable, Hashable {
    /// A replica in a mesh.
    case peer = 1
    /// A replica that many others connect to (the centre of a star).
    case hub = 2
    /// A program that reads and writes through a daemon without holding a replica.
    case client = 3
}

/// The type byte of a frame.
///
/// ```swift
/// MessageType(rawValue: frame.type)   // nil for a type this build does not know
/// ```
public enum MessageType: UInt8, Sendable, Hashable, CaseIterable {
    /// ``Message/hello(_:)``.
    case hello = 1
    /// ``Message/authResponse(_:)``.
    case authResponse = 2
    /// ``Message/welcome(_:)``.
    case welcome = 3
    /// ``Message/ops(_:)``.
    case ops = 4
    /// ``Message/ack(_:)``.
    case ack = 5
    /// ``Message/snapshotBegin(_:)``.
    case snapshotBegin = 6
    /// ``Message/snapshotChunk(_:)``.
    case snapshotChunk = 7
    /// ``Message/snapshotEnd(_:)``.
    case snapshotEnd = 8
    /// ``Message/snapshotAck(chunkCount:)``.
    case snapshotAck = 9
    /// ``Message/ping(_:)``.
    case ping = 10
    /// ``Message/pong(_:)``.
    case pong = 11
    /// ``Message/error(_:)``.
    case error = 12
    /// ``Message/snapshotTouches(_:)``.
    case snapshotTouches = 13
    /// ``Message/revisions(_:)``.
    case revisions = 14
    /// ``Message/request(_:)``.
    case request = 32
    /// ``Message/reply(_:)``.
    case reply = 33
    /// ``Message/event(_:)``.
    case event = 34
    /// ``Message/queryEvent(_:)``.
    case queryEvent = 35
}

/// The first message of each side: who it is, what it has, and a fresh nonce for authentication.
///
/// ```swift
/// let hello = Hello(replica: id, role: .peer, name: "", nonce: nonce, versionVector: log.versionVector)
/// ```
public struct Hello: Sendable, Hashable {
    /// The protocol version the sender speaks (``SyncLimits/protocolVersion``).
    public var protocolVersion: UInt16
    /// The sender's replica id.
    public var replica: ReplicaID
    /// The sender's role.
    public var role: SyncRole
    /// The name the sender's token is filed under on the other side; empty to use the replica id.
    public var name: String
    /// Fresh random bytes; both nonces enter both proofs.
    public var nonce: AuthNonce
    /// Every op the sender has, per origin.
    public var versionVector: VersionVector
    /// How many unacknowledged op and snapshot bytes the sender accepts (its receive window).
    public var windowBytes: UInt64
    /// The stamp the sender compacted up to (or installed a snapshot at), nil when it never did: a hub
    /// sends a peer limited to a share a snapshot of that share when it compacted further.
    public var compactionStamp: Stamp?
    /// True when the sender holds partial ops (a hub's share of the tree, ``Op/isPartial``): a replica that
    /// would send it every op whole refuses the session.
    public var holdsShare: Bool

    /// A hello from its parts.
    public init(
        protocolVersion: UInt16 = SyncLimits.protocolVersion, replica: ReplicaID, role: SyncRole, name: String,
        nonce: AuthNonce, versionVector: VersionVector, windowBytes: UInt64 = UInt64(SyncLimits.windowBytesMax),
        compactionStamp: Stamp? = nil, holdsShare: Bool = false
    ) {
        self.protocolVersion = protocolVersion
        self.replica = replica
        self.role = role
        self.name = name
        self.nonce = nonce
        self.versionVector = versionVector
        self.windowBytes = windowBytes
        self.compactionStamp = compactionStamp
        self.holdsShare = holdsShare
    }
}

/// What a receiver has merged: sent when that frees room in the sender's window, and on keep-alive
/// ticks when the receiver's log grew.
public struct Acknowledgement: Sendable, Hashable {
    /// Every op the receiver has (merged and durable), per origin.
    public var versionVector: VersionVector
    /// The receiver's stable frontier (ops every member has), or empty when it does not know one.
    public var stableFrontier: VersionVector
    /// The stamp the receiver compacted up to, nil when it never compacted. A hub's leaves compact no
    /// further: an op the hub accepts is then above every frontier of its star.
    public var compactionStamp: Stamp?

    /// An acknowledgement from its parts.
    public init(
        versionVector: VersionVector, stableFrontier: VersionVector = VersionVector(), compactionStamp: Stamp? = nil
    ) {
        self.versionVector = versionVector
        self.stableFrontier = stableFrontier
        self.compactionStamp = compactionStamp
    }
}

/// Announces a snapshot: the state folded up to `frontier`, in `entryCount` entries of
/// `byteCount` encoded bytes in total, then `touchCount` compacted touches.
public struct SnapshotBegin: Sendable, Hashable {
    /// The ops folded into the snapshot's state.
    public var frontier: VersionVector
    /// The sender's compaction stamp: no op outside `frontier` is stamped at or below it, so the
    /// receiver refuses later ops at or below it as the sender does. Nil for an empty snapshot.
    public var stampFrontier: Stamp?
    /// Number of entries the chunks will carry.
    public var entryCount: UInt64
    /// Sum of the encoded sizes (path and value) of the entries.
    public var byteCount: UInt64
    /// Number of compacted touches the touch frames will carry.
    public var touchCount: UInt64

    /// An announcement from its parts.
    public init(
        frontier: VersionVector, stampFrontier: Stamp? = nil, entryCount: UInt64, byteCount: UInt64,
        touchCount: UInt64 = 0
    ) {
        self.frontier = frontier
        self.stampFrontier = stampFrontier
        self.entryCount = entryCount
        self.byteCount = byteCount
        self.touchCount = touchCount
    }
}

/// One piece of a snapshot: a subtree (or some children of an object) at a path. The receiver
/// merges entries deeply, so two entries at the same object add their children.
public struct SnapshotEntry: Sendable, Hashable {
    /// Where the subtree lies.
    public var path: Path
    /// The subtree, never null.
    public var value: Value

    /// An entry from its path and (non-null) value.
    public init(path: Path, value: Value) {
        self.path = path
        self.value = value
    }
}

/// One message of the sync protocol. See `Docs/PROTOCOL.md` for the wire layout of each.
///
/// ```swift
/// let bytes = MessageCodec.encode(.ping(7))
/// var decoder = FrameDecoder()
/// decoder.append(bytes)
/// let message = try MessageCodec.decode(decoder.nextFrame()!)   // .ping(7)
/// ```
public enum Message: Sendable, Hashable {
    /// Opens a session (both sides send one; the acceptor's is the challenge).
    case hello(Hello)
    /// The initiator's proof that it holds the shared token.
    case authResponse(AuthProof)
    /// The acceptor accepts the initiator and proves it holds the token too.
    case welcome(AuthProof)
    /// Ops the receiver lacks, per origin in sequence order (with the bytes each came in).
    case ops(EncodedOps)
    /// Decisions a hub carried to a replica limited to a share, decided again: each partial op takes
    /// the place of the one the receiver holds under its origin and sequence.
    case revisions(EncodedOps)
    /// What the receiver now has.
    case ack(Acknowledgement)
    /// A snapshot follows.
    case snapshotBegin(SnapshotBegin)
    /// Entries of the announced snapshot.
    case snapshotChunk([SnapshotEntry])
    /// Which origins' compacted ops touched which paths, after the entries of the announced
    /// snapshot: the receiver decides later transactions with them.
    case snapshotTouches([CompactedTouch])
    /// The snapshot is complete; the digest of its state lets the receiver check it.
    case snapshotEnd(StateDigest)
    /// How many snapshot chunks the receiver holds (frees the sender's window).
    case snapshotAck(chunkCount: UInt64)
    /// Keep-alive probe with a number the pong echoes.
    case ping(UInt64)
    /// Answer to a ping.
    case pong(UInt64)
    /// The sender closes the session because of this error.
    case error(SyncError)
    /// A client asks the daemon something.
    case request(ClientRequest)
    /// The daemon answers a request.
    case reply(ClientReply)
    /// The value under a watched path changed.
    case event(ClientEvent)
    /// The result of a live query changed.
    case queryEvent(ClientQueryEvent)

    /// The frame type that carries this message.
    public var type: MessageType {
        switch self {
        case .hello: return .hello
        case .authResponse: return .authResponse
        case .welcome: return .welcome
        case .ops: return .ops
        case .revisions: return .revisions
        case .ack: return .ack
        case .snapshotBegin: return .snapshotBegin
        case .snapshotChunk: return .snapshotChunk
        case .snapshotTouches: return .snapshotTouches
        case .snapshotEnd: return .snapshotEnd
        case .snapshotAck: return .snapshotAck
        case .ping: return .ping
        case .pong: return .pong
        case .error: return .error
        case .request: return .request
        case .reply: return .reply
        case .event: return .event
        case .queryEvent: return .queryEvent
        }
    }
}
