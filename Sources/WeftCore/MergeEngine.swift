/// The incremental materialized tree of a replica: it applies ops arriving in any order, in batches,
/// with duplicates, and always lands exactly where ``ReferenceFold`` lands on the same ops.
///
/// Three roads, cheapest first (see `Docs/MERGE-RULES.md`):
/// 1. **In order** for the op's subtree: no known op stamped later touches its path, its ancestors or
///    its descendants. The op applies directly; ops elsewhere commute with it.
/// 2. **Shortcuts** for common late arrivals: an increment among later increments of the same counter
///    (exact arithmetic, order-free) or hidden by a later whole write of it, a blind write hidden by a
///    later `set` of the same node, and late merges and batches of disjoint writes taken write by write.
/// 3. **Region re-fold**: the smallest set of subtrees whose outcome the op can change is rebuilt from
///    the compacted base by replaying, in stamp order, every op that touches it. The late ops of one
///    ``apply(_:)`` wait and are re-folded together, once per region at the end: an op with several
///    anchors joins the region of each.
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
    // to a class's stored property was a call that records it in a table and removes it after, and
    // without them the in-order road runs 7 % faster. The engine has one owner, and none of its methods
    // reaches a property while another access to it is open: the whole test suite passed with the
    // bookkeeping on before it was turned off.

    /// The current state: the fold of the base and every op in the log.
    @exclusivity(unchecked) public internal(set) var state: Value
    /// The compacted base: the fold of every op at or below ``frontier``.
    @exclusivity(unchecked) public internal(set) var base: Value
    /// The greatest compacted stamp; ops at or below it are refused.
    @exclusivity(unchecked) public internal(set) var frontier: Stamp?
    /// Whether ``apply(_:)`` reports old and new values of changed nodes.
    public var capturesChanges: Bool

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

    /// A region whose re-fold waits for the end of the batch, so that several late ops in it are
    /// re-folded once: every op of the batch inside it is logged and indexed but decided by that re-fold.
    struct PendingRefold {
        var root: Path
        /// The earliest stamp the re-fold must decide again from.
        var stamp: Stamp
        /// The ops of the batch inside the region, not yet applied.
        var arriving: [Op]
        /// The stamp of the op that opened the region: the regions one merge or batch opened are
        /// re-folded together, as one op's regions are.
        var group: Stamp
    }

    /// Takes `op` into the pending re-folds when one of its anchors is related to a pending region, so
    /// that a batch reaching a pending region does not have it re-folded at once, and again with the
    /// batch's later ops. An op with one anchor inside a region joins it (widening it if the op reaches
    /// higher). Any other op joins when it is late somewhere: write by write when it is a merge or a
    /// batch of disjoint writes (``joinWriteByWrite(_:probe:pending:report:)``), else in the region of
    /// each anchor (``addPending(_:anchors:to:)``). One in order everywhere has the pending regions
    /// re-folded first and is left to the in-order road. Returns true when `op` was taken.
    private func joinPending(_ op: Op, _ pending: inout PendingRegions, report: inout ApplyReport) -> Bool {
        var holder: Int?
        var related = false
        switch op.kind {
        case .merge, .batch:
            related =
                op.containsAnchor { pending.mayBeRelated($0, $1) }
                && pending.regions.contains { op.hasAnchor(relatedTo: $0.root) }
        case .set, .increment, .transaction, .call:
            // One anchor. Regions are disjoint: one holding it leaves none below it.
            guard pending.mayBeRelated(op.path.keys, []) else { return false }
            for position in pending.indices where pending[position].root.isRelated(toJoined: op.path.keys, []) {
                guard pending[position].root.depth <= op.path.depth else {
                    related = true
                    continue
                }
                holder = position
                break
            }
        }
        guard holder != nil || related else { return false }
        if holder == nil, !op.containsAnchor(where: { index.hasLater(than: op.stamp, at: $0, $1) }) {
            // In order wherever it writes: the pending regions are re-folded first, and the op applies
            // directly (joining, it would have opened regions where it is in order).
            flush(&pending, report: &report)
            return false
        }
        if case .call(let call) = op.kind, !registry.contains(name: call.name, version: call.version) {
            waiting[op.stamp] = op
            report.outcomes[op.stamp] = .waiting
            return true
        }
        let probe = index.insert(op)
        loggedCount += 1
        statistics.batchedIntoRefolds += 1
        guard let position = holder else {
            if !joinWriteByWrite(op, probe: probe, pending: &pending, report: &report) {
                addPending(op, anchors: op.anchors, to: &pending)
            }
            return true
        }
        pending.add(op, to: position)
        if probe.conflicts {
            let root = regionRoot(for: op.path, after: op.stamp)
            if root.isAncestorOrSelf(of: pending[position].root) { pending.widen(at: position, to: root) }
        }
        return true
    }

    /// A late merge, or a late batch of writes on disjoint nodes, that reaches a pending region: its
    /// writes related to a pending region join it, and the others are taken write by write as for any
    /// late merge or such batch (in order, hidden, through the counter shortcut, or left to a re-fold).
    /// Its outcome is then decided by the pending re-folds; one that rejects it takes back what was
    /// written elsewhere. False, with nothing done, for any other op, and for a batch whose increments
    /// outside the pending regions cannot be shown to succeed.
    private func joinWriteByWrite(
        _ op: Op, probe: PathIndex.Probe, pending: inout PendingRegions, report: inout ApplyReport
    ) -> Bool {
        switch op.kind {
        case .merge(let children) where !probe.parts.isEmpty:
            let writes = children.map { (Path(uncheckedKeys: op.path.keys + $0.relative.keys), $0.value) }
            applyLateBlindWrites(op, writes: writes, parts: probe.parts, pending: &pending, report: &report)
            return true
        case .batch(let batchWrites) where probe.parts.count > 1:
            guard let disjoint = Self.disjointWrites(batchWrites, anchorCount: probe.parts.count) else { return false }
            return applyLateDisjointBatch(op, writes: disjoint, parts: probe.parts, pending: &pending, report: &report)
        default:
            return false
        }
    }

    /// Adds `op` to the pending re-folds of the regions its `anchors` can affect: to the region that
    /// holds an anchor's region, or to a new region (which takes in the pending regions inside it). The
    /// regions `op` opens are one group, re-folded together.
    ///
    /// An op with several anchors may then be decided by several re-folds, its writes outside their
    /// regions taken as decided: the first records its outcome, and one that rejects it takes back its
    /// writes elsewhere, as for any batch whose outcome flips.
    func addPending(_ op: Op, anchors: [Path], to pending: inout PendingRegions) {
        for anchor in anchors {
            let root = regionRoot(for: anchor, after: op.stamp)
            if let position = pending.holder(of: root) {
                pending.add(op, to: position, once: anchors.count > 1)
            } else {
                pending.append(PendingRefold(root: root, stamp: op.stamp, arriving: [op], group: op.stamp))
            }
        }
    }

    /// Re-folds the pending regions.
    ///
    /// - Returns: the roots of every region rebuilt.
    @discardableResult
    func flush(_ pending: inout PendingRegions, report: inout ApplyReport) -> [Path] {
        let regions = pending.removeAll()
        var groups: [Stamp: [Int]] = [:]
        for (position, region) in regions.enumerated() { groups[region.group, default: []].append(position) }
        var rebuilt: [Path] = []
        for (position, region) in regions.enumerated() {
            guard let members = groups[region.group], members[0] == position else { continue }
            statistics.refolds += 1
            // The regions one op opened: one re-fold, as for that op alone.
            var arriving = region.arriving
            if members.count > 1 {
                var known = Set(arriving.map(\.stamp))
                for member in members.dropFirst() {
                    for op in regions[member].arriving where known.insert(op.stamp).inserted { arriving.append(op) }
                }
            }
            rebuilt += refold(
                after: members.map { regions[$0].stamp }.min() ?? region.stamp,
                anchors: members.map { regions[$0].root }, arriving: arriving, rebuiltBefore: rebuilt, report: &report)
        }
        return rebuilt
    }

    /// Applies one op that is neither known nor below the frontier.
    private func applyNew(_ op: Op, pending: inout PendingRegions, report: inout ApplyReport) {
        if case .call(let call) = op.kind, !registry.contains(name: call.name, version: call.version) {
            waiting[op.stamp] = op
            report.outcomes[op.stamp] = .waiting
            return
        }
        let probe = index.insert(op)
        loggedCount += 1
        if !probe.conflicts {
            // In order for its subtree: every op touching it is older, so the index answered the
            // transaction rule on the way in, and the compacted touches answer it for the base.
            applyInOrder(
                op, covered: probe.covered && compactedCover(op), anchorCount: probe.parts.count, report: &report)
            return
        }
        if case .merge(let children) = op.kind, !probe.parts.isEmpty {
            let writes = children.map { (Path(uncheckedKeys: op.path.keys + $0.relative.keys), $0.value) }
            applyLateBlindWrites(op, writes: writes, parts: probe.parts, pending: &pending, report: &report)
            return
        }
        if case .batch(let batchWrites) = op.kind, probe.parts.count > 1,
            let writes = Self.disjointWrites(batchWrites, anchorCount: probe.parts.count),
            applyLateDisjointBatch(op, writes: writes, parts: probe.parts, pending: &pending, report: &report)
        {
            return
        }
        if applyCounterShortcut(op, probe: probe, report: &report) {
            statistics.counterShortcuts += 1
            return
        }
        if isHiddenByLaterSet(op, probe: probe) {
            statistics.hiddenWrites += 1
            record(.applied, of: op, report: &report)
            return
        }
        if case .set(let value) = op.kind, replayIncrements(after: op, writing: value, probe: probe, report: &report) {
            record(.applied, of: op, report: &report)
            return
        }
        if let outcome = lateTransactionOutcome(op, probe: probe, report: &report) {
            record(outcome, of: op, report: &report)
            return
        }
        addPending(op, anchors: op.anchors, to: &pending)
    }

    /// The transaction rule against the ops folded into the base, for a transaction in order: the live
    /// index holds the ops still logged and those this engine compacted itself, not the touches a
    /// reopened or installed engine starts from (a million paths would double its nodes).
    @inline(__always) func compactedCover(_ op: Op) -> Bool {
        guard frontier != nil, case .transaction(let read, _) = op.kind else { return true }
        return compactedTouchesCover(op.path, by: read)
    }

    /// The in-order road: the op applies to the state directly.
    ///
    /// - Parameter anchorCount: the number of anchors of a merge or batch with several, else 0.
    private func applyInOrder(_ op: Op, covered: Bool, anchorCount: Int, report: inout ApplyReport) {
        statistics.inOrder += 1
        switch op.kind {
        case .set(let value):
            // A set always applies, and its new value is the value written.
            report.outcomes[op.stamp] = .applied
            writeInOrder(value, at: op.path, report: &report)
            return
        case .increment(let by, let from):
            // One walk reads the counter and writes the sum; a scalar above it takes the general road.
            var old = Value.null
            var result = Fold.Increment.sum(.null)
            let walked = state.update(at: op.path.keys[...]) { node in
                old = node
                result = Fold.incremented(node, by: by, from: from, at: op.path)
                if case .sum(let sum) = result { node = sum }
            }
            guard walked else { fallthrough }
            switch result {
            case .sum(let sum):
                // The op is new: it is not in `incrementsFromNull` yet.
                if old.isNull { incrementsFromNull.insert(op.stamp) }
                report.outcomes[op.stamp] = .applied
                // No scalar above, and a number or null replaced by a number: one row in a store.
                if capturesChanges { report.changes.append(Change(path: op.path, old: old, new: sum, isOneRow: true)) }
            case .rejected(let rejection):
                record(.rejected(rejection), of: op, report: &report)
            }
            return
        case .transaction, .call:
            if case .transaction(_, let result) = op.kind {
                // In order, the index answered the transaction rule on the way in.
                guard covered else {
                    record(.rejected(.staleRead(op.path)), of: op, report: &report)
                    return
                }
                report.outcomes[op.stamp] = .applied
                writeInOrder(result, at: op.path, report: &report)
                return
            }
            let old = capturesChanges ? state.value(at: op.path) : .null
            let outcome = applyTracked(op, to: &state) { _ in covered }
            if outcome == .applied {
                report.outcomes[op.stamp] = .applied
                if capturesChanges {
                    report.changes.append(Change(path: op.path, old: old, new: state.value(at: op.path)))
                }
            } else {
                record(outcome, of: op, report: &report)
            }
            return
        case .merge(let children):
            // Its children are disjoint and it always applies: each is written as an in-order set is.
            report.outcomes[op.stamp] = .applied
            for child in children {
                writeInOrder(child.value, at: Path(uncheckedKeys: op.path.keys + child.relative.keys), report: &report)
            }
        case .batch(let writes) where anchorCount > 1:
            guard let disjoint = Self.disjointWrites(writes, anchorCount: anchorCount) else { fallthrough }
            // All or nothing: every increment's sum is known before anything is written. The writes are
            // disjoint, so none changes what another meets, and the first that fails rejects the batch.
            var sums: [Value] = []
            for (path, write) in disjoint {
                guard case .increment(let by, let from) = write else { continue }
                switch Fold.incremented(state.value(at: path), by: by, from: from, at: path) {
                case .sum(let sum):
                    sums.append(sum)
                case .rejected(let rejection):
                    record(.rejected(rejection), of: op, report: &report)
                    return
                }
            }
            report.outcomes[op.stamp] = .applied
            var nextSum = sums.makeIterator()
            for (path, write) in disjoint {
                switch write {
                case .value(let value): writeInOrder(value, at: path, report: &report)
                case .increment: writeInOrder(nextSum.next() ?? .null, at: path, report: &report)
                }
            }
            return
        case .batch:
            let olds = capturesChanges ? changeRoots(of: op) : []
            let outcome = applyTracked(op, to: &state) { _ in covered }
            record(outcome, of: op, report: &report)
            if outcome == .applied {
                for (path, old) in olds {
                    report.changes.append(Change(path: path, old: old, new: state.value(at: path)))
                }
            }
        }
    }

    /// Writes a value in order, reporting the change: one walk writes and reads the old value, unless a
    /// scalar above is replaced (`update` then leaves the state alone): the change is then the scalar's,
    /// which becomes an object.
    func writeInOrder(_ value: Value, at path: Path, report: inout ApplyReport) {
        guard capturesChanges else {
            state.write(value, at: path)
            return
        }
        var old = value
        // The node's old value is swapped out, not copied and then overwritten.
        let walked = state.update(at: path.keys[...]) { node in swap(&old, &node) }
        if walked {
            // The old value is moved into the report: a copy would take a reference on an object the
            // walk never read, a wait on a cold line.
            let isOneRow = !value.isObject && !old.isObject
            report.changes.append(Change(path: path, old: consume old, new: value, isOneRow: isOneRow))
            return
        }
        let depth = state.scalarDepth(above: path.keys[...]) ?? path.depth
        let root = Path(uncheckedKeys: Array(path.keys[..<depth]))
        old = state.value(at: root)
        state.write(value, at: path)
        report.changes.append(Change(path: root, old: old, new: state.value(at: root)))
    }

    func record(_ outcome: Outcome, of op: Op, report: inout ApplyReport) {
        // One lookup that reads the previous outcome as it replaces it.
        let previous =
            outcome == .applied
            ? unusualOutcomes.removeValue(forKey: op.stamp) : unusualOutcomes.updateValue(outcome, forKey: op.stamp)
        if case .batch = op.kind, previous != outcome {
            // Index rejected batches by the node that failed them: only a change there can revive one.
            if case .rejected(let reason) = previous {
                for path in failingAnchors(of: op, reason: reason) {
                    index.setFailing(false, batch: op.stamp, at: path.keys[...])
                }
            }
            if case .rejected(let reason) = outcome {
                for path in failingAnchors(of: op, reason: reason) {
                    index.setFailing(true, batch: op.stamp, at: path.keys[...])
                }
            }
        }
        report.outcomes[op.stamp] = outcome
    }

    /// Applies an op with the fold's rules, remembering whether an increment met a null node.
    func applyTracked(
        _ op: Op, to tree: inout Value, forcedAt: ((Path) -> Bool)? = nil, transactionIsValid: (Op) -> Bool
    ) -> Outcome {
        if case .increment(let by, let from) = op.kind {
            // One walk reads the counter and writes the sum; a scalar above it takes the general road.
            var metNull = false
            var result = Fold.Increment.sum(.null)
            let walked = tree.update(at: op.path.keys[...]) { node in
                metNull = node.isNull
                result = Fold.incremented(node, by: by, from: from, at: op.path)
                if case .sum(let sum) = result { node = sum }
            }
            if walked {
                switch result {
                case .sum:
                    if metNull { incrementsFromNull.insert(op.stamp) } else { incrementsFromNull.remove(op.stamp) }
                    return .applied
                case .rejected(let rejection):
                    incrementsFromNull.remove(op.stamp)
                    return .rejected(rejection)
                }
            }
        }
        let metNull: Bool
        if case .increment = op.kind { metNull = tree.value(at: op.path).isNull } else { metNull = false }
        let outcome = Fold.apply(
            op, to: &tree, registry: registry, transactionIsValid: transactionIsValid, forcedAt: forcedAt)
        if case .increment = op.kind {
            if metNull, outcome == .applied {
                incrementsFromNull.insert(op.stamp)
            } else {
                incrementsFromNull.remove(op.stamp)
            }
        }
        return outcome
    }

    /// The nodes whose old and new values report what an op writing several nodes changed: each written
    /// node, or the highest scalar above it in the current state (a write below a scalar replaces the
    /// scalar, and a later part of the same batch may remove what replaced it), none inside another.
    /// - Returns: each root with its value now (read on the walk that finds it).
    func changeRoots(of op: Op) -> [(path: Path, old: Value)] {
        var roots: [(path: Path, old: Value)] = []
        for path in writePaths(of: op) {
            var root = path
            var current = state
            for (depth, key) in path.keys.enumerated() {
                guard case .object(let children) = current else {
                    if !current.isNull { root = Path(uncheckedKeys: Array(path.keys[..<depth])) }
                    break
                }
                current = children[key] ?? .null
            }
            // The scalar above the path, or the value at it (null where the walk met nothing).
            roots.append((root, current))
        }
        guard roots.count > 1 else { return roots }
        let paths = roots.map(\.path)
        let minimal = minimalRoots(paths)
        return minimal == paths ? roots : minimal.map { ($0, state.value(at: $0)) }
    }

    /// The nodes an op writes: each written node, not its ancestors.
    func writePaths(of op: Op) -> [Path] {
        switch op.kind {
        case .merge(let children):
            return children.map { Path(uncheckedKeys: op.path.keys + $0.relative.keys) }
        case .batch(let writes):
            return writes.flatMap { write -> [Path] in
                if case .merge(let path, let children) = write {
                    return children.map { Path(uncheckedKeys: path.keys + $0.relative.keys) }
                }
                return [write.path]
            }
        default:
            return [op.path]
        }
    }
}

