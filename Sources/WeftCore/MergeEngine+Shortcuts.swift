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

    /// A blind write (set or merge) whose node is overwritten by a later blind write of the whole node
    /// before anything else could see it: it changes nothing now, and no outcome depends on it.
    func isHiddenByLaterSet(_ op: Op, probe: PathIndex.Probe) -> Bool {
        switch op.kind {
        case .set, .merge: break
        default: return false
        }
        guard let node = probe.node else { return false }
        return isHidden(
            op, at: op.anchors[0], node: node, laterAbove: probe.laterAbove, scalarAbove: probe.scalarAbove)
    }

    /// The outcome of a late transaction that changes nothing now, or nil. Its validity depends only on
    /// which ops came before it (``transactionValidAgainstLog(_:read:)``). A stale one writes nothing,
    /// and a valid one is hidden like a set (``isHidden(_:at:node:laterAbove:scalarAbove:)``), when no
    /// later op is anchored above its node and every later transaction at or below it had seen it (one
    /// that had not would be rejected now).
    /// A valid one followed at its node only by increments has them replayed on its result
    /// (``replayIncrements(after:writing:probe:report:)``).
    func lateTransactionOutcome(_ op: Op, probe: PathIndex.Probe, report: inout ApplyReport) -> Outcome? {
        guard case .transaction(let read, let result) = op.kind, let node = probe.node, !probe.laterAbove else {
            return nil
        }
        guard transactionValidAgainstLog(op, read: read) else {
            guard laterTransactionsSaw(op, node: node) else { return nil }
            statistics.hiddenWrites += 1
            return .rejected(.staleRead(op.path))
        }
        // Both roads below check the later transactions themselves.
        if isHidden(op, at: op.path, node: node, laterAbove: probe.laterAbove, scalarAbove: probe.scalarAbove) {
            statistics.hiddenWrites += 1
            return .applied
        }
        return replayIncrements(after: op, writing: result, probe: probe, report: &report) ? .applied : nil
    }

    /// A late whole write of a node (a set, or a valid transaction's result) followed there only by
    /// increments (plain ones, or the sole write there of a batch), transactions, and at last perhaps a
    /// whole write that hides it, with no later op above or below the node and no possible scalar above
    /// it. The fold writes the value, then takes each later op in stamp order; the engine does the same on
    /// the node alone, without a re-fold, and records each outcome or null mark that changes:
    /// - a plain increment applies from the new value or is rejected (after a number every one applies,
    ///   after null the first meets null, after anything else every one is rejected);
    /// - an applied batch stays applied while its increment here succeeds; a rejected one stays rejected
    ///   when it failed here and still does, or failed elsewhere (its reason becomes this node when its
    ///   increment here comes first and now fails); any other takes a re-fold;
    /// - a transaction that had not seen the write is stale now; one that had, and applied, writes the
    ///   node wholly, as a set there or an applied batch setting it does: the value from then on does not
    ///   depend on the late write, which leaves the state as it is, provided every transaction after it
    ///   had seen the write too.
    ///
    /// False, with nothing changed, for any other write, and when more than ``CoreLimits/counterWindowMax``
    /// ops follow.
    func replayIncrements(after op: Op, writing value: Value, probe: PathIndex.Probe, report: inout ApplyReport)
        -> Bool
    {
        guard let node = probe.node, !probe.laterAbove, !probe.scalarAbove, node.hasNothingBelow(after: op.stamp),
            !hasScalarAboveInBase(op.path)
        else { return false }
        guard let laters = loggedOps(at: node, after: op.stamp) else { return false }
        var counter = value
        /// Outcomes to record, with the null mark of plain increments (nil for other ops).
        var decided: [(op: Op, outcome: Outcome, metNull: Bool?)] = []
        decided.reserveCapacity(laters.count)
        var hiddenAt: Int?
        for (position, later) in laters.enumerated() {
            if writesWholly(later, at: op.path, hiding: op) {
                hiddenAt = position
                break
            }
            let outcome = unusualOutcomes[later.stamp] ?? .applied
            switch later.kind {
            case .increment(let by, let from):
                switch Fold.incremented(counter, by: by, from: from, at: op.path) {
                case .sum(let sum):
                    decided.append((later, .applied, counter.isNull))
                    counter = sum
                case .rejected(let reason):
                    decided.append((later, .rejected(reason), false))
                }
            case .batch(let writes):
                guard let (by, from) = Self.soleIncrement(of: op.path, in: writes) else { return false }
                let fate = Fold.incremented(counter, by: by, from: from, at: op.path)
                switch (outcome, fate) {
                case (.applied, .sum(let sum)):
                    counter = sum
                case (.rejected(let reason), .rejected(let now)) where reason.path == op.path:
                    decided.append((later, .rejected(now), nil))
                case (.rejected(let reason), _) where reason.path != nil && reason.path != op.path:
                    guard let failing = reason.path,
                        let first = Self.incrementOrder(of: op.path, against: failing, in: writes)
                    else { return false }
                    if first, case .rejected(let now) = fate { decided.append((later, .rejected(now), nil)) }
                default:
                    // It would flip: its writes elsewhere change, which takes a re-fold.
                    return false
                }
            case .transaction(let read, _):
                // One that had seen the write and applied wrote the node wholly (above); one that had
                // seen it and was stale stays so; one that had not is stale now, and writes nothing.
                if !read.contains(origin: op.origin, sequence: op.sequence), outcome == .applied {
                    decided.append((later, .rejected(.staleRead(later.path)), nil))
                }
            default:
                return false
            }
        }
        // Every transaction after the hiding write must have seen the late one: one that had not is stale now.
        if let hiddenAt, laters[(hiddenAt + 1)...].contains(where: { $0.isTransaction(unawareOf: op) }) {
            return false
        }
        statistics.counterShortcuts += 1
        record(decided, report: &report)
        guard hiddenAt == nil else { return true }
        let old = state.value(at: op.path)
        if old != counter {
            state.write(counter, at: op.path)
            if capturesChanges { report.changes.append(Change(path: op.path, old: old, new: counter)) }
        }
        return true
    }

    /// The logged ops anchored at `node` after `stamp`, in stamp order; nil when one is not logged or
    /// more than ``CoreLimits/counterWindowMax`` are.
    private func loggedOps(at node: PathIndex.Node, after stamp: Stamp) -> [Op]? {
        var laters: [Op] = []
        let walked = forEachLaterOp(at: node, after: stamp) { later in
            laters.append(later)
            return true
        }
        return walked == nil ? nil : laters
    }

    /// The walk every late write of a counter takes over the ops after it at the counter's node: calls
    /// `body` with each logged op anchored at `node` after `stamp`, in stamp order, until it returns
    /// false. Returns true when `body` took every op, false when it stopped the walk, and nil when the
    /// walk gave up: an op there is not logged, or more than ``CoreLimits/counterWindowMax`` are.
    func forEachLaterOp(at node: PathIndex.Node, after stamp: Stamp, _ body: (Op) -> Bool) -> Bool? {
        var walked = 0
        var gaveUp = false
        let complete = node.own.allSatisfy(after: stamp) { anchored in
            walked += 1
            guard walked <= CoreLimits.counterWindowMax, let later = logged(anchored) else {
                gaveUp = true
                return false
            }
            return body(later)
        }
        return gaveUp ? nil : complete
    }

    /// Records the outcomes a replay of a counter decided again, and whether each plain increment met a
    /// null counter (nil for other ops).
    private func record(_ decided: [(op: Op, outcome: Outcome, metNull: Bool?)], report: inout ApplyReport) {
        for (later, outcome, metNull) in decided {
            if outcome != unusualOutcomes[later.stamp] ?? .applied {
                record(outcome, of: later, report: &report)
            }
            if let metNull { markMetNull(later.stamp, metNull) }
        }
    }

    /// Whether the increment of `path` in a batch comes before every increment of `failing` (true) or
    /// after every one (false); nil when neither, or when one is missing.
    static func incrementOrder(of path: Path, against failing: Path, in writes: [Write]) -> Bool? {
        var own: Int?
        var failingFirst: Int?
        var failingLast: Int?
        for (position, write) in writes.enumerated() {
            guard case .increment(let target, _, _) = write else { continue }
            if target == path { own = position }
            if target == failing {
                failingFirst = failingFirst ?? position
                failingLast = position
            }
        }
        guard let own, let failingFirst, let failingLast else { return nil }
        if own < failingFirst { return true }
        if own > failingLast { return false }
        return nil
    }

    /// The step and starting value of the increment of `path` when it is the only write of `writes` at
    /// `path`, above it or below it; nil otherwise.
    static func soleIncrement(of path: Path, in writes: [Write]) -> (by: Number, from: Number)? {
        var found: (by: Number, from: Number)?
        for write in writes {
            switch write {
            case .increment(let target, let by, let from) where target == path:
                guard found == nil else { return nil }
                found = (by, from)
            case .merge(let base, let children):
                if children.contains(where: { path.isRelated(toJoined: base.keys, $0.relative.keys) }) { return nil }
            default:
                if write.path.isRelated(to: path) { return nil }
            }
        }
        return found
    }

    /// True when a blind write of the node at `path` by `op` is overwritten by the next op there (a blind
    /// write of the whole node) with nothing later around that could have seen it: no later op below the
    /// node or above it, and every later transaction at or below it had seen `op`.
    func isHidden(_ op: Op, at path: Path, node: PathIndex.Node, laterAbove: Bool, scalarAbove: Bool) -> Bool {
        guard !laterAbove, !scalarAbove, node.hasNothingBelow(after: op.stamp),
            let nextAnchored = node.ownFirst(after: op.stamp), let next = logged(nextAnchored),
            writesWholly(next, at: path, hiding: op),
            laterTransactionsSaw(op, node: node),
            !hasScalarAboveInBase(path)
        else { return false }
        return true
    }

    /// True when every transaction stamped after `op` at `node` or below had seen it (its origin's read
    /// vector holds `op`): adding `op` leaves every one's validity as it was. False when more than
    /// ``CoreLimits/counterWindowMax`` later ops would need a look.
    func laterTransactionsSaw(_ op: Op, node: PathIndex.Node) -> Bool {
        guard let latest = node.subtreeTransactionMax, latest > op.stamp else { return true }
        var budget = CoreLimits.counterWindowMax
        var saw = true
        forEachStamp(below: node, after: op.stamp) { anchored in
            guard saw else { return }
            budget -= 1
            guard budget >= 0, let later = logged(anchored) else {
                saw = false
                return
            }
            if later.isTransaction(unawareOf: op) { saw = false }
        }
        return saw
    }

    /// True when `op` is an applied blind write of the whole node at `path` (a set of it, a merge child at
    /// it, such a part of an applied batch, or an applied transaction there that had seen `hidden`) whose
    /// outcome does not depend on what the node held: a batch must write the node wholly before any of
    /// its increments reads it (an increment there would fail on a value the hidden write leaves).
    func writesWholly(_ op: Op, at path: Path, hiding hidden: Op) -> Bool {
        switch op.kind {
        case .set: return op.path == path
        case .merge: return op.anchors.contains(path)
        case .transaction(let read, _):
            return op.path == path && unusualOutcomes[op.stamp] == nil
                && read.contains(origin: hidden.origin, sequence: hidden.sequence)
        case .batch(let writes):
            guard unusualOutcomes[op.stamp] == nil else { return false }
            for write in writes {
                switch write {
                case .set(let target, _): if target == path { return true }
                case .merge(let base, let children):
                    for child in children where base.keys + child.relative.keys == path.keys { return true }
                case .increment(let target, _, _): if target.isRelated(to: path) { return false }
                }
            }
            return false
        default: return false
        }
    }

    /// A late merge of several children, or a late batch of disjoint blind writes, write by write:
    /// such ops always apply and their writes are disjoint, so each is in order (written now), hidden by
    /// a later whole write (nothing to do), or left to a re-fold of its region; a write related to a
    /// pending region joins it.
    func applyLateBlindWrites(
        _ op: Op, writes: [(path: Path, value: Value)], parts: [PathIndex.Part], alsoRefolding: [Path] = [],
        pending: inout PendingRegions, report: inout ApplyReport
    ) {
        var refolded = alsoRefolding
        for ((path, value), part) in zip(writes, parts) {
            if pending.isRelated(to: path) {
                refolded.append(path)
            } else if !part.conflicts {
                writeInOrder(value, at: path, report: &report)
            } else if !isHidden(
                op, at: path, node: part.node, laterAbove: part.laterAbove, scalarAbove: part.scalarAbove)
            {
                refolded.append(path)
            }
        }
        guard !refolded.isEmpty else {
            statistics.hiddenWrites += 1
            record(.applied, of: op, report: &report)
            return
        }
        // The writes left join the batch's pending re-folds, one region each.
        addPending(op, anchors: refolded, to: &pending)
    }

    /// One write of a batch whose writes lie on disjoint nodes: a value written wholly (a set, a merge
    /// child), or an increment.
    enum DisjointWrite {
        case value(Value)
        case increment(by: Number, from: Number)
    }

    /// The writes of a batch, in the order of its anchors, when their nodes are disjoint (none inside
    /// another, none written twice); nil otherwise. Such writes do not depend on each other.
    static func disjointWrites(_ writes: [Write], anchorCount: Int) -> [(path: Path, write: DisjointWrite)]? {
        guard anchorCount <= CoreLimits.blindBatchWritesMax else { return nil }
        var result: [(path: Path, write: DisjointWrite)] = []
        result.reserveCapacity(anchorCount)
        for write in writes {
            switch write {
            case .set(let path, let value): result.append((path, .value(value)))
            case .merge(let base, let children):
                for child in children {
                    result.append((Path(uncheckedKeys: base.keys + child.relative.keys), .value(child.value)))
                }
            case .increment(let path, let by, let from): result.append((path, .increment(by: by, from: from)))
            }
            if result.count > anchorCount { return nil }
        }
        // Anchors are listed once each: fewer anchors than writes means two writes of one node.
        guard result.count == anchorCount else { return nil }
        for first in result.indices {
            for second in result.indices where second > first && result[first].path.isRelated(to: result[second].path) {
                return nil
            }
        }
        return result
    }

    /// A late batch of writes on disjoint nodes whose increments' fates the index shows
    /// (``lateIncrementFate(_:at:by:from:part:)``; an increment in order for its counter meets what the
    /// state holds there).
    ///
    /// When they all succeed, the batch applies whatever else happens, and its writes are taken one by
    /// one: an increment in order is written now, a late one takes the counter shortcut; a blind write
    /// is in order, hidden, or re-folded in its own region. When the first one that does not succeed, in
    /// the batch's order, fails, the batch is rejected for it and writes nothing, provided no later op
    /// can have counted on its writes: no later op above any of its nodes, and every later transaction at
    /// or below one had seen it (one that had not would be rejected now).
    ///
    /// False, with nothing changed, for any other batch, and for one with a part in a pending region.
    func applyLateDisjointBatch(
        _ op: Op, writes: [(path: Path, write: DisjointWrite)], parts: [PathIndex.Part],
        pending: inout PendingRegions, report: inout ApplyReport
    ) -> Bool {
        let regions = pending
        let isPending = { (path: Path) in regions.isRelated(to: path) }
        var sums: [(path: Path, new: Value)] = []
        var pendingIncrement = false
        for ((path, write), part) in zip(writes, parts) {
            guard case .increment(let by, let from) = write else { continue }
            guard !isPending(path) else {
                pendingIncrement = true
                continue
            }
            let fate: IncrementFate
            if !part.conflicts {
                switch Fold.incremented(state.value(at: path), by: by, from: from, at: path) {
                case .sum(let sum):
                    sums.append((path, sum))
                    fate = .succeeds
                case .rejected(let reason):
                    fate = .fails(reason)
                }
            } else {
                guard let known = lateIncrementFate(op, at: path, by: by, from: from, part: part) else { return false }
                fate = known
            }
            if case .fails(let reason) = fate {
                guard !pendingIncrement,
                    zip(writes, parts).allSatisfy({ write, part in
                        !isPending(write.path) && !part.laterAbove && laterTransactionsSaw(op, node: part.node)
                    })
                else { return false }
                statistics.counterShortcuts += 1
                record(.rejected(reason), of: op, report: &report)
                return true
            }
        }
        for (path, new) in sums { writeInOrder(new, at: path, report: &report) }
        var refolded: [Path] = []
        var blind: [(path: Path, value: Value)] = []
        var blindParts: [PathIndex.Part] = []
        for ((path, write), part) in zip(writes, parts) {
            switch write {
            case .value(let value):
                blind.append((path, value))
                blindParts.append(part)
            case .increment(let by, let from):
                if isPending(path) {
                    refolded.append(path)
                    continue
                }
                guard part.conflicts else { continue }
                if counterShortcut(op, at: path, by: by, from: from, node: part.node, report: &report) != .applied {
                    refolded.append(path)
                }
            }
        }
        applyLateBlindWrites(
            op, writes: blind, parts: blindParts, alsoRefolding: refolded, pending: &pending, report: &report)
        return true
    }
}

extension Op {
    /// True when this op is a transaction whose origin had not seen `op` when it read.
    func isTransaction(unawareOf op: Op) -> Bool {
        guard case .transaction(let read, _) = kind else { return false }
        return !read.contains(origin: op.origin, sequence: op.sequence)
    }
}
