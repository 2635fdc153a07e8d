extension MergeEngine {
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
            case .increment, .batch, .call, .guardedBatch: return false
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
            case .increment, .batch, .call, .guardedBatch: return false
            }
        }

        /// The position of the last transaction stamped after `after` whose outcome the arriving ops
        /// change (one applied before that the rule now rejects), or -1.
        func lastFlipping(in ops: [Op], engine: MergeEngine) -> Int {
            for position in ops.indices.reversed() {
                let op = ops[position]
                guard op.stamp > after else { return -1 }
                guard op.isGuarded, !outside.contains(op.stamp) else { continue }
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
}
