import WeftCore

/// Everything one group commit writes, applied in ONE transaction: all of it is stored, or none.
///
/// A commit applies its parts in this order, each part in array order:
/// 1. ``basePreserves``: the base at each path is saved as it is before this commit;
/// 2. ``ops`` are inserted (an op already in the log is skipped);
/// 3. ``treeWrites`` replace subtrees of the materialized tree;
/// 4. ``baseWrites`` change the compacted base;
/// 5. ``statusChanges``, ``clockTime``, ``peerVectors``, ``members`` and ``compactedTouches`` are recorded;
/// 6. ``frontier``, when it advances, deletes every op at or below it from the log.
///
/// ```swift
/// var batch = StoreBatch()
/// batch.ops = pending.map { OpRecord($0, status: .durable) }
/// batch.basePreserves = [try Path("/users/alice")]
/// batch.treeWrites = [StoreBatch.TreeWrite(path: try Path("/users/alice"), value: newAlice)]
/// batch.clockTime = clock.lastTime
/// try store.commit(batch)
/// ```
public struct StoreBatch: Sendable, Hashable {
    /// A subtree replacement: afterwards the tree holds `value` at `path` (null deletes the subtree).
    /// Scalars above `path` give way to objects, and emptied objects vanish, as in ``Value/write(_:at:)``.
    public struct TreeWrite: Sendable, Hashable {
        /// The root of the replaced subtree.
        public var path: Path
        /// The new subtree.
        public var value: Value
        /// The writer knows that, when this write applies, the tree holds a scalar or nothing at `path`
        /// and no scalar above it (so it has no descendants, and no ancestor has a row), and `value` is
        /// a scalar or null: the write then touches one row. The engine knows it from the old value of
        /// the change it writes (a scalar), or checked it (``Change/isOneRow``).
        public var replacesScalar: Bool

        /// A write of `value` at `path`.
        ///
        /// ```swift
        /// StoreBatch.TreeWrite(path: try Path("/users/alice/score"), value: .int(43), replacesScalar: true)
        /// ```
        public init(path: Path, value: Value, replacesScalar: Bool = false) {
            precondition(!replacesScalar || !value.isObject, "only a scalar or null replaces a scalar in one row")
            self.path = path
            self.value = value
            self.replacesScalar = replacesScalar
        }
    }

    /// A change of the compacted base (the state folded from the ops at or below the frontier).
    public enum BaseWrite: Sendable, Hashable {
        /// The base holds `value` at the path from now on.
        case set(Path, Value)
        /// The base equals the materialized tree at and below the path from now on (no unstable op
        /// touches it any more); its overrides there are dropped.
        case release(Path)
        /// The base equals the whole tree (the log holds no op above the frontier).
        case releaseAll
    }

    /// A change of the status of our own ops.
    public enum StatusChange: Sendable, Hashable {
        /// One op, of this stamp and its origin's sequence, takes `status` (ops of other replicas, and ops
        /// no longer in the log, are left alone).
        case op(Stamp, sequence: UInt64, OpStatus)
        /// Every op of this replica up to `sequence` is acknowledged (it never moves back).
        case acknowledgedThrough(sequence: UInt64)
        /// Every op of this replica up to `sequence` is stable, and so acknowledged (never moves back).
        case stableThrough(sequence: UInt64)
    }

