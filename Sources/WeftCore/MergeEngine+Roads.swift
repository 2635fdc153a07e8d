// The one place where an arriving op's road is chosen, and the entry of each road. The roads and the
// conditions under which each equals the fold are described in `Docs/MERGE-RULES.md`.

/// The road an arriving op takes through the ``MergeEngine``, cheapest first.
///
/// ``choose(for:probe:takesShortcuts:)`` picks it from the op's kind and what the index walk said, in
/// constant time. A shortcut road then reads the ops around the op's nodes and either decides the op
/// exactly as the fold would, or declines, changing nothing: the op then takes ``refold``.
enum MergeRoad: Equatable, CaseIterable {
    /// No known op stamped later touches the op's anchors, their ancestors or their descendants: the
    /// op applies directly.
    case inOrder
    /// A late plain increment, decided from the ops around it at its counter.
    case counterShortcut
    /// A late set, or a late merge of one child: hidden by a later whole write of its node, or, for a
    /// set, replayed on its node alone with the increments that follow it there.
    case hiddenWrite
    /// A late transaction: its validity read from the log; a stale one or a hidden valid one writes
    /// nothing, and a valid one followed by increments has them replayed on its node alone.
    case lateTransaction
    /// A late merge of several children, or a late batch of several anchors, taken write by write when
    /// its writes lie on disjoint nodes.
    case writeByWrite
    /// The general road: the regions the op can affect are re-folded, once per region at the end of
    /// the ``MergeEngine/apply(_:)`` call.
    case refold

    /// The road of an op whose index walk gave `probe`. Pure and constant-time: the in-order test is
    /// the first, so the common road reads nothing else.
    ///
    /// - Parameter takesShortcuts: false sends every late op to ``refold``
    ///   (``MergeEngine/Options/takesShortcuts``).
    @inline(__always)
    static func choose(for op: Op, probe: PathIndex.Probe, takesShortcuts: Bool) -> MergeRoad {
        guard probe.conflicts else { return .inOrder }
        guard takesShortcuts else { return .refold }
        switch op.kind {
        case .increment: return .counterShortcut
        case .set: return .hiddenWrite
        case .merge: return probe.parts.isEmpty ? .hiddenWrite : .writeByWrite
        case .transaction: return .lateTransaction
        case .batch: return probe.parts.count > 1 ? .writeByWrite : .refold
        // Its outcome rests on every op related to any of its read paths, and on all its parts.
        case .call, .guardedBatch: return .refold
        }
    }

    /// True for the roads that may decline an op (it then takes ``refold``).
    var isShortcut: Bool {
        switch self {
        case .inOrder, .refold: return false
        case .counterShortcut, .hiddenWrite, .lateTransaction, .writeByWrite: return true
        }
    }
}

extension MergeEngine {
    /// How the engine chooses its roads.
    struct Options {
        /// Late ops may take the shortcut roads (``MergeRoad/isShortcut``). False leaves the in-order
        /// road and the re-fold only, which land on the same state by a longer way: tests compare the
        /// two on the same ops.
        var takesShortcuts = true
    }

    /// Applies one op that is neither known nor below the frontier: it waits for its function, or it
    /// is indexed and takes the road ``MergeRoad/choose(for:probe:takesShortcuts:)`` gives; a shortcut
    /// that declines leaves it to a re-fold.
    func applyNew(_ op: Op, pending: inout PendingRegions, report: inout ApplyReport) {
        if case .call(let call) = op.kind, !registry.contains(name: call.name, version: call.version) {
            waiting[op.stamp] = op
            report.outcomes[op.stamp] = .waiting
            return
        }
        let probe = index.insert(op)
        loggedCount += 1
        switch road(for: op, probe: probe) {
        case .inOrder:
            applyInOrder(op, probe: probe, report: &report)
            return
        case .counterShortcut:
            if applyCounterShortcut(op, probe: probe, report: &report) { return }
        case .hiddenWrite:
            if applyHiddenWrite(op, probe: probe, report: &report) { return }
        case .lateTransaction:
            if applyLateTransaction(op, probe: probe, report: &report) { return }
        case .writeByWrite:
            if applyWriteByWrite(op, probe: probe, pending: &pending, report: &report) { return }
        case .refold:
            break
        }
        addPending(op, anchors: op.anchors, to: &pending)
    }

