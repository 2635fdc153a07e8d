extension MergeEngine {
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
    /// batch of disjoint writes (``applyWriteByWrite(_:probe:pending:report:)``), its writes related to a
    /// pending region joining it and its outcome decided by the pending re-folds (one that rejects it
    /// takes back what was written elsewhere), else in the region of
    /// each anchor (``addPending(_:anchors:to:)``). One in order everywhere has the pending regions
    /// re-folded first and is left to the in-order road. Returns true when `op` was taken.
    func joinPending(_ op: Op, _ pending: inout PendingRegions, report: inout ApplyReport) -> Bool {
        precondition(!pending.isEmpty, "an op joins pending re-folds only when some are pending")
        var holder: Int?
        var related = false
        switch op.kind {
        case .merge, .batch, .guardedBatch:
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
            // Late somewhere (above): the write-by-write road when the op would take it anyway, its
            // writes related to a pending region joining it.
            precondition(probe.conflicts, "an op joining pending regions from outside them is late somewhere")
            let road = road(for: op, probe: probe)
            if road != .writeByWrite || !applyWriteByWrite(op, probe: probe, pending: &pending, report: &report) {
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

    /// Adds `op` to the pending re-folds of the regions its `anchors` can affect: to the region that
    /// holds an anchor's region, or to a new region (which takes in the pending regions inside it). The
    /// regions `op` opens are one group, re-folded together.
    ///
    /// An op with several anchors may then be decided by several re-folds, its writes outside their
    /// regions taken as decided: the first records its outcome, and one that rejects it takes back its
    /// writes elsewhere, as for any batch whose outcome flips.
    func addPending(_ op: Op, anchors: [Path], to pending: inout PendingRegions) {
        precondition(!anchors.isEmpty, "a re-fold has a region")
        precondition(frontier.map { op.stamp > $0 } ?? true, "a re-fold decides ops above the frontier")
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

    /// The regions whose re-folds wait for the end of an ``MergeEngine/apply(_:)``, with a filter that
    /// tells most ops at once that they are related to none of them.
    ///
    /// A batch of a thousand ops from a few origins leaves tens of regions pending, and every later op of
    /// the batch asks whether it reaches one. The filter holds one bit per root and one per proper
    /// ancestor of a root, at a hash of their keys: a path none of whose ancestors-or-self has its root
    /// bit set, and whose own ancestor bit is clear, is related to no root, read in a few bit tests
    /// instead of a comparison with every root. A set bit says "maybe", and the roots are compared then.
    /// Bits are never cleared until the regions are taken (a widened region leaves its old root's bit
    /// behind): the filter only ever answers "maybe" too often, never "no" wrongly.
    struct PendingRegions {
        /// The regions, disjoint: none is related to another.
        private(set) var regions: [PendingRefold] = []
        /// The filter's words (``filterWords``, made with the first region): root bits in the first
        /// half, ancestor bits in the second.
        private var filter: [UInt64] = []

        static let filterWords = 64
        private static let halfBits = UInt64(filterWords * 32)

        var isEmpty: Bool { regions.isEmpty }
        var count: Int { regions.count }
        var indices: Range<Int> { regions.indices }
        subscript(position: Int) -> PendingRefold { regions[position] }

        /// The hash of the prefix of `head` then `tail` of `depth` keys, after the one of `depth - 1`.
        @inline(__always) private static func extend(_ state: UInt64, with key: Key) -> UInt64 {
            FastHash.finalize(state ^ key.hashBits)
        }

        @inline(__always) private func isSet(_ bit: UInt64) -> Bool {
            filter[Int(bit >> 6)] & (1 << (bit & 63)) != 0
        }

        @inline(__always) private mutating func set(_ bit: UInt64) {
            filter[Int(bit >> 6)] |= 1 << (bit & 63)
        }

        /// Sets the bits of a root: its own, and an ancestor bit for each proper ancestor.
        private mutating func mark(_ root: Path) {
            if filter.isEmpty { filter = Array(repeating: 0, count: Self.filterWords) }
            var state: UInt64 = 0
            for key in root.keys {
                set(Self.halfBits + state % Self.halfBits)
                state = Self.extend(state, with: key)
            }
            set(state % Self.halfBits)
        }

        /// False when the path whose keys are `head` then `tail` is surely related to no region's root;
        /// true when it may be (compare the roots then).
        func mayBeRelated(_ head: [Key], _ tail: [Key]) -> Bool {
            guard !regions.isEmpty else { return false }
            var state: UInt64 = 0
            if isSet(state % Self.halfBits) { return true }
            for key in head {
                state = Self.extend(state, with: key)
                if isSet(state % Self.halfBits) { return true }
            }
            for key in tail {
                state = Self.extend(state, with: key)
                if isSet(state % Self.halfBits) { return true }
            }
            return isSet(Self.halfBits + state % Self.halfBits)
        }

        /// False when no region's root is surely a descendant-or-self of `root`.
        private func mayContainRoot(_ root: Path) -> Bool {
            var state: UInt64 = 0
            for key in root.keys { state = Self.extend(state, with: key) }
            return isSet(state % Self.halfBits) || isSet(Self.halfBits + state % Self.halfBits)
        }

        /// True when `path` is related to a region's root (one is an ancestor-or-self of the other).
        func isRelated(to path: Path) -> Bool {
            mayBeRelated(path.keys, []) && regions.contains { $0.root.isRelated(to: path) }
        }

        /// The position of the region whose root is an ancestor-or-self of `path`, if any.
        func holder(of path: Path) -> Int? {
            guard mayBeRelated(path.keys, []) else { return nil }
            return regions.firstIndex { $0.root.isAncestorOrSelf(of: path) }
        }

        /// Adds `op` to the region at `position`, which must decide from its stamp on; `once` skips an op
        /// the region holds already (two anchors of one op may lie in one region).
        mutating func add(_ op: Op, to position: Int, once: Bool = false) {
            if !once || !regions[position].arriving.contains(where: { $0.stamp == op.stamp }) {
                regions[position].arriving.append(op)
            }
            regions[position].stamp = min(regions[position].stamp, op.stamp)
        }

        /// Adds a new region, then takes in the regions inside its root.
        mutating func append(_ region: PendingRefold) {
            regions.append(region)
            widen(at: regions.count - 1, to: region.root)
        }

        /// Makes `root` the root of the region at `position`, taking in the regions it contains.
        mutating func widen(at position: Int, to root: Path) {
            regions[position].root = root
            // The filter holds the other roots: a root none of which lies inside `root` needs no scan.
            let mayContain = filter.isEmpty || mayContainRoot(root)
            mark(root)
            guard mayContain,
                regions.indices.contains(where: { $0 != position && root.isAncestorOrSelf(of: regions[$0].root) })
            else { return }
            var merged = regions[position]
            // An op with several anchors may be in several of the regions.
            var known = Set(merged.arriving.map(\.stamp))
            var kept: [PendingRefold] = []
            for (other, region) in regions.enumerated() where other != position {
                if root.isAncestorOrSelf(of: region.root) {
                    merged.stamp = min(merged.stamp, region.stamp)
                    for op in region.arriving where known.insert(op.stamp).inserted { merged.arriving.append(op) }
                } else {
                    kept.append(region)
                }
            }
            regions = kept + [merged]
        }

        /// Takes every region out, leaving none pending.
        mutating func removeAll() -> [PendingRefold] {
            let taken = regions
            regions = []
            if !filter.isEmpty {
                for word in filter.indices { filter[word] = 0 }
            }
            return taken
        }
    }
}
