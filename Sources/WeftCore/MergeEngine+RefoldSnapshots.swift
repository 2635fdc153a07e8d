extension MergeEngine {
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
    /// then cost a bounded amount per replayed op however large the region is (counting only the top
    /// object's children would let a re-fold of the whole tree, whose top has a handful of children,
    /// copy its largest objects every few ops). The
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
}
