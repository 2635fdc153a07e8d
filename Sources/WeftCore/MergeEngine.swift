/// The incremental materialized tree of a replica: it applies ops arriving in any order, in batches,
/// with duplicates, and always lands exactly where ``ReferenceFold`` lands on the same ops.
///
/// Each new op takes one road, chosen in one place (`MergeRoad.choose`), cheapest first (see
/// `Docs/MERGE-RULES.md`):
/// 1. **In order** for the op's subtree: no known op stamped later touches its path, its ancestors or
///    its descendants. The op applies directly; ops elsewhere commute with it.
/// 2. **Shortcuts** for common late arrivals: an increment among later increments of the same counter
///    (exact arithmetic, order-free) or hidden by a later whole write of it, a blind write hidden by a
///    later `set` of the same node, a late transaction decided from the log, and late merges and
///    batches of disjoint writes taken write by write. A shortcut that cannot prove its answer declines.
/// 3. **Region re-fold**: the smallest set of subtrees whose outcome the op can change is rebuilt from
///    the compacted base by replaying, in stamp order, every op that touches it. The late ops of one
///    ``apply(_:)`` wait and are re-folded together, once per region at the end: an op with several
///    anchors joins the region of each.
///
/// ``checkInvariants()`` recomputes the path index's summaries from the log and compares them.
///
/// ```swift
/// let engine = MergeEngine(registry: registry)
/// let report = engine.apply(opsFromPeer)
/// engine.value(at: try Path("/users/alice"))
/// ```
///
/// The engine is not thread-safe: one owner drives it.
public final class MergeEngine {
    /// Functions that call ops name. Register new ones with ``register(name:version:_:)``.
    public private(set) var registry: FunctionRegistry
    // The properties every op reads or changes skip the runtime's exclusivity bookkeeping: each access
    // to a class's stored property would be a call that records it in a table and removes it after
    // (see `Docs/BENCHMARKS.md`, session 21). The engine has one owner, and none of its methods reaches
    // a property while another access to it is open: the whole test suite passed with the bookkeeping
    // on before it was turned off.

    /// The current state: the fold of the base and every op in the log.
    @exclusivity(unchecked) public internal(set) var state: Value
    /// The compacted base: the fold of every op at or below ``frontier``.
    @exclusivity(unchecked) public internal(set) var base: Value
    /// The greatest compacted stamp; ops at or below it are refused.
    @exclusivity(unchecked) public internal(set) var frontier: Stamp?
    /// Whether ``apply(_:)`` reports old and new values of changed nodes.
    public var capturesChanges: Bool
    /// How roads are chosen (tests switch the shortcut roads off to compare).
    @exclusivity(unchecked) var options = Options()

    /// Counts of the roads ops took, for benchmarks and diagnostics.
    @exclusivity(unchecked) public internal(set) var statistics = MergeStatistics()

    /// Number of ops in the log (held in ``origins``, waiting ones apart).
    @exclusivity(unchecked) var loggedCount = 0
    /// Outcomes other than `.applied` (applied is the default and is not stored).
    @exclusivity(unchecked) var unusualOutcomes: [Stamp: Outcome] = [:]
    /// Ops waiting for a function this replica lacks.
    @exclusivity(unchecked) var waiting: [Stamp: Op] = [:]
    /// Per origin, the lowest sequence of a new op refused below the frontier: the origin's ops after it
    /// are refused too until an op of that sequence is admitted, so that none of them is held under the
    /// stamp its origin is about to replace.
    @exclusivity(unchecked) var strandedFrom: [ReplicaID: UInt64] = [:]
    /// Increments that met a null node (they used their `from`).
    @exclusivity(unchecked) var incrementsFromNull: Set<Stamp> = []
    let index = PathIndex()
    /// Which origins touched which paths through ops already folded into the base, with the touches
    /// the engine started from recorded on first use (``recordedCompactedIndex()``).
    let compactedIndex = PathIndex()
    /// Touches the engine started from and has not recorded yet, sorted by path: a reopened replica of
    /// a million compacted paths would build a million nodes before its load ends, while a transaction
    /// reads only the few on its path and below it (``compactedTouchesCover(_:by:)``).
    private(set) var unrecordedTouches: [CompactedTouch]
    /// Every known op above the frontier, logged or waiting, by origin and sequence: the log itself.
    @exclusivity(unchecked) var origins: [ReplicaID: OriginLog] = [:]
    /// The ops the last ``compact(upTo:)`` folded: their touches are gathered only when a store asks
    /// (the simulator's engines never do).
    var lastCompacted: [Op] = []
    /// What the last ``compact(upTo:)`` folded, as touches a store keeps for the next open: per anchor
    /// and origin, the highest sequence, sorted by path then origin.
    public var lastCompactionTouches: [CompactedTouch] {
        var touches: [CompactedTouchSlot: UInt64] = [:]
        for op in lastCompacted {
            op.forEachAnchor { head, tail in
                let slot = CompactedTouchSlot(
                    path: Path(uncheckedKeys: tail.isEmpty ? head : head + tail), origin: op.origin)
                touches[slot] = max(touches[slot] ?? 0, op.sequence)
            }
        }
        return touches.map { CompactedTouch(path: $0.key.path, origin: $0.key.origin, sequence: $0.value) }
            .sortedForStore()
    }

