import WeftCore

/// Named limits of the sync protocol. Every size, count and delay that WeftSync checks or defaults to
/// lives here; `SyncLimitsTests` asserts how they relate.
public enum SyncLimits {
    /// The protocol version this build speaks, sent in every hello.
    public static let protocolVersion: UInt16 = 3

    // MARK: - Frames

    /// Bytes before a frame's payload: a 32-bit big-endian length and a type byte.
    public static let frameHeaderBytes = 5
    /// Largest frame, header included, in bytes: room for one batch of ``batchBytesMax`` plus one
    /// op of the largest size the core accepts.
    public static let frameBytesMax = batchBytesMax + CoreLimits.opBytesMax + 1024
    /// The size of an op a sender plans a frame's buffer with, in bytes (the buffer grows past it).
    public static let typicalOpBytes = 96
    /// Largest frame accepted before the peer is authenticated, in bytes (192 KiB): a hello whose
    /// version vector names about 10,000 origins fits; a client's hello takes a few hundred bytes. A
    /// header announcing more is refused (`frameTooLarge`) before any of its payload is kept.
    public static let handshakeFrameBytesMax = 192 * 1024

    // MARK: - Op streaming

    /// Most ops in one batch frame.
    public static let batchOpsMax = 4096
    /// Payload size at which a batch frame stops taking ops, in bytes (the op that crosses it is
    /// the last one of the batch).
    public static let batchBytesMax = 1024 * 1024
    /// Most unacknowledged bytes in flight to one peer (the backpressure window): a sender starts a
    /// frame only while fewer bytes than this are unacknowledged.
    public static let windowBytesMax = 8 * 1024 * 1024
    /// Smallest receive window a peer may advertise, in bytes.
    public static let windowBytesMin = 1024
    /// Most unacknowledged frames (batches and snapshot chunks) in flight to one peer.
    public static let windowFramesMax = 4096

    // MARK: - Snapshots

    /// Payload size at which a snapshot chunk stops taking entries, in bytes.
    public static let snapshotChunkBytesMax = 1024 * 1024
    /// Largest snapshot a session receives, in encoded bytes.
    public static let snapshotBytesMax: UInt64 = 4 * 1024 * 1024 * 1024
    /// Most entries (subtrees) in one snapshot.
    public static let snapshotEntriesMax: UInt64 = 64 * 1024 * 1024

    // MARK: - Authentication

    /// Bytes of a hello nonce.
    public static let nonceBytes = 32
    /// Bytes of an HMAC-SHA256 proof.
    public static let proofBytes = 32
    /// Shortest accepted token, in bytes.
    public static let tokenBytesMin = 16
    /// Longest accepted token, in bytes.
    public static let tokenBytesMax = 1024
    /// Longest credential name in a hello, in UTF-8 bytes.
    public static let nameBytesMax = 256
    /// Most path rules one name may hold (``PathRules``): each request is checked against all of them.
    public static let pathRulesPerNameMax = 256
    /// Most segments of a path pattern: a path's deepest node, plus a `**` between each pair of keys.
    public static let pathPatternSegmentsMax = 2 * CoreLimits.pathDepthMax + 1

    // MARK: - Errors and clients

    /// Longest message of an error frame, in UTF-8 bytes (longer messages are cut when sent).
    public static let errorMessageBytesMax = 4096
    /// Most client requests received and not yet answered on one session.
    public static let clientRequestsPendingMax = 256
    /// Most active watches of one client session.
    public static let clientWatchesMax = 1024
    /// Longest webhook identifier, context string or device token of a subscription, in UTF-8 bytes.
    public static let subscriptionFieldBytesMax = 1024

    // MARK: - Time

    /// Default delay without sending after which a ping is sent, in milliseconds.
    public static let pingIntervalMillisecondsDefault: UInt64 = 5_000
    /// Default delay without receiving after which a ready session is closed, in milliseconds.
    public static let idleTimeoutMillisecondsDefault: UInt64 = 20_000
    /// Default delay within which a handshake must complete, in milliseconds.
    public static let handshakeTimeoutMillisecondsDefault: UInt64 = 10_000
    /// Shortest time between two acks a session sends because the local durable log grew, in
    /// milliseconds: a peer learns each move of this replica's durable frontier at once, yet a busy
    /// replica committing every few hundred microseconds sends each peer at most this rate of such acks
    /// (a move within the interval goes out when it ends, coalesced with the moves after it).
    public static let durableAcknowledgementIntervalMillisecondsMin: UInt64 = 1
    /// Shortest ping interval a configuration may set, in milliseconds.
    public static let pingIntervalMillisecondsMin: UInt64 = 10
    /// Longest ping interval, idle timeout or handshake timeout a configuration may set, in
    /// milliseconds (one day): deadlines are the time now plus these, and must not overflow.
    public static let timeoutMillisecondsMax: UInt64 = 86_400_000

    // MARK: - Replica policy

    /// Most own ops ``ReplicaInstance`` reads from the log in one page while it finds the last one under
    /// a stable stamp frontier (the walk pages on until it passes the frontier).
    public static let stableScanOpsMax = 65_536
}
