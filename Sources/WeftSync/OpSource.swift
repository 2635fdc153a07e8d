import WeftCore

/// What a session needs from the local op log. The merge engine, the stores and the simulator's
/// replicas conform; the session only reads through it, during the event call it is passed to.
///
/// ```swift
/// struct Log: OpSource {
///     var versionVector: VersionVector { engine.versionVector }
///     func ops(from origin: ReplicaID, after sequence: UInt64, limit: Int, bytesMax: Int) throws -> [Op] {
///         engine.ops(from: origin, after: sequence, limit: limit)
///     }
/// }
/// ```
///
/// A source that compacts its log must implement ``compactionFrontier`` and ``snapshot()``
/// together; the defaults describe a log that never compacts.
public protocol OpSource {
    /// Every op the log holds or has folded, per origin, gap-free.
    var versionVector: VersionVector { get }

    /// The ops folded into the base state and no longer served one by one. A peer missing any of
    /// them receives a snapshot. Defaults to the empty vector.
    var compactionFrontier: VersionVector { get }

    /// The stable frontier this replica knows (ops every member has), sent in acks so that leaves
    /// of a star learn it from their hub. Defaults to the empty vector (unknown).
    var stableFrontier: VersionVector { get }

    /// The stamp the log compacted up to, sent in acks so that a hub's leaves compact no further.
    /// Defaults to nil (never compacted).
    var compactionStamp: Stamp? { get }

    /// True when the log holds partial ops (a hub's share of the tree, ``Op/isPartial``), said in the
    /// hello: a replica that would send every op whole refuses the session. Defaults to false.
    var holdsShare: Bool { get }

    /// Ops of `origin` whose sequences follow `sequence`, in sequence order and without gaps.
    ///
    /// - Parameters:
    ///   - origin: the replica that made the ops.
    ///   - sequence: the last sequence the peer has; it is never below ``compactionFrontier``.
    ///   - limit: most ops to return (at least 1).
    ///   - bytesMax: a hint: the source may stop once the ops' encoded size reaches it.
    /// - Returns: up to `limit` ops, starting at `sequence + 1`; fewer (or none) only past the end of
    ///   the log.
    /// - Throws: any error of the storage; the session closes with ``SyncErrorCode/localFailure``.
    func ops(from origin: ReplicaID, after sequence: UInt64, limit: Int, bytesMax: Int) throws -> [Op]

    /// The ops ``ops(from:after:limit:bytesMax:)`` returns, each with its encoding (``OpCodec``), which
    /// the session sends as it is: a source that kept the bytes it received or stored returns them and
    /// saves encoding each op again for every peer. Nil (the default) when the source keeps no bytes:
    /// the session then reads the ops and encodes them into the frame.
    /// - Throws: as ``ops(from:after:limit:bytesMax:)``.
    func encodedOps(from origin: ReplicaID, after sequence: UInt64, limit: Int, bytesMax: Int) throws -> EncodedOps?

    /// The base state at ``compactionFrontier`` (its `frontier` must equal it).
    /// - Throws: any error of the storage; the session closes with ``SyncErrorCode/localFailure``.
    func snapshot() throws -> SyncSnapshot

    /// The outcome of the op stamped `stamp` as the log folds it now, or nil when unknown. A session with
    /// a peer limited to a share asks it for the ops whose effect on the share the peer cannot decide
    /// (``OpProjection``). Defaults to nil: such ops then close that session.
    func outcome(of stamp: Stamp) -> Outcome?

    /// The value the applied call stamped `stamp` wrote at its node, or nil when unknown. A session with a
    /// peer limited to a share asks it for calls above the share (``OpProjection``). Defaults to nil:
    /// such a call, applied, then closes that session.
    func callResult(of stamp: Stamp) -> Value?
}

extension OpSource {
    /// Nothing compacted: the empty vector.
    public var compactionFrontier: VersionVector { VersionVector() }

    /// Unknown: the empty vector.
    public var stableFrontier: VersionVector { VersionVector() }

    /// Never compacted.
    public var compactionStamp: Stamp? { nil }

    /// Every op whole.
    public var holdsShare: Bool { false }

    /// No bytes kept: the session encodes the ops.
    public func encodedOps(
        from origin: ReplicaID, after sequence: UInt64, limit: Int, bytesMax: Int
    ) throws -> EncodedOps? { nil }

    /// Unknown.
    public func outcome(of stamp: Stamp) -> Outcome? { nil }

    /// Unknown.
    public func callResult(of stamp: Stamp) -> Value? { nil }

    /// The empty state at the (empty) compaction frontier.
    public func snapshot() throws -> SyncSnapshot { SyncSnapshot(value: .null, frontier: compactionFrontier) }
}