/// How many ops took each road through the engine.
public struct MergeStatistics: Sendable, Hashable {
    /// Ops applied directly (nothing later touched their subtree).
    public var inOrder = 0
    /// Late increments, plain or in batches, decided from the ops around them at their counter: merged
    /// by exact arithmetic, hidden, or rejected (with their batch) without a re-fold; and late whole
    /// writes of a counter followed there only by increments, which are replayed on the counter alone.
    public var counterShortcuts = 0
    /// Late writes that change nothing: blind writes and valid transactions hidden by a later whole
    /// write of their node, and stale transactions that no later transaction can have counted on.
    public var hiddenWrites = 0
    /// Region re-folds (one may serve several late ops of a batch).
    public var refolds = 0
    /// Re-folds that stopped early, at an op that rewrote their whole region after the change and the
    /// arriving ops: from there on, the region was the same as before.
    public var cutRefolds = 0
    /// Ops of a batch taken into a pending re-fold of their region instead of being applied one by one.
    public var batchedIntoRefolds = 0
    /// Ops replayed by all re-folds together.
    public var replayedOps = 0
    /// Ops that re-folds decided again (stamped at or after the change); the rest were replayed as
    /// recorded.
    public var redecidedOps = 0
    /// Re-folded regions that started from a kept snapshot or a checkpoint instead of the base.
    public var checkpointStarts = 0
    /// Most ops one re-fold replayed.
    public var replayedOpsMax = 0
    /// Root of the re-fold that replayed the most ops.
    public var largestRegion: Path?