    /// A new engine over a base (the empty tree for a new replica).
    ///
    /// A replica that reopens a compacted log passes the version vector of the ops folded into `base`,
    /// so that its ``versionVector`` still counts them and the ops above them continue it without a gap,
    /// and the touches of those ops (every ``lastCompactionTouches`` it stored), which the transaction
    /// rule needs for transactions stamped after the frontier.
    ///
    /// ```swift
    /// let engine = MergeEngine(registry: registry, base: storedBase, frontier: frontier, baseVector: folded)
    /// engine.apply(storedLog)
    /// ```
    public init(
        registry: FunctionRegistry = FunctionRegistry(), base: Value = .null, frontier: Stamp? = nil,
        baseVector: VersionVector = VersionVector(), compactedTouches touches: [CompactedTouch] = [],
        capturesChanges: Bool = true
    ) {
        self.registry = registry
        self.state = base
        self.base = base
        self.frontier = frontier
        self.capturesChanges = capturesChanges
        self.origins = baseVector.entries.mapValues { OriginLog(contiguous: $0) }
        precondition(baseVector.entries.isEmpty || frontier != nil, "a base vector comes with a frontier")
        // The live index does not take them: the in-order road asks them too (``compactedCover(_:)``).
        let sorted = touches.indices.dropFirst().allSatisfy { !(touches[$0].path < touches[$0 - 1].path) }
        unrecordedTouches = sorted ? touches : touches.sortedForStore()
    }

    /// Records the touches the engine started from, if it has not yet, and returns the trie of every
    /// touch of the ops folded into the base.
    func recordedCompactedIndex() -> PathIndex {
        if !unrecordedTouches.isEmpty {
            compactedIndex.insertTouches(unrecordedTouches)
            unrecordedTouches = []
        }
        return compactedIndex
    }

    /// True when `read` holds every touch of the ops folded into the base at an ancestor-or-self of
    /// `path` or below it: the transaction rule for compacted ops. The touches the engine started from
    /// are read where they lie in their sorted list; when too many lie below `path`, they are all
    /// recorded in the trie first.
    func compactedTouchesCover(_ path: Path, by read: VersionVector) -> Bool {
        if !unrecordedTouches.isEmpty {
            guard let covered = unrecordedTouches.cover(path, by: read, scanMax: CoreLimits.compactedTouchScanMax)
            else { return recordedCompactedIndex().isCovered(path: path, by: read) }
            if !covered { return false }
        }
        return compactedIndex.isCovered(path: path, by: read)
    }

    /// The value at `path`, or null.
    public func value(at path: Path) -> Value { state.value(at: path) }

    /// The digest of the current state.
    public var digest: StateDigest { StateDigest(of: state) }

    /// Number of ops in the log (above the frontier), waiting ones included.
    public var opCount: Int { loggedCount + waiting.count }

    /// True when the op with this stamp is known (in the log, waiting, or compacted).
    public func contains(_ stamp: Stamp) -> Bool {
        if let frontier, stamp <= frontier { return true }
        return origins[stamp.replica]?.contains(stamp) ?? false
    }

    /// The op with this stamp, if it is in the log or waiting.
    public func op(for stamp: Stamp) -> Op? { known(stamp) }

    /// The op with this stamp, logged or waiting.
    @inline(__always) func known(_ stamp: Stamp) -> Op? { origins[stamp.replica]?.op(stamped: stamp) }

    /// True when the op with this stamp waits for a function (it is in its origin's log, not applied).
    @inline(__always) func isWaiting(_ stamp: Stamp) -> Bool { !waiting.isEmpty && waiting[stamp] != nil }

    /// The op with this stamp, if it is in the log (known and not waiting).
    @inline(__always) func logged(_ stamp: Stamp) -> Op? {
        guard let op = known(stamp), !isWaiting(stamp) else { return nil }
        return op
    }

    /// The op anchored in the index, if it is in the log.
    @inline(__always) func logged(_ anchored: PathIndex.Anchored) -> Op? {
        guard let op = origins[anchored.stamp.replica]?.op(at: anchored.sequence), op.stamp == anchored.stamp,
            !isWaiting(op.stamp)
        else { return nil }
        return op
    }

    /// True when the op anchored in the index is in the log, read from its origin's log without
    /// touching the op's body (for an op known not to wait for a function).
    @inline(__always) func isLogged(_ anchored: PathIndex.Anchored) -> Bool {
        origins[anchored.stamp.replica]?.stamp(at: anchored.sequence) == anchored.stamp
    }

    /// Every op in the log, in no particular order.
    func loggedOps() -> [Op] {
        var result: [Op] = []
        result.reserveCapacity(loggedCount)
        for originLog in origins.values {
            originLog.forEachOp { op in
                if !isWaiting(op.stamp) { result.append(op) }
            }
        }
        return result
    }

