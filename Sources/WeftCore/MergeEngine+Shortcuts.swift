// How the engine decides that an arriving op is in order for its subtree, and the two shortcuts for
// common late arrivals. Each shortcut states the exact conditions under which it equals the fold.

extension MergeEngine {
    /// True when a proper ancestor of `path` holds a scalar in the current state or in the base, for a
    /// path whose index walk found no mark of a possible scalar above it (`probe.scalarAbove` false).
    ///
    /// Every logged op marks the index nodes where it may write a scalar, so with no mark above the
    /// path, a scalar above it in the state can only come from the base (ops folded by compaction):
    /// only the base is walked. Usually it is empty, and the walk ends at once.
    func hasScalarAboveInBase(_ path: Path) -> Bool {
        base.hasScalar(above: path.keys[...])
    }

    /// An integer increment arriving among later increments of the same counter (and nothing else
    /// later around it): integer addition commutes, so the counter moves by exactly this step, or by
    /// the difference of starting values when it now precedes the increment that met null.
    func applyCounterShortcut(_ op: Op, probe: PathIndex.Probe, report: inout ApplyReport) -> Bool {
        // Every own op after this one is an increment (no other kind is stamped after it here), so the
        // next one is: its body is read only when its starting value matters (it met null).
        guard case .increment(.int(let by), .int(let from)) = op.kind, let node = probe.node,
            !probe.laterAbove, !probe.scalarAbove,
            node.descendantMax.map({ $0 <= op.stamp }) ?? true,
            node.ownNonIncrementMax.map({ $0 < op.stamp }) ?? true,
            let nextAnchored = node.ownFirst(after: op.stamp), isLogged(nextAnchored),
            !hasScalarAboveInBase(op.path)
        else { return false }
        let nextStamp = nextAnchored.stamp
        let nextOutcome = unusualOutcomes[nextStamp] ?? .applied
        if case .rejected(.notANumber) = nextOutcome {
            // The counter held a non-number when the next increment came; so it did for this one.
            record(.rejected(.notANumber(op.path)), of: op, report: &report)
            return true
        }
        // Every prefix sum stays far from overflow, so the order of the additions does not matter.
        let bound: UInt64 = 1 << 61
        guard nextOutcome == .applied, node.incrementMagnitude < bound, from.magnitude < bound else { return false }
        let nextMetNull = incrementsFromNull.contains(nextStamp)
        var nextFromInt: Int64 = 0
        if nextMetNull {
            guard let next = logged(nextAnchored), case .increment(_, .int(let nextFrom)) = next.kind,
                nextFrom.magnitude < bound
            else { return false }
            nextFromInt = nextFrom
        }
        // One walk reads the counter and writes the new sum, when it holds an integer.
        var current: Int64 = 0
        var updated: Int64?
        _ = state.update(at: op.path.keys[...]) { counter in
            guard case .int(let value) = counter, value.magnitude < bound else { return }
            current = value
            let sum = nextMetNull ? value - nextFromInt + from + by : value + by
            counter = .int(sum)
            updated = sum
        }
        guard let updated else { return false }
        if nextMetNull {
            incrementsFromNull.remove(nextStamp)
            incrementsFromNull.insert(op.stamp)
        }
        record(.applied, of: op, report: &report)
        if capturesChanges {
            report.changes.append(Change(path: op.path, old: .int(current), new: .int(updated), isOneRow: true))
        }
        return true
    }

    /// A blind write (set or merge) whose node is overwritten by a later blind write of the whole node
    /// before anything else could see it: it changes nothing now, and no outcome depends on it.
    func isHiddenByLaterSet(_ op: Op, probe: PathIndex.Probe) -> Bool {
        switch op.kind {
        case .set, .merge: break
        default: return false
        }
        guard let node = probe.node else { return false }
        return isHidden(
            at: op.anchors[0], node: node, stamp: op.stamp, laterAbove: probe.laterAbove, scalarAbove: probe.scalarAbove)
    }

    /// True when a blind write of the node at `path` stamped `stamp` is overwritten by the next op there
    /// (a blind write of the whole node) with nothing later around that could have seen it.
    func isHidden(at path: Path, node: PathIndex.Node, stamp: Stamp, laterAbove: Bool, scalarAbove: Bool) -> Bool {
        guard !laterAbove, !scalarAbove,
            node.descendantMax.map({ $0 <= stamp }) ?? true,
            node.subtreeTransactionMax.map({ $0 <= stamp }) ?? true,
            let nextAnchored = node.ownFirst(after: stamp), let next = logged(nextAnchored),
            writesWholly(next, at: path),
            !hasScalarAboveInBase(path)
        else { return false }
        return true
    }

    /// True when `op` is an applied blind write of the whole node at `path` (a set of it, a merge child at
    /// it, or such a part of an applied batch).
    func writesWholly(_ op: Op, at path: Path) -> Bool {
        switch op.kind {
        case .set: return op.path == path
        case .merge: return op.anchors.contains(path)
        case .batch(let writes):
            guard unusualOutcomes[op.stamp] == nil else { return false }
            for write in writes {
                switch write {
                case .set(let target, _): if target == path { return true }
                case .merge(let base, let children):
                    for child in children where base.keys + child.relative.keys == path.keys { return true }
                case .increment: continue
                }
            }
            return false
        default: return false
        }
    }

    /// A late merge of several children, child by child: merges always apply and their children are
    /// disjoint, so each child is in order (written now), hidden by a later whole write (nothing to do),
    /// or left to a re-fold of its region.
    func applyLateMerge(
        _ op: Op, children: [MergeChild], parts: [PathIndex.Part], pending: inout [PendingRefold],
        report: inout ApplyReport
    ) {
        var refolded: [Path] = []
        for (child, part) in zip(children, parts) {
            let path = Path(uncheckedKeys: op.path.keys + child.relative.keys)
            if !part.conflicts {
                let old = capturesChanges ? state.value(at: path) : .null
                state.write(child.value, at: path)
                if capturesChanges { report.changes.append(Change(path: path, old: old, new: child.value)) }
            } else if !isHidden(
                at: path, node: part.node, stamp: op.stamp, laterAbove: part.laterAbove, scalarAbove: part.scalarAbove)
            {
                refolded.append(path)
            }
        }
        guard !refolded.isEmpty else {
            statistics.hiddenWrites += 1
            record(.applied, of: op, report: &report)
            return
        }
        flush(&pending, report: &report)
        statistics.refolds += 1
        refold(after: op.stamp, anchors: refolded, arriving: [op], report: &report)
    }
}
