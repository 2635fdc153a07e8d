extension MergeEngine {
    /// The transaction rule against the ops folded into the base, for a transaction in order: the live
    /// index holds the ops still logged and those this engine compacted itself, not the touches a
    /// reopened or installed engine starts from (a million paths would double its nodes).
    @inline(__always) func compactedCover(_ op: Op) -> Bool {
        guard frontier != nil, let read = op.readVector else { return true }
        return op.guardedPaths.allSatisfy { compactedTouchesCover($0, by: read) }
    }

    /// The in-order road: the op applies to the state directly. Every op touching its subtree is
    /// older, so the index answered the transaction rule on the way in (`probe.covered`), and the
    /// compacted touches answer it for the base.
    func applyInOrder(_ op: Op, probe: PathIndex.Probe, report: inout ApplyReport) {
        precondition(!probe.conflicts, "the in-order road takes ops no later op conflicts with")
        precondition(!probe.laterAbove, "an op with a later op above it is late")
        statistics.inOrder += 1
        let covered = probe.covered && compactedCover(op)
        // The number of anchors of a merge or batch with several, else 0.
        let anchorCount = probe.parts.count
        switch op.kind {
        case .set(let value):
            // A set always applies, and its new value is the value written.
            report.outcomes[op.stamp] = .applied
            writeInOrder(value, at: op.path, report: &report)
        case .increment(let by, let from):
            if !applyIncrementInOrder(op, by: by, from: from, report: &report) {
                applyTrackedInOrder(op, covered: covered, report: &report)
            }
        case .transaction(_, let result):
            // In order, the index answered the transaction rule on the way in.
            guard covered else {
                record(.rejected(.staleRead(op.path)), of: op, report: &report)
                return
            }
            report.outcomes[op.stamp] = .applied
            writeInOrder(result, at: op.path, report: &report)
        case .call:
            applyTrackedInOrder(op, covered: covered, report: &report)
        case .merge(let children):
            // Its children are disjoint and it always applies: each is written as an in-order set is.
            report.outcomes[op.stamp] = .applied
            for child in children {
                writeInOrder(child.value, at: Path(uncheckedKeys: op.path.keys + child.relative.keys), report: &report)
            }
        case .batch(let writes):
            if anchorCount > 1, let disjoint = Self.disjointWrites(writes, anchorCount: anchorCount) {
                applyDisjointBatchInOrder(op, writes: disjoint, report: &report)
            } else {
                applyBatchInOrder(op, covered: covered, report: &report)
            }
        case .guardedBatch:
            // As a transaction: the index answered the rule at each read path on the way in. Valid, it
            // applies as a batch.
            guard covered else {
                record(.rejected(.staleRead(op.path)), of: op, report: &report)
                return
            }
            applyBatchInOrder(op, covered: true, report: &report)
        }
    }

    /// An increment in order, in one walk that reads the counter and writes the sum. Returns false, with
    /// the state untouched, when a scalar lies above the counter: the increment then takes the general
    /// road.
    private func applyIncrementInOrder(_ op: Op, by: Number, from: Number, report: inout ApplyReport) -> Bool {
        guard let walk = Fold.incrementInPlace(&state, at: op.path, by: by, from: from) else { return false }
        switch walk.result {
        case .sum(let sum):
            // The op is new: it is not in `incrementsFromNull` yet.
            if walk.old.isNull { incrementsFromNull.insert(op.stamp) }
            report.outcomes[op.stamp] = .applied
            // No scalar above, and a number or null replaced by a number: one row in a store.
            if capturesChanges {
                report.changes.append(Change(path: op.path, old: walk.old, new: sum, isOneRow: true))
            }
        case .rejected(let rejection):
            record(.rejected(rejection), of: op, report: &report)
        }
        return true
    }

    /// A call, or an increment under a scalar, in order: applied as the fold applies it, its one node's
    /// change reported.
    private func applyTrackedInOrder(_ op: Op, covered: Bool, report: inout ApplyReport) {
        let old = capturesChanges ? state.value(at: op.path) : .null
        let outcome = applyTracked(op, to: &state) { _ in covered }
        guard outcome == .applied else {
            record(outcome, of: op, report: &report)
            return
        }
        report.outcomes[op.stamp] = .applied
        if capturesChanges { report.changes.append(Change(path: op.path, old: old, new: state.value(at: op.path))) }
    }

    /// A batch of disjoint writes in order. All or nothing: every increment's sum is known before
    /// anything is written. The writes are disjoint, so none changes what another meets, and the first
    /// that fails rejects the batch.
    private func applyDisjointBatchInOrder(
        _ op: Op, writes: [(path: Path, write: DisjointWrite)], report: inout ApplyReport
    ) {
        var sums: [Value] = []
        for (path, write) in writes {
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
        for (path, write) in writes {
            switch write {
            case .value(let value): writeInOrder(value, at: path, report: &report)
            case .increment: writeInOrder(nextSum.next() ?? .null, at: path, report: &report)
            }
        }
    }

    /// Any other batch in order: applied as the fold applies it, the change of each root it writes
    /// reported.
    private func applyBatchInOrder(_ op: Op, covered: Bool, report: inout ApplyReport) {
        let olds = capturesChanges ? changeRoots(of: op) : []
        let outcome = applyTracked(op, to: &state) { _ in covered }
        record(outcome, of: op, report: &report)
        guard outcome == .applied else { return }
        for (path, old) in olds {
            report.changes.append(Change(path: path, old: old, new: state.value(at: path)))
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
        if op.hasBatchWrites, previous != outcome {
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
            if let walk = Fold.incrementInPlace(&tree, at: op.path, by: by, from: from) {
                switch walk.result {
                case .sum:
                    markMetNull(op.stamp, walk.old.isNull)
                    return .applied
                case .rejected(let rejection):
                    markMetNull(op.stamp, false)
                    return .rejected(rejection)
                }
            }
        }
        let metNull: Bool
        if case .increment = op.kind { metNull = tree.value(at: op.path).isNull } else { metNull = false }
        let outcome = Fold.apply(
            op, to: &tree, registry: registry, transactionIsValid: transactionIsValid, forcedAt: forcedAt)
        if case .increment = op.kind { markMetNull(op.stamp, metNull && outcome == .applied) }
        return outcome
    }

    /// Records whether the plain increment stamped `stamp` met a null counter (it used its `from`).
    func markMetNull(_ stamp: Stamp, _ metNull: Bool) {
        if metNull {
            incrementsFromNull.insert(stamp)
        } else {
            incrementsFromNull.remove(stamp)
        }
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
        case .batch(let writes), .guardedBatch(_, _, let writes):
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