    /// Paths whose base must be saved before this commit changes the tree under them: one per subtree
    /// that an op above the frontier is about to change. The store saves the subtree at the path, or at
    /// the scalar above it that a write there would replace; a region an override covers is skipped.
    public var basePreserves: [Path] = []
    /// New ops. Each must be above the stored frontier (``StoreError/opBelowFrontier(stamp:frontier:)``).
    public var ops: [OpRecord] = []
    /// Ops that take the place (origin and sequence) of the op held there, which goes: a replica's own
    /// ops stamped again when it installs a snapshot. Written before ``ops``.
    public var replacedOps: [OpRecord] = []
    /// Subtree replacements of the materialized tree.
    public var treeWrites: [TreeWrite] = []
    /// Changes of the compacted base.
    public var baseWrites: [BaseWrite] = []
    /// Status changes of our own ops.
    public var statusChanges: [StatusChange] = []
    /// The packed time of the greatest stamp made or seen (``HybridClock/lastTime``); the stored clock
    /// only moves forward.
    public var clockTime: UInt64?
    /// Version vectors of other replicas to record, replacing what was stored for each.
    public var peerVectors: [ReplicaID: VersionVector] = [:]
    /// The new membership list, replacing the stored one; nil keeps it.
    public var members: [ReplicaID]?
    /// The new stable frontier: ops at or below it are deleted from the log. A frontier at or below the
    /// stored one changes nothing.
    public var frontier: Stamp?
    /// Touches of the ops this batch's compaction folds into the base (``MergeEngine/lastCompactionTouches``).
    /// Each is merged into the stored record, which keeps per (path, origin) the greatest sequence; a
    /// replica that reopens the store passes ``Store/compactedTouches()`` to its merge engine, so that
    /// the transaction rule still counts ops no longer in the log.
    public var compactedTouches: [CompactedTouch] = []
    /// Changes to the query indexes, applied in order after the tree writes (see ``IndexWrite``).
    public var indexWrites: [IndexWrite] = []

    /// An empty batch.
    public init() {}

    /// True when committing the batch would change nothing.
    public var isEmpty: Bool {
        basePreserves.isEmpty && ops.isEmpty && replacedOps.isEmpty && treeWrites.isEmpty && baseWrites.isEmpty
            && statusChanges.isEmpty && clockTime == nil && peerVectors.isEmpty && members == nil && frontier == nil
            && compactedTouches.isEmpty && indexWrites.isEmpty
    }
}

extension StoreBatch {
    /// The frontier in force after this batch, given the stored one.
    func frontierAfter(_ stored: Stamp?) -> Stamp? {
        guard let frontier else { return stored }
        guard let stored else { return frontier }
        return max(stored, frontier)
    }

    /// Checks the rule a batch follows whatever the store: no new op at or below the stored frontier
    /// (the log would drop it silently). Ops that this batch's own frontier compacts are fine: the
    /// caller folds them into the base in the same batch.
    /// - Throws: ``StoreError/opBelowFrontier(stamp:frontier:)``.
    func checkOps(frontier stored: Stamp?) throws {
        guard let frontier = stored else { return }
        for record in [ops, replacedOps].joined() where record.op.stamp <= frontier {
            throw StoreError.opBelowFrontier(stamp: record.op.stamp, frontier: frontier)
        }
    }
}

extension StoreBatch {
    /// The tree writes whose effect outlives the batch, in order: a write is dropped when a later one
    /// replaces its whole effect, which is when the later path is an ancestor-or-self of its path and
    /// the later value is not null, or both values are null. (A later null write leaves in place the
    /// scalars that an earlier non-null write below it removed above it, so that earlier write stays.)
    ///
    /// A group commit in which many ops touch the same nodes then writes each node once.
    ///
    /// Writes that replace a scalar (one row each) are kept as they are and cover nothing: their writer
    /// drops the ones a later write at the same path replaces, at less cost than this pass.
    var liveTreeWrites: [TreeWrite] {
        guard treeWrites.count > 1 else { return treeWrites }
        guard treeWrites.contains(where: { !$0.replacesScalar }) else { return treeWrites }
        var laterAny = Set<String>()
        var laterNonNull = Set<String>()
        var live: [TreeWrite] = []
        live.reserveCapacity(treeWrites.count)
        for write in treeWrites.reversed() {
            if write.replacesScalar {
                live.append(write)
                continue
            }
            let chain = TreeRows.chainTexts(write.path)
            let covering = write.value.isNull ? laterAny : laterNonNull
            if chain.contains(where: covering.contains) { continue }
            live.append(write)
            let text = chain[chain.count - 1]
            laterAny.insert(text)
            if !write.value.isNull { laterNonNull.insert(text) }
        }
        return live.reversed()
    }
}
