// Region re-fold: rebuild the few subtrees an out-of-order op can affect by replaying, in stamp order,
// every op that touches them, from the latest known point of each region before the op (a snapshot an
// earlier re-fold kept, or a blind `set` of the region) or from the compacted base.

extension MergeEngine {
    /// Re-folds the regions that ops stamped after `stamp` at `anchors` can reach, and reports changes
    /// and revised outcomes. `arriving` are the ops just added to the log and not decided yet (the only
    /// ops that can make an earlier-valid transaction stale); their outcomes are always reported.
    ///
    /// `rebuiltBefore` lists the roots that earlier re-folds of the same batch rebuilt, or is nil after a
    /// batch flipped. When no pending region of this re-fold is related to those roots (a rebuilt region
    /// may hold undecided ops of the batch, replayed early) and every arriving op has one anchor, the
    /// state of the regions is the fold of the logged ops other than `arriving` with their recorded
    /// outcomes, and the re-fold may stop as soon as the arriving ops turn out to write nothing. An
    /// arriving merge or batch may already be applied in some of its regions, by an earlier re-fold of
    /// another of them or written there at once, and be rejected here.
    ///
    /// - Returns: the roots of every region this re-fold and those it led to rebuilt.
    @discardableResult
    func refold(
        after stamp: Stamp, anchors: [Path], arriving: [Op], rebuiltBefore: [Path]?, report: inout ApplyReport
    ) -> [Path] {
        let arrivingStamps = Set(arriving.map(\.stamp))
        var roots = closeRegions(anchors.map { regionRoot(for: $0, after: stamp) }, after: stamp)
        if roots.count > CoreLimits.refoldRegionsMax { roots = [.root] }
        var mini = Value.null
        // Each region starts from the latest point before the change whose value is known: a snapshot
        // an earlier re-fold kept, a blind set of exactly the region, or else the base. Each region's
        // ops are collected from its own point; an op spanning regions may be replayed into a region
        // before that region's point, and the region is overwritten with its known value once replay
        // passes the point (ops before the change keep their outcomes, so what replay wrote there
        // before does not matter).
        var regions = startRegions(roots, before: stamp, into: &mini)
        var pending = regions.indices.filter { regions[$0].start != nil }
            .sorted { (regions[$0].start ?? stamp) < (regions[$1].start ?? stamp) }[...]
        let rootSet = RootSet(roots)
        let inside = { (path: Path) in rootSet.holds(joined: path.keys, []) }
        let (ops, regionOf, outside) = collect(regions)
        let lastStamp = ops.last?.stamp
        var flipped: [Op] = []
        var replayed = 0
        defer { statistics.countReplayed(replayed, regionRoots: roots) }
        var cut = CutSearch(
            roots: roots, change: stamp, arriving: arriving, arrivingStamps: arrivingStamps, outside: outside,
            stateIsRecorded: Self.stateIsRecorded(anchors: anchors, arriving: arriving, rebuiltBefore: rebuiltBefore))
        for (position, op) in ops.enumerated() {
            replayed += 1
            // The one region the op touches, if it touches one only.
            let region = regionOf[position] == Self.severalRegions ? nil : Int(regionOf[position])
            while let next = pending.first, let point = regions[next].start, point < op.stamp {
                mini.write(regions[next].value ?? .null, at: regions[next].root)
                regions[next].ready = true
                pending.removeFirst()
            }
            defer {
                keepSnapshots(
                    of: &regions, touched: region, by: op, in: rootSet, last: op.stamp == lastStamp || cut.found,
                    mini: mini)
            }
            let previous = unusualOutcomes[op.stamp] ?? .applied
            let outcome: Outcome
            if op.stamp < stamp || outside.contains(op.stamp) {
                // Ops stamped before the change keep their outcomes; so do those above the regions.
                Fold.replay(op, outcome: previous, to: &mini, registry: registry)
                outcome = previous
            } else {
                statistics.redecidedOps += 1
                // The region the op was collected for holds it, most often: asked first, before every root.
                let (decided, spansOut) = redecide(
                    op, previous: previous, home: region.map { roots[$0] }, within: rootSet, arriving: arriving,
                    arrivingStamps: arrivingStamps, mini: &mini)
                if decided != previous || arrivingStamps.contains(op.stamp) {
                    record(decided, of: op, report: &report)
                }
                if spansOut, previous == .applied, decided != .applied { flipped.append(op) }
                outcome = decided
            }
            if cut.isCut(
                after: op, at: position, region: region, outcome: outcome, previous: previous, in: ops,
                engine: self)
            {
                statistics.cutRefolds += 1
                break
            }
        }
        for next in pending { mini.write(regions[next].value ?? .null, at: regions[next].root) }
        finish(regions, writingState: !cut.found, from: mini, report: &report)
        // A batch that no longer applies must also be taken back where it wrote outside these regions.
        var rebuilt = roots
        for op in flipped {
            rebuilt += refold(
                after: op.stamp, anchors: op.anchors.filter { !inside($0) }, arriving: [], rebuiltBefore: nil,
                report: &report)
        }
        return rebuilt
    }