    /// Zero everywhere.
    public init() {}
}

/// What one ``MergeEngine/apply(_:)`` did.
public struct ApplyReport: Sendable {
    /// Nodes whose value changed, with old and new values (empty when changes are not captured).
    public var changes: [Change] = []
    /// Outcome of every new op, and revised outcomes of earlier ops.
    public var outcomes: [Stamp: Outcome] = [:]
    /// Ops already known.
    public var duplicates = 0
    /// Ops refused: at or below the compaction frontier, or stamped out of their origin's sequence
    /// order (a broken or forged log).
    public var refused: [Stamp] = []
    /// Positions, in the array given to ``MergeEngine/apply(_:)``, of the ops that were new (neither
    /// known nor refused), in stamp order: the ops a replica stores.
    public var admitted: [Int] = []

    public init() {}
}

/// One changed node: its path and its value before and after.
public struct Change: Sendable, Hashable {
    public var path: Path
    public var old: Value
    public var new: Value
    /// The engine checked that, before the change, no ancestor of ``path`` held a scalar, and neither
    /// ``old`` nor ``new`` is an object: a store changes one row for it. False when not checked. It is
    /// a hint, not part of what changed: equality ignores it.
    public var isOneRow: Bool

    public init(path: Path, old: Value, new: Value, isOneRow: Bool = false) {
        self.path = path
        self.old = old
        self.new = new
        self.isOneRow = isOneRow
    }