    /// The outcome of a known op; nil when unknown or compacted.
    public func outcome(of stamp: Stamp) -> Outcome? {
        if isWaiting(stamp) { return .waiting }
        guard logged(stamp) != nil else { return nil }
        return unusualOutcomes[stamp] ?? .applied
    }

    /// Every op in the log and waiting, sorted by stamp.
    public func sortedOps() -> [Op] {
        (loggedOps() + Array(waiting.values)).sorted { $0.stamp < $1.stamp }
    }

    /// Registers a function and applies the ops that were waiting for it.
    @discardableResult
    public func register(name: String, version: UInt32, _ function: @escaping FunctionRegistry.Function)
        -> ApplyReport
    {
        registry.register(name: name, version: version, function)
        let ready = waiting.values.filter {
            if case .call(let call) = $0.kind { return call.name == name && call.version == version }
            return false
        }
        for op in ready { waiting.removeValue(forKey: op.stamp) }
        return apply(ready, alreadyCounted: true)
    }

    /// Applies ops in any order, with duplicates.
    ///
    /// - Returns: what changed, the outcome of each new op, and the outcomes of earlier ops that a late
    ///   arrival revised (an increment can become rejected when an earlier `set` arrives late).
    @discardableResult
    public func apply(_ ops: [Op]) -> ApplyReport { apply(ops, alreadyCounted: false) }

    func apply(_ ops: [Op], alreadyCounted: Bool) -> ApplyReport {
        var report = ApplyReport()
        report.outcomes.reserveCapacity(ops.count)
        // Positions in stamp order: sorting positions moves no op (an op copy retains its path and
        // value), and a batch that arrives sorted, as an origin's ops do, is not sorted again.
        let order: [Int]
        if ops.indices.dropFirst().allSatisfy({ ops[$0 - 1].stamp < ops[$0].stamp }) {
            order = Array(ops.indices)
        } else {
            order = ops.indices.sorted { ops[$0].stamp < ops[$1].stamp }
        }
        var prefetcher = ops.count >= PathIndex.Prefetcher.batchOpsMin ? PathIndex.Prefetcher(index: index) : nil
        prefetcher?.warmUp(ops, in: order)
        var pending = PendingRegions()
        for (applied, position) in order.enumerated() {
            prefetcher?.advance(past: applied, of: ops, in: order)
            let op = ops[position]
            let admission: Admission
            if alreadyCounted {
                admission = frontier.map { op.stamp <= $0 } ?? false ? .refused : .added
            } else {
                admission = admit(op)
            }
            switch admission {
            case .duplicate:
                report.duplicates += 1
                continue
            case .refused:
                report.refused.append(op.stamp)
                continue
            case .added:
                if !alreadyCounted { report.admitted.append(position) }
            }
            if !pending.isEmpty, joinPending(op, &pending, report: &report) { continue }
            applyNew(op, pending: &pending, report: &report)
        }
        flush(&pending, report: &report)
        return report
    }

    /// What ``admit(_:)`` did with an op.
    enum Admission {
        case added, duplicate, refused
    }

    /// Adds a new op to its origin's log, in one lookup of the origin: a repeat of a known op is a
    /// duplicate; an op at or below the frontier is refused, and so is one that breaks its origin's
    /// order (an origin's stamps grow with its sequence, its clock being monotonic: an op that breaks
    /// this against its known neighbours comes from a broken or forged log, and the transaction rule
    /// relies on the order).
    private func admit(_ op: Op) -> Admission {
        if !strandedFrom.isEmpty, let from = strandedFrom[op.origin], op.sequence > from { return .refused }
        let admission: Admission
        let contiguous: UInt64
        if let index = origins.index(forKey: op.origin) {
            admission = Self.admit(op, to: &origins.values[index], frontier: frontier)
            contiguous = origins.values[index].contiguous
        } else {
            var originLog = OriginLog()
            admission = Self.admit(op, to: &originLog, frontier: frontier)
            if admission == .added { origins[op.origin] = originLog }
            contiguous = 0
        }
        if admission == .refused, let frontier, op.stamp <= frontier, op.sequence > contiguous {
            // A new op below the frontier, not a compacted one again: its origin met this group after
            // the compaction and will stamp it again, with the ops after it (see `installing`).
            strandedFrom[op.origin] = min(strandedFrom[op.origin] ?? .max, op.sequence)
        } else if admission == .added, !strandedFrom.isEmpty, strandedFrom[op.origin] == op.sequence {
            strandedFrom.removeValue(forKey: op.origin)
        }
        return admission
    }

    private static func admit(_ op: Op, to originLog: inout OriginLog, frontier: Stamp?) -> Admission {
        if originLog.stamp(at: op.sequence) == op.stamp { return .duplicate }
        if let frontier, op.stamp <= frontier { return .refused }
        guard originLog.fits(op) else { return .refused }
        originLog.add(op)
        return .added
    }
}