    /// True when the regions of a re-fold hold the fold of the logged ops other than `arriving` with
    /// their recorded outcomes. An arriving merge or batch may already be applied in some of its regions
    /// (by an earlier re-fold of another region, or written there at once, write by write) and be
    /// rejected here; and a region an earlier re-fold of the batch rebuilt may hold its undecided ops.
    private static func stateIsRecorded(anchors: [Path], arriving: [Op], rebuiltBefore: [Path]?) -> Bool {
        guard let rebuiltBefore, !arriving.contains(where: \.hasSeveralAnchors) else { return false }
        return !anchors.contains { root in rebuiltBefore.contains { $0.isRelated(to: root) } }
    }

    /// The regions of a re-fold, each starting from the latest point before `stamp` whose value is
    /// known (a snapshot an earlier re-fold kept, or a blind set of exactly the region: the region is
    /// not ready until replay passes it), or else from the base, written into `mini` at once.
    private func startRegions(_ roots: [Path], before stamp: Stamp, into mini: inout Value) -> [Region] {
        var regions: [Region] = []
        for root in roots {
            index.refolding(at: root.keys, from: stamp)
            if let point = startPoint(at: root, before: stamp) {
                regions.append(Region(root: root, start: point.stamp, value: point.value, ready: false))
                statistics.checkpointStarts += 1
            } else {
                mini.write(base.value(at: root), at: root)
                regions.append(Region(root: root, start: nil, value: nil, ready: true))
            }
        }
        return regions
    }

    /// Decides again, replayed into `mini`, an op stamped after the change of a re-fold, and says
    /// whether it spans out of the regions (`home` is the one region it was collected for, if one).
    private func redecide(
        _ op: Op, previous: Outcome, home: Path?, within rootSet: RootSet, arriving: [Op], arrivingStamps: Set<Stamp>,
        mini: inout Value
    ) -> (outcome: Outcome, spansOut: Bool) {
        let inside = { (path: Path) in rootSet.holds(joined: path.keys, []) }
        let spansOut: Bool
        switch op.kind {
        case .set, .increment, .transaction, .call:
            spansOut = !(home?.isAncestorOrSelf(of: op.path) ?? false) && !inside(op.path)
        case .merge, .batch, .guardedBatch:
            spansOut = op.containsAnchor {
                !(home?.isAncestorOrSelf(ofJoined: $0, $1) ?? false) && !rootSet.holds(joined: $0, $1)
            }
        }
        if case .guardedBatch = op.kind, case .rejected(.staleRead) = previous {
            // Stale it stays: adding ops never makes the rule hold again. It writes nothing.
            return (previous, spansOut)
        }
        if spansOut, case .rejected(let reason) = previous, let failing = reason.path, !inside(failing) {
            // Rejected by a part outside the regions, which nothing here can change; a part inside that
            // comes first may fail now instead.
            let outcome = decideRejectedBatch(op, failingAt: failing, reason: reason, mini: &mini, inside: inside)
            return (outcome, spansOut)
        }
        let outcome = applyTracked(op, to: &mini, forcedAt: spansOut ? { !inside($0) } : nil) {
            self.transactionStillValid($0, previous: previous, arriving: arriving, arrivingStamps: arrivingStamps)
        }
        return (outcome, spansOut)
    }

    /// Ends a re-fold: each region keeps the snapshots from before its start point and those the replay
    /// took, and, unless the re-fold stopped at a cut (where the state already holds the re-folded
    /// values), the state takes the regions' values from `mini`.
    private func finish(_ regions: [Region], writingState: Bool, from mini: Value, report: inout ApplyReport) {
        for region in regions {
            guard let node = index.node(at: region.root.keys[...]) else { continue }
            // Those below the frontier go too: no re-fold can start from them, and thinning keeps old ones.
            var snapshots = node.snapshots.filter { snapshot in
                (region.start.map { snapshot.stamp <= $0 } ?? false) && (frontier.map { snapshot.stamp >= $0 } ?? true)
            }
            snapshots += region.kept
            node.snapshots = Self.thinned(snapshots, to: CoreLimits.snapshotsPerNodeMax)
            node.snapshotsTakenAt = index.arrivals
        }
        guard writingState else { return }
        for region in regions {
            let new = mini.value(at: region.root)
            let old = state.value(at: region.root)
            guard new != old else { continue }
            state.write(new, at: region.root)
            if capturesChanges { report.changes.append(Change(path: region.root, old: old, new: new)) }
        }
    }