    public static func == (lhs: Change, rhs: Change) -> Bool {
        lhs.path == rhs.path && lhs.old == rhs.old && lhs.new == rhs.new
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(path)
        hasher.combine(old)
        hasher.combine(new)
    }
}

/// The ops of one origin by sequence number, and the gap-free prefix: the engine's log, split by origin.
///
/// Ops sit in an array indexed by sequence: an origin's ops mostly arrive in sequence order, so
/// recording one is an append, and the log grows without the rehashing a table keyed by stamp needs.
/// An origin's stamps grow with its sequence (``fits(_:)`` refuses an op that breaks this), so an op is
/// found from its stamp by binary search.
struct OriginLog {
    /// Highest sequence recorded (0 when none).
    var last: UInt64 { first + UInt64(slots.count) - 1 }

    /// Ops of sequences `first`, `first + 1`, …; nil where unknown or compacted.
    private var slots: [Op?] = []
    /// Leading slots known to be forgotten (compacted).
    private var cleared = 0
    /// Sequence of `slots[0]`.
    private(set) var first: UInt64
    /// Highest sequence with no gap below it.
    private(set) var contiguous: UInt64 = 0

    init(contiguous: UInt64 = 0) {
        self.contiguous = contiguous
        self.first = contiguous + 1
    }

