// Region re-fold: rebuild the few subtrees an out-of-order op can affect by replaying, in stamp order,
// every op that touches them, starting from the compacted base.

extension MergeEngine {
    /// Re-folds the regions that ops stamped after `stamp` at `anchors` can reach, and reports changes
    /// and revised outcomes. `arriving` is the new op (its outcome is always reported).
    func refold(after stamp: Stamp, anchors: [Path], report: inout ApplyReport, arriving: Stamp) {
        var roots = closeRegions(anchors.map { regionRoot(for: $0, after: stamp) }, after: stamp)
        if roots.count > CoreLimits.refoldRegionsMax { roots = [.root] }
        let (ops, outside) = collect(roots: roots)
        var mini = Value.null
        for root in roots { mini.write(base.value(at: root), at: root) }
        let local = PathIndex()
        for op in ops {
            if outside.contains(op.stamp) {
                Fold.replay(op, outcome: unusualOutcomes[op.stamp] ?? .applied, to: &mini, registry: registry)
            } else {
                let outcome = applyTracked(op, to: &mini, index: local, history: compactedTouches)
                let previous = unusualOutcomes[op.stamp] ?? .applied
                if outcome != previous || op.stamp == arriving { record(outcome, of: op, report: &report) }
            }
            local.insert(op)
        }
        for root in roots {
            let new = mini.value(at: root)
            let old = state.value(at: root)
            guard new != old else { continue }
            state.write(new, at: root)
            if capturesChanges { report.changes.append(Change(path: root, old: old, new: new)) }
        }
    }

    /// The root of the region an op at `anchor` stamped `stamp` can affect: the highest ancestor-or-self
    /// that has an op stamped later, that may hold a scalar, or that has calls (which need their whole
    /// subtree to re-run).
    func regionRoot(for anchor: Path, after stamp: Stamp) -> Path {
        var current: PathIndex.Node? = index.root
        var states: (Value, Value)? = (state, base)
        for depth in 0..<anchor.keys.count {
            if let node = current {
                if let ownMax = node.ownMax, ownMax > stamp { return Path(uncheckedKeys: Array(anchor.keys[..<depth])) }
                if node.mayBeScalar || node.callCount > 0 { return Path(uncheckedKeys: Array(anchor.keys[..<depth])) }
            }
            if let (s, b) = states {
                let scalarHere = { (v: Value) -> Bool in !v.isNull && !v.isObject }
                if scalarHere(s) || scalarHere(b) { return Path(uncheckedKeys: Array(anchor.keys[..<depth])) }
                let key = anchor.keys[depth]
                let nextS = s[key]
                let nextB = b[key]
                states = nextS.isNull && nextB.isNull ? nil : (nextS, nextB)
            }
            current = current?.children[anchor.keys[depth]]
        }
        return anchor
    }

    /// Grows a set of region roots until every op with an anchor inside a region has all its anchors
    /// inside regions (a batch is decided as a whole). Roots inside other roots are dropped.
    func closeRegions(_ initial: [Path], after stamp: Stamp) -> [Path] {
        var roots = minimalRoots(initial)
        while roots.count <= CoreLimits.refoldRegionsMax {
            var added: [Path] = []
            for root in roots {
                guard let node = index.node(at: root.keys[...]) else { continue }
                forEachStamp(below: node) { stamp in
                    guard let op = log[stamp], case .batch = op.kind else { return }
                    for anchor in op.anchors where !roots.contains(where: { $0.isAncestorOrSelf(of: anchor) }) {
                        added.append(regionRoot(for: anchor, after: stamp))
                    }
                }
            }
            if added.isEmpty { return roots }
            roots = minimalRoots(roots + added)
        }
        return [.root]
    }

    /// Drops roots that lie inside other roots, and duplicates.
    func minimalRoots(_ paths: [Path]) -> [Path] {
        let sorted = Set(paths).sorted()
        var result: [Path] = []
        for path in sorted where !result.contains(where: { $0.isAncestorOrSelf(of: path) }) { result.append(path) }
        return result
    }

    /// Every op touching the regions, sorted by stamp, and the stamps of those that only touch ancestors
    /// of the regions (their outcomes are fixed and they are replayed as recorded).
    func collect(roots: [Path]) -> (ops: [Op], outside: Set<Stamp>) {
        var inside = Set<Stamp>()
        var above = Set<Stamp>()
        for root in roots {
            var current: PathIndex.Node? = index.root
            for key in root.keys {
                guard let node = current else { break }
                above.formUnion(node.own)
                current = node.children[key]
            }
            if let node = current { forEachStamp(below: node) { inside.insert($0) } }
        }
        let outside = above.subtracting(inside)
        let ops = inside.union(above).compactMap { log[$0] }.sorted { $0.stamp < $1.stamp }
        return (ops, outside)
    }

    /// Calls `body` with every stamp anchored at `node` or below.
    func forEachStamp(below node: PathIndex.Node, _ body: (Stamp) -> Void) {
        var stack = [node]
        while let current = stack.popLast() {
            for stamp in current.own { body(stamp) }
            stack.append(contentsOf: current.children.values)
        }
    }
}
