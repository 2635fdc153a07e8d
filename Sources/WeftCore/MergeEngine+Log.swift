// The engine's log as sync and compaction see it: version vectors, ops by origin, compaction.

extension MergeEngine {
    /// For each origin, the highest sequence known with no gap below it.
    public var versionVector: VersionVector {
        VersionVector(origins.mapValues { $0.contiguous })
    }

    /// The read record of a transaction at `path`: ``versionVector`` with each origin cut before its
    /// first op still waiting for a function at a path related to `path` (an ancestor, itself or a
    /// descendant). A waiting call there is known but not in the value read, so a transaction recorded
    /// as having seen it would overwrite it, unseen, once it applies. A waiting call elsewhere never
    /// writes the transaction's subtree, so it and the later ops of its origin count as seen: cut there,
    /// every later write of that origin to the node would make the transaction stale until the function
    /// came.
    public func appliedVersionVector(for path: Path) -> VersionVector {
        guard !waiting.isEmpty else { return versionVector }
        var entries = origins.mapValues { $0.contiguous }
        for op in waiting.values where entries[op.origin, default: 0] >= op.sequence && op.path.isRelated(to: path) {
            entries[op.origin] = op.sequence - 1
        }
        return VersionVector(entries)
    }

    /// Ops of `origin` with sequences after `sequence`, in sequence order, stopping at the first gap or
    /// at `limit`. Ops already compacted are not available (a peer that needs them gets a snapshot).
    public func ops(from origin: ReplicaID, after sequence: UInt64, limit: Int) -> [Op] {
        guard let originLog = origins[origin] else { return [] }
        var result: [Op] = []
        var next = sequence + 1
        while result.count < limit, let op = originLog.op(at: next) {
            result.append(op)
            next += 1
        }
        return result
    }

    /// The stamp of the op `sequence` of `origin`, when it is known (in the log or waiting) and not
    /// compacted.
    public func stamp(of origin: ReplicaID, sequence: UInt64) -> Stamp? { origins[origin]?[sequence] }

    /// The frontier a compaction up to `stable` may use: `stable` itself, or, when an op waiting for a
    /// function or a partial op is stamped at or below it, the last logged op before the earliest such
    /// op. A waiting call must still run at its place in stamp order once its function is registered, so
    /// it and every op after it stay in the log. A partial op (``Op/isPartial``) may be a decision a hub
    /// carried and may still revise: a replica holding a share folds it only by installing its hub's
    /// snapshot of the share (the hub's base, which no revision changes). Nil when that leaves nothing
    /// new to fold.
    ///
    /// ```swift
    /// if let frontier = engine.compactionFrontier(upTo: stable) { engine.compact(upTo: frontier) }
    /// ```
    public func compactionFrontier(upTo stable: Stamp) -> Stamp? {
        var frontier = stable
        if let earliest = waiting.keys.min(), earliest <= stable {
            guard let before = lastLoggedStamp(before: earliest) else { return nil }
            frontier = before
        }
        if holdsPartialOps {
            var earliest: Stamp?
            forEachLoggedOp(through: frontier) { op in
                if op.isPartial { earliest = min(earliest ?? op.stamp, op.stamp) }
            }
            if let earliest {
                guard let before = lastLoggedStamp(before: earliest) else { return nil }
                frontier = before
            }
        }
        if let current = self.frontier, frontier <= current { return nil }
        return frontier
    }

    /// True when the log holds a partial op: a placeholder or projection of a hub's op cut to a share.
    public var holdsPartialOps: Bool { origins.values.contains { $0.partialCount > 0 } }

    /// The greatest stamp of a logged op stamped before `stamp`.
    private func lastLoggedStamp(before stamp: Stamp) -> Stamp? {
        var before: Stamp?
        forEachLoggedOp(through: stamp) { op in
            if op.stamp < stamp { before = max(before ?? op.stamp, op.stamp) }
        }
        return before
    }

    /// Calls `body` with every op in the log (not waiting) stamped at or below `frontier`, origin by
    /// origin in sequence order. Each origin's ops at or below it are a prefix of its log (its stamps
    /// grow with its sequence), so the rest of the log is not walked.
    public func forEachLoggedOp(through frontier: Stamp, _ body: (Op) -> Void) {
        for originLog in origins.values {
            originLog.forEachOp(through: frontier) { op in if !isWaiting(op.stamp) { body(op) } }
        }
    }