    /// The stamp of the op with this sequence, if known and not compacted.
    subscript(sequence: UInt64) -> Stamp? { stamp(at: sequence) }

    /// The slot of this sequence, if the array has one.
    private func slot(of sequence: UInt64) -> Int? {
        guard sequence >= first, sequence - first < UInt64(slots.count) else { return nil }
        return Int(sequence - first)
    }

    /// The stamp of the op with this sequence, if known and not compacted (without copying the op).
    func stamp(at sequence: UInt64) -> Stamp? { slot(of: sequence).flatMap { slots[$0]?.stamp } }

    /// True when the op with this sequence is held. (Comparing a slot with nil would copy the op, a
    /// reference taken on its body; reading its stamp does not.)
    private func holds(_ sequence: UInt64) -> Bool { slot(of: sequence).map { slots[$0]?.stamp != nil } ?? false }

    /// The op with this sequence, if known and not compacted.
    func op(at sequence: UInt64) -> Op? { slot(of: sequence).flatMap { slots[$0] } }

    /// The op with this stamp, if known and not compacted.
    func op(stamped stamp: Stamp) -> Op? { slot(stamped: stamp).flatMap { slots[$0] } }

    /// True when the op with this stamp is known and not compacted.
    func contains(_ stamp: Stamp) -> Bool { slot(stamped: stamp) != nil }

