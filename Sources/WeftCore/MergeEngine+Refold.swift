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
        // An arriving merge or batch may already be applied in some of its regions (by an earlier re-fold
        // of another region, or written there at once, write by write) and be rejected here: the
        // regions do not hold the fold of the recorded outcomes without it.
        let stateIsRecorded: Bool
        if let rebuiltBefore, !arriving.contains(where: \.hasSeveralAnchors) {
            stateIsRecorded = !anchors.contains { root in rebuiltBefore.contains { $0.isRelated(to: root) } }
        } else {
            stateIsRecorded = false
        }
        var mini = Value.null
        // Each region starts from the latest point before the change whose value is known: a snapshot
        // an earlier re-fold kept, a blind set of exactly the region, or else the base. Each region's
        // ops are collected from its own point; an op spanning regions may be replayed into a region
        // before that region's point, and the region is overwritten with its known value once replay
        // passes the point (ops before the change keep their outcomes, so what replay wrote there
        // before does not matter).
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
        var pending = regions.indices.filter { regions[$0].start != nil }
            .sorted { (regions[$0].start ?? stamp) < (regions[$1].start ?? stamp) }[...]
        let rootSet = RootSet(roots)
        let insideJoined = { (head: [Key], tail: [Key]) in rootSet.holds(joined: head, tail) }
        let inside = { (path: Path) in rootSet.holds(joined: path.keys, []) }
        let (ops, regionOf, outside) = collect(regions)
        let lastStamp = ops.last?.stamp
        var flipped: [Op] = []
        var replayed = 0
        defer {
            statistics.replayedOps += replayed
            if replayed > statistics.replayedOpsMax {
                statistics.replayedOpsMax = replayed
                statistics.largestRegion = roots.count == 1 ? roots[0] : .root
            }
        }
        var cut = CutSearch(
            roots: roots, change: stamp, arriving: arriving, arrivingStamps: arrivingStamps, outside: outside,
            stateIsRecorded: stateIsRecorded)
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
            // Ops stamped before the change keep their outcomes; so do those above the regions.
            if op.stamp < stamp || outside.contains(op.stamp) {
                Fold.replay(op, outcome: previous, to: &mini, registry: registry)
                if cut.isCut(
                    after: op, at: position, region: region, outcome: previous, previous: previous,
                    in: ops, engine: self)
                {
                    statistics.cutRefolds += 1
                    break
                }
                continue
            }
            statistics.redecidedOps += 1
            // The region the op was collected for holds it, most often: asked first, before every root.
            let home = region.map { roots[$0] }
            let spansOut: Bool
            switch op.kind {
            case .set, .increment, .transaction, .call:
                spansOut = !(home?.isAncestorOrSelf(of: op.path) ?? false) && !inside(op.path)
            case .merge, .batch:
                spansOut = op.containsAnchor {
                    !(home?.isAncestorOrSelf(ofJoined: $0, $1) ?? false) && !insideJoined($0, $1)
                }
            }
            let outcome: Outcome
            if spansOut, case .rejected(let reason) = previous, let failing = reason.path, !inside(failing) {
                // Rejected by a part outside the regions, which nothing here can change; a part
                // inside that comes first may fail now instead.
                outcome = decideRejectedBatch(op, failingAt: failing, reason: reason, mini: &mini, inside: inside)
            } else {
                outcome = applyTracked(op, to: &mini, forcedAt: spansOut ? { !inside($0) } : nil) {
                    self.transactionStillValid(
                        $0, previous: previous, arriving: arriving, arrivingStamps: arrivingStamps)
                }
            }
            if outcome != previous || arrivingStamps.contains(op.stamp) { record(outcome, of: op, report: &report) }
            if spansOut, previous == .applied, outcome != .applied { flipped.append(op) }
            if cut.isCut(
                after: op, at: position, region: region, outcome: outcome, previous: previous, in: ops,
                engine: self)
            {
                statistics.cutRefolds += 1
                break
            }
        }
        for next in pending { mini.write(regions[next].value ?? .null, at: regions[next].root) }
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
        for root in roots where !cut.found {
            let new = mini.value(at: root)
            let old = state.value(at: root)
            guard new != old else { continue }
            state.write(new, at: root)
            if capturesChanges { report.changes.append(Change(path: root, old: old, new: new)) }
        }
        // A batch that no longer applies must also be taken back where it wrote outside these regions.
        var rebuilt = roots
        for op in flipped {
            rebuilt += refold(
                after: op.stamp, anchors: op.anchors.filter { !inside($0) }, arriving: [], rebuiltBefore: nil,
                report: &report)
        }
        return rebuilt
    }

    /// Where a re-fold may stop early. Past the change and every arriving op, an op that wrote a whole
    /// subtree holding a region and kept its applied outcome (a `set`, a merge child or a transaction,
    /// at the region's root or above) *seals* the region: from there on the region sees the same ops
    /// and values as before the change. An op past the change whose outcome changes unseals the regions
    /// it touches. Once every region is sealed, later ops decide as before, except transactions, whose
    /// rule depends on the ops added: so the re-fold stops there when no later transaction changes its
    /// outcome, and the regions' current states are their re-folded states.
    struct CutSearch {
        let roots: [Path]
        /// The change and the arriving ops are at or before this stamp.
        let after: Stamp
        let arriving: [Op]
        let arrivingStamps: Set<Stamp>
        let outside: Set<Stamp>
        private var sealed: [Bool]
        private var sealedCount = 0
        /// The position of the last op in the re-fold whose transaction outcome flips; computed when
        /// every region is first sealed (-1: none).
        private var lastFlipping: Int?
        /// Every arriving op decided so far wrote nothing (it was rejected) and every other op decided
        /// as before: the regions are as they were. Only for re-folds of arriving ops over a state that
        /// is the fold of the recorded outcomes (a re-fold after a batch flipped has no arriving ops).
        private var unchanged: Bool
        private(set) var found = false

        init(
            roots: [Path], change: Stamp, arriving: [Op], arrivingStamps: Set<Stamp>, outside: Set<Stamp>,
            stateIsRecorded: Bool
        ) {
            self.roots = roots
            after = arriving.reduce(change) { max($0, $1.stamp) }
            self.arriving = arriving
            self.arrivingStamps = arrivingStamps
            self.outside = outside
            sealed = Array(repeating: false, count: roots.count)
            unchanged = stateIsRecorded && !arriving.isEmpty
        }

        /// Takes in the decision on `op`, at `position` in the replayed `ops`; true when the re-fold can
        /// stop after it. `region` is the position of the one region the op touches (nil when it touches
        /// several): an op inside one region can rewrite no other root.
        mutating func isCut(
            after op: Op, at position: Int, region: Int?, outcome: Outcome, previous: Outcome, in ops: [Op],
            engine: MergeEngine
        ) -> Bool {
            if arrivingStamps.contains(op.stamp) {
                if outcome == .applied { unchanged = false }
            } else if outcome != previous {
                unchanged = false
            }
            guard op.stamp > after else { return false }
            if unchanged {
                // Past every arriving op with nothing written: later ops decide as before, except
                // transactions the arriving ops make stale (the rule counts rejected ops too).
                if lastFlipping == nil { lastFlipping = lastFlipping(in: ops, engine: engine) }
                if let lastFlipping, position > lastFlipping {
                    found = true
                    return true
                }
            }
            if outcome != previous {
                if sealedCount > 0 {
                    for index in roots.indices where sealed[index] && op.hasAnchor(relatedTo: roots[index]) {
                        sealed[index] = false
                        sealedCount -= 1
                    }
                }
                return false
            }
            guard outcome == .applied else { return false }
            switch op.kind {
            case .set, .transaction, .merge: break
            case .increment, .batch, .call: return false
            }
            let candidates = region.map { $0..<$0 + 1 } ?? roots.indices
            for index in candidates where !sealed[index] && Self.rewrites(op, wholly: roots[index]) {
                sealed[index] = true
                sealedCount += 1
            }
            guard sealedCount == roots.count else { return false }
            if lastFlipping == nil { lastFlipping = lastFlipping(in: ops, engine: engine) }
            guard let lastFlipping, position > lastFlipping else { return false }
            found = true
            return true
        }

        /// True when `op`, applied, writes a whole subtree that holds `root`: a set or a transaction of it
        /// or of an ancestor, or a merge child at it or at an ancestor.
        static func rewrites(_ op: Op, wholly root: Path) -> Bool {
            switch op.kind {
            case .set, .transaction: return op.path.isAncestorOrSelf(of: root)
            case .merge(let children):
                let base = op.path.keys
                guard base.count <= root.depth, root.keys.starts(with: base) else { return false }
                return children.contains { child in
                    let relative = child.relative.keys
                    return base.count + relative.count <= root.depth && root.keys[base.count...].starts(with: relative)
                }
            case .increment, .batch, .call: return false
            }
        }

        /// The position of the last transaction stamped after `after` whose outcome the arriving ops
        /// change (one applied before that the rule now rejects), or -1.
        func lastFlipping(in ops: [Op], engine: MergeEngine) -> Int {
            for position in ops.indices.reversed() {
                let op = ops[position]
                guard op.stamp > after else { return -1 }
                guard case .transaction = op.kind, !outside.contains(op.stamp) else { continue }
                let previous = engine.unusualOutcomes[op.stamp] ?? .applied
                guard previous == .applied else { continue }
                if !engine.transactionStillValid(
                    op, previous: previous, arriving: arriving, arrivingStamps: arrivingStamps)
                {
                    return position
                }
            }
            return -1
        }
    }

    /// The transaction rule during a re-fold. Adding ops can only make a transaction stale, and the only
    /// op added is `arriving`; a transaction that arrives itself is checked against every older op.
    func transactionStillValid(_ op: Op, previous: Outcome, arriving: [Op], arrivingStamps: Set<Stamp>) -> Bool {
        guard case .transaction(let read, _) = op.kind else { return true }
        if arrivingStamps.contains(op.stamp) { return transactionValidAgainstLog(op, read: read) }
        if case .rejected(.staleRead) = previous { return false }
        if arriving.count > CoreLimits.arrivingOpsScanMax { return transactionValidAgainstLog(op, read: read) }
        for other in arriving where other.stamp < op.stamp {
            guard !read.contains(origin: other.origin, sequence: other.sequence) else { continue }
            if other.hasAnchor(relatedTo: op.path) { return false }
        }
        return true
    }

    /// The transaction rule from scratch: every op stamped before the transaction that touches an
    /// ancestor-or-self of its path or anything below it (compacted ones included) was seen by its origin.
    func transactionValidAgainstLog(_ op: Op, read: VersionVector) -> Bool {
        guard compactedTouchesCover(op.path, by: read) else { return false }
        if let valid = transactionValidAgainstUnseen(op, read: read) { return valid }
        func seen(_ anchored: PathIndex.Anchored) -> Bool {
            guard anchored.stamp < op.stamp, let other = logged(anchored) else { return true }
            return read.contains(origin: other.origin, sequence: other.sequence)
        }
        var current: PathIndex.Node? = index.root
        for key in op.path.keys {
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
    func transactionValidAgainstUnseen(_ op: Op, read: VersionVector) -> Bool? {
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
                if other.hasAnchor(relatedTo: op.path) { return false }
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
        guard case .batch(let writes) = op.kind, Self.failingPartIsUncertain(writes, at: failing, reason: reason)
        else { return [failing] }
        return op.anchors
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

    /// One region of a re-fold: its root, the point replay knows its value at (nil: the base), whether
    /// replay has passed that point, and the snapshots the replay keeps of it.
    struct Region {
        var root: Path
        var start: Stamp?
        var value: Value?
        var ready: Bool
        var kept: [(stamp: Stamp, value: Value)] = []
        /// Ops replayed into the region since the last snapshot kept (or since it became ready).
        var sinceKept = 0
        /// Ops to replay since the last snapshot before the next is looked at: what the region's size
        /// allows, doubled each time it is found too large for the ops between (see `keepSnapshot`).
        var nextLook = CoreLimits.snapshotSpacing
    }

    /// Snapshots (ascending by stamp) cut down to at most `limit`, spaced by age so that a late op
    /// finds one close before it however late it is (keeping only the newest left an op later than
    /// all of them the base, and a replay of the region's whole log).
    ///
    /// The newest third stay as they are. Of the older ones, the time from a snapshot to the newest (in
    /// stamp time units) falls in a power-of-two band, and of the snapshots in one slot of that band's
    /// width only the first stays: the slots of a band nest in those of the next, so a snapshot dropped
    /// now would be dropped by any later thinning too, and an op finds one at most about twice its
    /// lateness back. Past `limit`, the oldest go.
    static func thinned(_ snapshots: [(stamp: Stamp, value: Value)], to limit: Int) -> [(stamp: Stamp, value: Value)] {
        let dense = limit / 3
        guard snapshots.count > dense, let newest = snapshots.last?.stamp.time else { return snapshots }
        var kept: [(stamp: Stamp, value: Value)] = []
        kept.reserveCapacity(limit)
        for snapshot in snapshots.dropLast(dense) {
            let age = newest > snapshot.stamp.time ? newest - snapshot.stamp.time : 0
            let band = age == 0 ? 0 : UInt64(UInt64.bitWidth - 1 - age.leadingZeroBitCount)
            if let last = kept.last, last.stamp.time >> band == snapshot.stamp.time >> band { continue }
            kept.append(snapshot)
        }
        kept += snapshots.suffix(dense)
        if kept.count > limit { kept.removeFirst(kept.count - limit) }
        return kept
    }

    /// Keeps a snapshot of each region whose value replay knows, every few ops that touch it and after
    /// the last one, where the value is small enough to share cheaply. `touched` is the position of the
    /// one region `op` (replayed last) touches, or nil when it touches several: those holding one of
    /// its anchors, and those under an anchor that lies above regions. A re-fold of many regions thus
    /// counts and reads only the regions an op touched, and after its last op only those an op touched
    /// since their last snapshot (a region's start or its last snapshot holds the value of the others).
    /// A re-fold of a few regions counts every op for each and looks at each after its last op.
    func keepSnapshots(
        of regions: inout [Region], touched: Int?, by op: Op, in roots: RootSet, last: Bool, mini: Value
    ) {
        if !last, let touched {
            // One region: the others are not even looked at (a re-fold may hold hundreds).
            keepSnapshot(of: &regions[touched], after: op.stamp, last: false, in: mini)
            return
        }
        if regions.count <= RootSet.linearMax {
            // A few regions: looking at each costs less than finding those the op touched.
            for position in regions.indices {
                keepSnapshot(of: &regions[position], after: op.stamp, last: last, in: mini)
            }
            return
        }
        var positions: [Int] = []
        if let touched {
            positions = [touched]
        } else {
            _ = op.containsAnchor { head, tail in
                if let position = roots.position(holdingJoined: head, tail) {
                    positions.append(position)
                } else {
                    positions += roots.positions(under: Path(uncheckedKeys: head + tail))
                }
                return false
            }
        }
        if positions.count > 1 { positions = Array(Set(positions)) }
        guard last else {
            for position in positions { keepSnapshot(of: &regions[position], after: op.stamp, last: false, in: mini) }
            return
        }
        for position in positions where regions[position].ready { regions[position].sinceKept += 1 }
        for position in regions.indices where regions[position].sinceKept > 0 {
            keepSnapshot(of: &regions[position], after: op.stamp, last: true, counted: true, in: mini)
        }
    }

    /// A snapshot shares the region's value, so the next writes there copy every object on their
    /// paths: up to the whole region. It is kept every ``CoreLimits/snapshotSpacing`` ops when the
    /// region is small (``CoreLimits/snapshotNodesSmall``), else only when it holds at most
    /// ``CoreLimits/snapshotNodesPerOp`` nodes per op replayed since the last one: copies and counting
    /// then cost a bounded amount per replayed op however large the region is (a re-fold of the whole
    /// tree, whose top has a handful of children, used to copy its largest objects every 8 ops). The
    /// next look comes when the region as last counted would allow one, and after twice as many ops
    /// each time it is found too large.
    /// `counted`: the op was counted already (a last look at a region that op did not touch).
    private func keepSnapshot(
        of region: inout Region, after stamp: Stamp, last: Bool, counted: Bool = false, in mini: Value
    ) {
        guard region.ready else { return }
        if !counted { region.sinceKept += 1 }
        guard region.sinceKept >= region.nextLook || last else { return }
        let value = mini.value(at: region.root)
        let perOp = CoreLimits.snapshotNodesPerOp
        let budget = max(CoreLimits.snapshotNodesSmall, region.sinceKept * perOp)
        guard let nodes = value.nodeCount(atMost: budget) else {
            if region.sinceKept >= region.nextLook { region.nextLook = region.sinceKept * 2 }
            return
        }
        region.kept.append((stamp, value))
        region.sinceKept = 0
        region.nextLook =
            nodes <= CoreLimits.snapshotNodesSmall ? CoreLimits.snapshotSpacing : (nodes + perOp - 1) / perOp
    }

    /// What ``collect(_:)`` says of an op that touches several regions.
    static let severalRegions: Int32 = -1

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