    /// The transaction rule during a re-fold. Adding ops can only make a transaction stale, and the only
    /// op added is `arriving`; a transaction that arrives itself is checked against every older op.
    func transactionStillValid(_ op: Op, previous: Outcome, arriving: [Op], arrivingStamps: Set<Stamp>) -> Bool {
        guard let read = op.readVector else { return true }
        if arrivingStamps.contains(op.stamp) { return transactionValidAgainstLog(op, read: read) }
        if case .rejected(.staleRead) = previous { return false }
        if arriving.count > CoreLimits.arrivingOpsScanMax { return transactionValidAgainstLog(op, read: read) }
        for other in arriving where other.stamp < op.stamp {
            guard !read.contains(origin: other.origin, sequence: other.sequence) else { continue }
            if op.guardedPaths.contains(where: { other.hasAnchor(relatedTo: $0) }) { return false }
        }
        return true
    }

    /// The transaction rule from scratch, at every path it guards (a transaction's node, a guarded
    /// batch's read paths).
    func transactionValidAgainstLog(_ op: Op, read: VersionVector) -> Bool {
        op.guardedPaths.allSatisfy { transactionValidAgainstLog(op, at: $0, read: read) }
    }

    /// The transaction rule from scratch at one guarded path: every op stamped before the transaction
    /// that touches an ancestor-or-self of `path` or anything below it (compacted ones included) was seen
    /// by its origin.
    func transactionValidAgainstLog(_ op: Op, at path: Path, read: VersionVector) -> Bool {
        guard compactedTouchesCover(path, by: read) else { return false }
        if let valid = transactionValidAgainstUnseen(op, at: path, read: read) { return valid }
        func seen(_ anchored: PathIndex.Anchored) -> Bool {
            guard anchored.stamp < op.stamp, let other = logged(anchored) else { return true }
            return read.contains(origin: other.origin, sequence: other.sequence)
        }
        var current: PathIndex.Node? = index.root
        for key in path.keys {
            guard let node = current else { return true }
            if !node.own.allSatisfy(seen) { return false }
            current = node.children[key]
        }
        guard let node = current else { return true }
        var valid = true
        forEachStamp(below: node, after: nil) { if valid, !seen($0) { valid = false } }
        return valid
    }

    /// The transaction rule from the other side: the ops its origin had not seen are, per origin, those
    /// after the sequence its read vector holds, and an origin's stamps grow with its sequence; so only
    /// ops stamped before the transaction in that short tail need a look. Nil when the tails are long
    /// (an origin the transaction's origin had never heard of), which the index walk answers better.
    func transactionValidAgainstUnseen(_ op: Op, at path: Path, read: VersionVector) -> Bool? {
        var budget = CoreLimits.unseenOpsScanMax
        for (origin, originLog) in origins {
            var sequence = max(read[origin] + 1, originLog.first)
            while sequence <= originLog.last {
                defer { sequence += 1 }
                guard let stamp = originLog.stamp(at: sequence) else { continue }
                if stamp >= op.stamp { break }
                budget -= 1
                if budget < 0 { return nil }
                guard !isWaiting(stamp), let other = originLog.op(at: sequence) else { continue }
                if other.hasAnchor(relatedTo: path) { return false }
            }
        }
        return true
    }

    /// The latest point before `stamp` where the value of `root` is known without replaying older ops:
    /// a valid snapshot or a blind set of exactly `root`, whichever is later. Nil means the base.
    func startPoint(at root: Path, before stamp: Stamp) -> (stamp: Stamp, value: Value)? {
        var snapshot: (stamp: Stamp, value: Value)?
        if let (_, kept) = index.snapshot(at: root.keys, before: stamp), frontier.map({ kept.stamp >= $0 }) ?? true {
            snapshot = kept
        }
        return checkpoint(at: root, before: stamp, after: snapshot?.stamp) ?? snapshot
    }