    /// Every touch of the ops folded into the base (those the engine was opened with and those of
    /// each compaction since), one per path and origin at its highest sequence: what a snapshot of
    /// the base carries for the transaction rule.
    public func allCompactedTouches() -> [CompactedTouch] {
        // Those it started from, when it compacted nothing since: the list as it came, no trie built.
        compactedIndex.isEmpty ? unrecordedTouches : recordedCompactedIndex().touches()
    }

    /// Folds every op stamped at or below `frontier` into the base and drops it from the log.
    ///
    /// The state and its digest do not change. Callers pass a stable frontier (every member has every
    /// op at or below it, so no op at or below it can still arrive), as ``compactionFrontier(upTo:)``
    /// caps it below ops waiting for a function.
    /// - Returns: the number of ops folded into the base.
    @discardableResult
    public func compact(upTo newFrontier: Stamp) -> Int {
        if let frontier { precondition(newFrontier >= frontier, "compaction frontier moves forward only") }
        var folded: [Op] = []
        forEachLoggedOp(through: newFrontier) { folded.append($0) }
        folded.sort { $0.stamp < $1.stamp }
        for op in folded {
            Fold.replay(op, outcome: unusualOutcomes[op.stamp] ?? .applied, to: &base, registry: registry)
            loggedCount -= 1
            unusualOutcomes.removeValue(forKey: op.stamp)
            incrementsFromNull.remove(op.stamp)
            compactedIndex.insertTouches(of: op)
            origins[op.origin]?.remove(sequence: op.sequence)
        }
        index.removeCompacted(folded, upTo: newFrontier)
        frontier = newFrontier
        lastCompacted = folded
        if loggedCount == 0 { precondition(base == state, "compaction changed the state") }
        return folded.count
    }
}

/// That an origin's ops up to `sequence` touched the node at `path`, for ops folded into the base.
///
/// The transaction rule asks whether a transaction's origin had seen every op before it touching its
/// subtree, compacted ones included; a replica that reopens a compacted log gets these back from its
/// store (``MergeEngine/init(registry:base:frontier:baseVector:compactedTouches:capturesChanges:)``),
/// and stores those of each compaction (``MergeEngine/lastCompactionTouches``).
public struct CompactedTouch: Sendable, Hashable {
    /// An anchor of a compacted op.
    public var path: Path
    /// The op's origin.
    public var origin: ReplicaID
    /// The highest sequence of the origin's compacted ops anchored there.
    public var sequence: UInt64

    public init(path: Path, origin: ReplicaID, sequence: UInt64) {
        self.path = path
        self.origin = origin
        self.sequence = sequence
    }
}

/// The key of a touch of compacted ops: one per anchor path and origin (a store keeps one row each).
public struct CompactedTouchSlot: Hashable, Sendable {
    public var path: Path
    public var origin: ReplicaID

    public init(path: Path, origin: ReplicaID) {
        self.path = path
        self.origin = origin
    }
}

extension Array where Element == CompactedTouch {
    /// The touches in the order the engine reports them and both stores return them: by path, then by
    /// origin.
    public func sortedForStore() -> [CompactedTouch] {
        sorted { ($0.path, $0.origin) < ($1.path, $1.origin) }
    }

    /// True when `read` holds every touch at an ancestor-or-self of `path` or below it, in a list
    /// sorted by path (where a path's descendants follow it); nil when more than `scanMax` lie below it.
    func cover(_ path: Path, by read: VersionVector, scanMax: Int) -> Bool? {
        let covered = { (touch: CompactedTouch) in read[touch.origin] >= touch.sequence }
        for depth in 0..<path.keys.count {
            let ancestor = Path(uncheckedKeys: [Key](path.keys[..<depth]))
            var position = firstPosition(notBefore: ancestor)
            while position < count, self[position].path == ancestor {
                if !covered(self[position]) { return false }
                position += 1
            }
        }
        var position = firstPosition(notBefore: path)
        var scanned = 0
        while position < count, path.isAncestorOrSelf(of: self[position].path) {
            scanned += 1
            if scanned > scanMax { return nil }
            if !covered(self[position]) { return false }
            position += 1
        }
        return true
    }

    /// The position of the first touch whose path is not before `path`.
    private func firstPosition(notBefore path: Path) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if self[middle].path < path { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
