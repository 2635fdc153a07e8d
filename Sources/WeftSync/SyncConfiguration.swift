import WeftCore

/// Who a session speaks for and how it paces itself. The defaults come from ``SyncLimits``.
///
/// ```swift
/// var configuration = SyncConfiguration(replica: id, role: .peer, tokens: book)
/// configuration.windowBytes = 256 * 1024
/// let session = try SyncSession(configuration: configuration)
/// ```
public struct SyncConfiguration: Sendable {
    /// This replica's id.
    public var replica: ReplicaID
    /// This replica's role.
    public var role: SyncRole
    /// The name this replica's token is filed under at the peer; empty to be known by replica id.
    public var name: String
    /// The tokens shared with the peers this replica may talk to.
    public var tokens: TokenBook
    /// Most ops in one batch frame sent.
    public var batchOpsMax: Int = SyncLimits.batchOpsMax
    /// Payload size at which a batch frame sent stops taking ops, in bytes.
    public var batchBytesMax: Int = SyncLimits.batchBytesMax
    /// Receive window advertised to the peer, and the most unacknowledged bytes sent to it.
    public var windowBytes: Int = SyncLimits.windowBytesMax
    /// Most unacknowledged frames sent to the peer.
    public var windowFramesMax: Int = SyncLimits.windowFramesMax
    /// Payload size at which a snapshot chunk stops taking entries, in bytes.
    public var snapshotChunkBytes: Int = SyncLimits.snapshotChunkBytesMax
    /// Delay without sending after which a ping goes out, in milliseconds.
    public var pingIntervalMilliseconds: UInt64 = SyncLimits.pingIntervalMillisecondsDefault
    /// Delay without receiving after which a ready session closes, in milliseconds.
    public var idleTimeoutMilliseconds: UInt64 = SyncLimits.idleTimeoutMillisecondsDefault
    /// Delay within which the handshake must complete, in milliseconds.
    public var handshakeTimeoutMilliseconds: UInt64 = SyncLimits.handshakeTimeoutMillisecondsDefault

    /// A configuration with the default pacing.
    public init(replica: ReplicaID, role: SyncRole, name: String = "", tokens: TokenBook) {
        self.replica = replica
        self.role = role
        self.name = name
        self.tokens = tokens
    }

    /// Checks every field against ``SyncLimits``.
    /// - Throws: ``SyncError`` with code ``SyncErrorCode/invalidConfiguration`` naming the field.
    public func validate() throws(SyncError) {
        func require(_ condition: Bool, _ message: String) throws(SyncError) {
            guard condition else { throw SyncError(.invalidConfiguration, message) }
        }
        try require(name.utf8.count <= SyncLimits.nameBytesMax, "name is longer than \(SyncLimits.nameBytesMax) bytes")
        try require(
            (1...SyncLimits.batchOpsMax).contains(batchOpsMax), "batchOpsMax must be in 1...\(SyncLimits.batchOpsMax)")
        try require(
            (1...SyncLimits.batchBytesMax).contains(batchBytesMax),
            "batchBytesMax must be in 1...\(SyncLimits.batchBytesMax)")
        try require(
            (SyncLimits.windowBytesMin...SyncLimits.windowBytesMax).contains(windowBytes),
            "windowBytes must be in \(SyncLimits.windowBytesMin)...\(SyncLimits.windowBytesMax)")
        try require(
            (1...SyncLimits.windowFramesMax).contains(windowFramesMax),
            "windowFramesMax must be in 1...\(SyncLimits.windowFramesMax)")
        try require(
            (1...SyncLimits.snapshotChunkBytesMax).contains(snapshotChunkBytes),
            "snapshotChunkBytes must be in 1...\(SyncLimits.snapshotChunkBytesMax)")
        try require(
            pingIntervalMilliseconds >= SyncLimits.pingIntervalMillisecondsMin,
            "pingIntervalMilliseconds must be at least \(SyncLimits.pingIntervalMillisecondsMin)")
        try require(
            idleTimeoutMilliseconds / 2 >= pingIntervalMilliseconds,
            "idleTimeoutMilliseconds must be at least twice pingIntervalMilliseconds")
        try require(handshakeTimeoutMilliseconds > 0, "handshakeTimeoutMilliseconds must be positive")
        let longest = SyncLimits.timeoutMillisecondsMax
        for (name, delay) in [
            ("pingIntervalMilliseconds", pingIntervalMilliseconds),
            ("idleTimeoutMilliseconds", idleTimeoutMilliseconds),
            ("handshakeTimeoutMilliseconds", handshakeTimeoutMilliseconds),
        ] {
            try require(delay <= longest, "\(name) must be at most \(longest) (one day)")
        }
    }
}