    /// The latest blind `set` of exactly `root` stamped before `stamp` (and after `floor`, when given): the region's value right after it
    /// is known without replaying anything older.
    func checkpoint(at root: Path, before stamp: Stamp, after floor: Stamp? = nil) -> (stamp: Stamp, value: Value)? {
        // A set is not an increment: none is stamped after the node's last other op, and a node that
        // only ever had increments has none (a counter's long run of increments is not walked).
        guard let node = index.node(at: root.keys[...]), let lastNonIncrement = node.ownNonIncrementMax else {
            return nil
        }
        if let floor, lastNonIncrement <= floor { return nil }
        var found: (stamp: Stamp, value: Value)?
        node.own.reverseForEach(through: min(stamp, lastNonIncrement)) { candidate in
            if let floor, candidate.stamp <= floor { return false }
            if candidate.stamp < stamp, let op = logged(candidate), case .set(let value) = op.kind {
                found = (candidate.stamp, value)
                return false
            }
            return true
        }
        return found
    }

    /// The root of the region an op at `anchor` stamped `stamp` can affect: the highest ancestor-or-self
    /// that has an op stamped later, that may hold a scalar, or that has calls (which need their whole
    /// subtree to re-run).
    func regionRoot(for anchor: Path, after stamp: Stamp) -> Path {
        // A guarded batch at or after `stamp` may flip, and its reads and writes lie anywhere: the
        // whole tree is re-folded, the one region sure to hold all of them.
        if let latest = index.guardedMax, latest >= stamp { return .root }
        let keys = anchor.keys
        var depth = keys.count
        var node = index.root
        for level in 0..<keys.count {
            if let ownMax = node.ownMax, ownMax > stamp {
                depth = level
                break
            }
            if node.mayBeScalar || node.callCount > 0 {
                depth = level
                break
            }
            guard let next = node.children[keys[level]] else { break }
            node = next
        }
        // A scalar above in the state or the base: the answer is the highest level any of the three finds.
        if let scalar = state.scalarDepth(above: keys[..<depth]) { depth = scalar }
        if let scalar = base.scalarDepth(above: keys[..<depth]) { depth = scalar }
        return depth == keys.count ? anchor : Path(uncheckedKeys: Array(keys[..<depth]))
    }

    /// Evaluates a batch rejected by a part outside the regions: parts before that one apply (inside
    /// the regions for real, outside as decided), and the first inside part that fails, or else the
    /// recorded one, rejects it.
    func decideRejectedBatch(
        _ op: Op, failingAt failing: Path, reason: Rejection, mini: inout Value, inside: @escaping (Path) -> Bool
    ) -> Outcome {
        guard case .batch(let writes) = op.kind else { return .rejected(reason) }
        var prefix: [Write] = []
        for write in writes {
            if write.path == failing, case .increment = write { break }
            prefix.append(write)
        }
        var trial = mini
        let partial = Op(stamp: op.stamp, sequence: op.sequence, path: op.path, kind: .batch(prefix))
        let outcome =
            prefix.isEmpty ? .applied : applyTracked(partial, to: &trial, forcedAt: { !inside($0) }) { _ in true }
        if case .rejected = outcome { return outcome }
        return .rejected(reason)
    }

    /// Where a rejected batch is indexed as failing. Usually the node of its failing part: a re-fold
    /// that reaches it decides the batch again as a whole, and one that reaches only its other parts
    /// decides those before the failing part (``decideRejectedBatch``), which must then know the part.
    /// The reason names the part's node, not the part: when the batch increments that node twice, with
    /// a part between them that could make the second fail (a write there, above or below, or an
    /// increment towards overflow), the batch is indexed at every anchor, so that any re-fold reaching
    /// it decides it as a whole.
    func failingAnchors(of op: Op, reason: Rejection) -> [Path] {
        guard let failing = reason.path else { return [] }
        switch op.kind {
        case .batch(let writes), .guardedBatch(_, _, let writes):
            // A stale guarded batch stays stale whatever changes: nothing can revive it.
            if case .staleRead = reason { return [] }
            return Self.failingPartIsUncertain(writes, at: failing, reason: reason) ? op.anchors : [failing]
        case .set, .increment, .merge, .transaction, .call:
            return [failing]
        }
    }

    /// True when more than one increment of `failing` in `writes` may be the one that failed.
    static func failingPartIsUncertain(_ writes: [Write], at failing: Path, reason: Rejection) -> Bool {
        var increments = 0
        var touchedSinceFirst = false
        for write in writes {
            if case .increment(let path, _, _) = write, path == failing {
                if increments > 0, touchedSinceFirst { return true }
                increments += 1
            } else if increments > 0, write.path.isRelated(to: failing) {
                touchedSinceFirst = true
            }
        }
        if case .nonFinite = reason { return increments > 1 }
        return false
    }