    /// The road ``MergeRoad/choose(for:probe:takesShortcuts:)`` gives, except that a late op with a
    /// guarded batch stamped after it anywhere takes ``MergeRoad/refold``: the shortcuts reason about the
    /// transactions after a late op at its node, one path each, and leave guarded batches, whose rule
    /// spans several paths, to the re-fold (which applies the rule itself).
    func road(for op: Op, probe: PathIndex.Probe) -> MergeRoad {
        let road = MergeRoad.choose(for: op, probe: probe, takesShortcuts: options.takesShortcuts)
        guard road.isShortcut, let latest = index.guardedMax, latest > op.stamp else { return road }
        statistics.guardedDeclines += 1
        return .refold
    }

    /// The entry of every shortcut road: the op is late, and logged.
    @inline(__always) func preconditionLate(_ op: Op, probe: PathIndex.Probe) {
        precondition(probe.conflicts, "a shortcut road takes late ops only")
        precondition(options.takesShortcuts, "the shortcut roads are switched off")
        precondition(frontier.map { op.stamp > $0 } ?? true, "an op at or below the frontier was applied")
    }

    /// The hidden-write road: a late set or merge of one child that a later whole write of its node
    /// hides, or a late set followed at its node only by increments, transactions and perhaps a hiding
    /// write (``replayIncrements(after:writing:probe:report:)``). False, with nothing changed, otherwise.
    func applyHiddenWrite(_ op: Op, probe: PathIndex.Probe, report: inout ApplyReport) -> Bool {
        preconditionLate(op, probe: probe)
        precondition(probe.parts.isEmpty, "the hidden-write road takes ops of one anchor")
        if isHiddenByLaterSet(op, probe: probe) {
            statistics.hiddenWrites += 1
            record(.applied, of: op, report: &report)
            return true
        }
        guard case .set(let value) = op.kind, replayIncrements(after: op, writing: value, probe: probe, report: &report)
        else { return false }
        record(.applied, of: op, report: &report)
        return true
    }

    /// The late-transaction road (``lateTransactionOutcome(_:probe:report:)``). False, with nothing
    /// changed, when the transaction needs a re-fold.
    func applyLateTransaction(_ op: Op, probe: PathIndex.Probe, report: inout ApplyReport) -> Bool {
        preconditionLate(op, probe: probe)
        guard let outcome = lateTransactionOutcome(op, probe: probe, report: &report) else { return false }
        record(outcome, of: op, report: &report)
        return true
    }

    /// The write-by-write road: a late merge of several children always takes it; a late batch of
    /// several anchors takes it when its writes lie on disjoint nodes and the fate of each of its
    /// increments is known (``applyLateDisjointBatch(_:writes:parts:pending:report:)``). False, with
    /// nothing changed, otherwise.
    func applyWriteByWrite(
        _ op: Op, probe: PathIndex.Probe, pending: inout PendingRegions, report: inout ApplyReport
    ) -> Bool {
        preconditionLate(op, probe: probe)
        precondition(probe.parts.count > 1, "the write-by-write road takes ops of several anchors")
        switch op.kind {
        case .merge(let children):
            precondition(children.count == probe.parts.count, "a merge has one part per child")
            let writes = children.map { (Path(uncheckedKeys: op.path.keys + $0.relative.keys), $0.value) }
            applyLateBlindWrites(op, writes: writes, parts: probe.parts, pending: &pending, report: &report)
            return true
        case .batch(let batchWrites):
            guard let writes = Self.disjointWrites(batchWrites, anchorCount: probe.parts.count) else { return false }
            return applyLateDisjointBatch(op, writes: writes, parts: probe.parts, pending: &pending, report: &report)
        case .set, .increment, .transaction, .call, .guardedBatch:
            preconditionFailure("the write-by-write road takes merges and batches, not \(op.kind)")
        }
    }
}
