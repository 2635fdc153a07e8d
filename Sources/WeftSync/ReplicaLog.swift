import WeftCore

/// What a replica's policy (``ReplicaInstance``) reads of its merge engine: the log, never the state.
/// `MergeEngine` conforms as it is; the simulator's engines (the real one, or one with a broken rule)
/// conform through it, so that the daemon and the simulator feed the same instance the same reads.
///
/// ```swift
/// let directives = instance.markStable(through: frontier, log: engine)
/// ```
public protocol ReplicaLog: AnyObject {
    /// For each origin, the highest sequence held with no gap below it.
    var versionVector: VersionVector { get }
    /// Ops of `origin` after `sequence`, in sequence order, at most `limit`, stopping at the first gap.
    func ops(from origin: ReplicaID, after sequence: UInt64, limit: Int) -> [Op]
    /// The stamp of op `sequence` of `origin`, when it is held and not compacted.
    func stamp(of origin: ReplicaID, sequence: UInt64) -> Stamp?
    /// The frontier a compaction up to `stable` may use (below ops waiting for a function, and partial
    /// ops); nil when
    /// nothing new would fold.
    func compactionFrontier(upTo stable: Stamp) -> Stamp?
    /// Calls `body` with every logged op (not waiting) stamped at or below `frontier`.
    func forEachLoggedOp(through frontier: Stamp, _ body: (Op) -> Void)
    /// The greatest compacted stamp; nil before any compaction.
    var frontier: Stamp? { get }
    /// True when the log holds a partial op (a hub's share of the tree).
    var holdsPartialOps: Bool { get }
    /// True when the log holds an op of `local` outside `vector` stamped at or below `stamp`.
    func strandsOwnOps(of local: ReplicaID, outside vector: VersionVector, through stamp: Stamp) -> Bool
}

// MARK: - ReplicaLog

extension MergeEngine: ReplicaLog {}