    /// Grows a set of region roots until every rejected batch that a change inside a region could revive
    /// (its failing part is inside), stamped at or after `stamp`, has all its anchors inside regions: it
    /// is decided again as a whole. Each round looks only under the roots the last one added: a root
    /// looked under before had the regions of its batches' anchors added then, and they stay inside the
    /// roots.
    func closeRegions(_ initial: [Path], after stamp: Stamp) -> [Path] {
        var roots = minimalRoots(initial)
        var unexplored = roots
        while roots.count <= CoreLimits.refoldRegionsMax {
            var added: [Path] = []
            let rootSet = RootSet(roots)
            for root in unexplored {
                index.forEachFailing(at: root.keys[...]) { current in
                    for batchStamp in current.failingBatches where batchStamp >= stamp {
                        guard let op = logged(batchStamp) else { continue }
                        for anchor in op.anchors where rootSet.position(holding: anchor) == nil {
                            added.append(regionRoot(for: anchor, after: stamp))
                        }
                    }
                }
            }
            if added.isEmpty { return roots }
            let explored = Set(roots)
            roots = minimalRoots(roots + added)
            unexplored = roots.filter { !explored.contains($0) }
        }
        return [.root]
    }

    /// Drops roots that lie inside other roots, and duplicates.
    func minimalRoots(_ paths: [Path]) -> [Path] {
        if paths.count < 2 { return paths }
        // Paths already sorted, none holding the next, are the answer (as a merge's children are): in a
        // sorted list, a path that holds a later one holds the one right after it too.
        if zip(paths, paths.dropFirst()).allSatisfy({ $0 < $1 && !$0.isAncestorOrSelf(of: $1) }) { return paths }
        // In sorted order a path's descendants follow it, before any other path: a path inside a kept
        // one is inside the last one kept.
        let sorted = Set(paths).sorted()
        var result: [Path] = []
        for path in sorted where !(result.last?.isAncestorOrSelf(of: path) ?? false) { result.append(path) }
        return result
    }

    /// Every op touching a region stamped after the region's start, sorted by stamp; for each, the
    /// position of the region it touches, or ``severalRegions``; and the stamps of those that only touch
    /// ancestors of the regions (their outcomes are fixed; they are replayed as recorded).
    func collect(_ regions: [Region]) -> (ops: [Op], regionOf: [Int32], outside: Set<Stamp>) {
        var inside: [(anchored: PathIndex.Anchored, region: Int32)] = []
        var above: [(anchored: PathIndex.Anchored, region: Int32)] = []
        for (position, region) in regions.enumerated() {
            let start = region.start
            let tag = Int32(position)
            var current: PathIndex.Node? = index.root
            for key in region.root.keys {
                guard let node = current else { break }
                node.own.forEach(after: start) { above.append(($0, tag)) }
                current = node.children[key]
            }
            if let node = current { forEachStamp(below: node, after: start) { inside.append(($0, tag)) } }
        }
        var outside = Set<Stamp>()
        if !above.isEmpty {
            let insideSet = Set(inside.map(\.anchored))
            for entry in above where !insideSet.contains(entry.anchored) { outside.insert(entry.anchored.stamp) }
            inside += above
        }
        inside.sort { $0.anchored.stamp < $1.anchored.stamp }
        var ops: [Op] = []
        var regionOf: [Int32] = []
        ops.reserveCapacity(inside.count)
        regionOf.reserveCapacity(inside.count)
        var previous: Stamp?
        var previousLogged = false
        for entry in inside {
            if entry.anchored.stamp == previous {
                // The op again, from another anchor or another region.
                if previousLogged, let last = regionOf.indices.last, regionOf[last] != entry.region {
                    regionOf[last] = Self.severalRegions
                }
                continue
            }
            previous = entry.anchored.stamp
            previousLogged = false
            if let op = logged(entry.anchored) {
                ops.append(op)
                regionOf.append(entry.region)
                previousLogged = true
            }
        }
        return (ops, regionOf, outside)
    }

    /// Calls `body` with every stamp after `start` anchored at `node` or below.
    func forEachStamp(below node: PathIndex.Node, after start: Stamp?, _ body: (PathIndex.Anchored) -> Void) {
        // Only nodes with an op after `start` here or below are visited (pushed, and so retained).
        let hasOps = { (node: PathIndex.Node) in
            start.map { start in node.subtreeMax.map { $0 > start } ?? false } ?? true
        }
        guard hasOps(node) else { return }
        var stack = [node]
        while let current = stack.popLast() {
            current.own.forEach(after: start, body)
            for child in current.children.values where hasOps(child) { stack.append(child) }
        }
    }
}