    /// The slot of the op with this stamp: a binary search that reads stamps only (copying an op
    /// would retain its path and value). An op stamped after the last one held, the usual case for a
    /// new op, is answered at once.
    private func slot(stamped stamp: Stamp) -> Int? {
        if let lastStamp = slots.last??.stamp, stamp > lastStamp { return nil }
        var low = cleared
        var high = slots.count
        while low < high {
            let middle = (low + high) / 2
            var probe = middle
            while probe < high, slots[probe]?.stamp == nil { probe += 1 }
            guard probe < high, let probeStamp = slots[probe]?.stamp else {
                high = middle
                continue
            }
            if probeStamp == stamp { return probe }
            if probeStamp < stamp { low = probe + 1 } else { high = middle }
        }
        return nil
    }

    /// Calls `body` with every op held, in sequence order.
    func forEachOp(_ body: (Op) -> Void) {
        for slot in slots[cleared...] { if let op = slot { body(op) } }
    }

    /// Calls `body` with every op held stamped at or before `stamp`, in sequence order: a prefix of the
    /// log, since an origin's stamps grow with its sequence.
    func forEachOp(through stamp: Stamp, _ body: (Op) -> Void) {
        for slot in slots[cleared...] {
            guard let op = slot else { continue }
            if op.stamp > stamp { return }
            body(op)
        }
    }

