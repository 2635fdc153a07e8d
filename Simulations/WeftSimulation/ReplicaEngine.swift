import WeftCore
import WeftSync

/// What a simulated replica needs from its merge engine. The real ``MergeEngine`` conforms as it is;
/// a ``SabotagedEngine`` wraps one and breaks a rule on purpose.
protocol ReplicaEngine: ReplicaLog {
    /// Applies ops in any order, with duplicates.
    func apply(_ ops: [Op]) -> ApplyReport
    /// The current state.
    var state: Value { get }
    /// The digest of the current state.
    var digest: StateDigest { get }
    /// For each origin, the highest sequence held with no gap below it.
    var versionVector: VersionVector { get }
    /// Ops of `origin` after `sequence`, in sequence order, at most `limit`.
    func ops(from origin: ReplicaID, after sequence: UInt64, limit: Int) -> [Op]
    /// True when the op with this stamp is known.
    func stamp(of origin: ReplicaID, sequence: UInt64) -> Stamp?
    func contains(_ stamp: Stamp) -> Bool
    /// The outcome of a known op.
    func outcome(of stamp: Stamp) -> Outcome?
    /// Folds every op stamped at or below `frontier` into the base; returns how many.
    func compact(upTo frontier: Stamp) -> Int
    /// The frontier a compaction up to `stable` may use (below ops waiting for a function); nil when
    /// nothing new would fold.
    func compactionFrontier(upTo stable: Stamp) -> Stamp?
    /// The greatest compacted stamp.
    var frontier: Stamp? { get }
    /// The state folded from the compacted ops.
    var base: Value { get }
    /// The touches of the compacted ops, as a snapshot carries them.
    func allCompactedTouches() -> [CompactedTouch]
    /// The engine after installing `base` (see `MergeEngine.installing`), nil when it holds every op of it.
    func installingBase(
        _ base: CompactedBase, local: ReplicaID, localBaseVector: VersionVector, acknowledgedThrough: UInt64,
        nextStamp: () throws -> Stamp
    ) throws -> (engine: any ReplicaEngine, install: CompactedBaseInstall)?
    /// The value the applied call stamped `stamp` wrote at its node (a hub carries it to a leaf).
    func result(ofCall stamp: Stamp) -> Value?
    /// The engine after a hub's revised decisions replace the carried ones held (see
    /// `MergeEngine.revising`), with the ops replaced; nil when none differs.
    func revisingCarried(_ revisions: [Op], baseVector: VersionVector) throws -> (
        engine: any ReplicaEngine, replaced: [Op]
    )?
    /// Which road the engine took for each op.
    var statistics: MergeStatistics { get }
    /// Throws the first summary that differs from its recomputation from the log.
    func checkInvariants() throws(MergeInvariantViolation)
}

extension MergeEngine: ReplicaEngine {
    func installingBase(
        _ base: CompactedBase, local: ReplicaID, localBaseVector: VersionVector, acknowledgedThrough: UInt64,
        nextStamp: () throws -> Stamp
    ) throws -> (engine: any ReplicaEngine, install: CompactedBaseInstall)? {
        let install = try installing(
            base, local: local, localBaseVector: localBaseVector, acknowledgedThrough: acknowledgedThrough,
            nextStamp: nextStamp)
        return install.map { ($0.engine, $0) }
    }

    func revisingCarried(_ revisions: [Op], baseVector: VersionVector) throws -> (
        engine: any ReplicaEngine, replaced: [Op]
    )? {
        try revising(revisions, baseVector: baseVector).map { ($0.engine, $0.replaced) }
    }
}

extension Sabotage {
    /// An engine for a replica: the real one, wrapped in a sabotage when there is one.
    static func engine(_ sabotage: Sabotage?, registry: FunctionRegistry, capturesChanges: Bool) -> any ReplicaEngine {
        let engine = MergeEngine(registry: registry, capturesChanges: capturesChanges)
        guard let sabotage, !sabotage.breaksStability, !sabotage.breaksRelations else { return engine }
        return SabotagedEngine(inner: engine, sabotage: sabotage)
    }
}
