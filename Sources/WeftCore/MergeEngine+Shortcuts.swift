// How the engine decides that an arriving op is in order for its subtree, and the two shortcuts for
// common late arrivals. Each shortcut states the exact conditions under which it equals the fold.

extension MergeEngine {
    /// True when a proper ancestor of `path` holds a scalar in the current state or in the base.
    func hasScalarAbove(_ path: Path) -> Bool {
        for tree in [state, base] {
            var current = tree
            for key in path.keys {
                switch current {
                case .object(let children): current = children[key] ?? .null
                case .null: break
                default: return true
                }
                if current.isNull { break }
            }
        }
        return false
    }

    /// An integer increment arriving among later increments of the same counter (and nothing else
    /// later around it): integer addition commutes, so the counter moves by exactly this step, or by
    /// the difference of starting values when it now precedes the increment that met null.
    func applyCounterShortcut(_ op: Op, probe: PathIndex.Probe, report: inout ApplyReport) -> Bool {
        guard case .increment(.int(let by), .int(let from)) = op.kind, let node = probe.node,
            !probe.laterAbove, !probe.scalarAbove,
            node.descendantMax.map({ $0 <= op.stamp }) ?? true,
            node.ownNonIncrementMax.map({ $0 < op.stamp }) ?? true,
            let nextStamp = node.ownFirst(after: op.stamp), let next = log[nextStamp],
            case .increment(_, let nextFrom) = next.kind,
            !hasScalarAbove(op.path)
        else { return false }
        let nextOutcome = unusualOutcomes[nextStamp] ?? .applied
        if case .rejected(.notANumber) = nextOutcome {
            // The counter held a non-number when the next increment came; so it did for this one.
            record(.rejected(.notANumber(op.path)), of: op, report: &report)
            return true
        }
        guard nextOutcome == .applied, case .int(let current) = state.value(at: op.path),
            case .int(let nextFromInt) = nextFrom
        else { return false }
        // Every prefix sum stays far from overflow, so the order of the additions does not matter.
        let bound: UInt64 = 1 << 61
        guard node.incrementMagnitude < bound, current.magnitude < bound, from.magnitude < bound,
            nextFromInt.magnitude < bound
        else { return false }
        let updated: Int64
        if incrementsFromNull.contains(nextStamp) {
            updated = current - nextFromInt + from + by
            incrementsFromNull.remove(nextStamp)
            incrementsFromNull.insert(op.stamp)
        } else {
            updated = current + by
        }
        state.write(.int(updated), at: op.path)
        record(.applied, of: op, report: &report)
        if capturesChanges {
            report.changes.append(Change(path: op.path, old: .int(current), new: .int(updated)))
        }
        return true
    }

    /// A blind write (set or merge) whose node is overwritten by a later `set` of the same node before
    /// anything else could see it: it changes nothing now, and no outcome depends on it.
    func isHiddenByLaterSet(_ op: Op, probe: PathIndex.Probe) -> Bool {
        switch op.kind {
        case .set, .merge: break
        default: return false
        }
        guard let node = probe.node, !probe.laterAbove, !probe.scalarAbove,
            node.descendantMax.map({ $0 <= op.stamp }) ?? true,
            node.subtreeTransactionMax.map({ $0 <= op.stamp }) ?? true,
            let nextStamp = node.ownFirst(after: op.stamp), let next = log[nextStamp],
            case .set = next.kind,
            !hasScalarAbove(op.path)
        else { return false }
        return true
    }
}