    /// False when the op's sequence is compacted or held by another op, or when a known op of the same
    /// origin with a lower sequence has a later stamp, or one with a higher sequence an earlier stamp.
    func fits(_ op: Op) -> Bool {
        guard op.sequence >= first else { return false }
        let offset = Int(op.sequence - first)
        // Only the neighbours' stamps are read: binding a neighbour would copy it, a reference taken on
        // its body.
        if offset < slots.count, let held = slots[offset]?.stamp { return held == op.stamp }
        var below = min(offset, slots.count) - 1
        while below >= cleared, slots[below]?.stamp == nil { below -= 1 }
        if below >= cleared, let previous = slots[below]?.stamp, previous >= op.stamp { return false }
        var above = offset + 1
        while above < slots.count, slots[above]?.stamp == nil { above += 1 }
        if above < slots.count, let next = slots[above]?.stamp, next <= op.stamp { return false }
        return true
    }

    mutating func add(_ op: Op) {
        guard op.sequence >= first else { return }
        let offset = Int(op.sequence - first)
        if offset >= slots.count {
            if offset > slots.count { slots.append(contentsOf: repeatElement(nil, count: offset - slots.count)) }
            slots.append(op)
        } else {
            slots[offset] = op
        }
        while holds(contiguous + 1) { contiguous += 1 }
    }

    /// Forgets a compacted op; drops the forgotten prefix once it is large.
    mutating func remove(sequence: UInt64) {
        guard sequence >= first, sequence - first < UInt64(slots.count) else { return }
        slots[Int(sequence - first)] = nil
        while cleared < slots.count, slots[cleared]?.stamp == nil, first + UInt64(cleared) <= contiguous {
            cleared += 1
        }
        if cleared > 0, cleared >= slots.count / 2 {
            slots.removeFirst(cleared)
            first += UInt64(cleared)
            cleared = 0
        }
    }
}
