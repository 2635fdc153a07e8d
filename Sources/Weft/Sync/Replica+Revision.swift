import WeftCore
import WeftStore
import WeftSync

// Revised decisions: a replica limited to a share holds, for each op whose effect on its share it cannot
// decide, the decision its hub carried. When the hub decides such an op again (an op stamped earlier
// reached it later), it sends the op again as it now decides it, and the replica puts it in place.

extension Replica {
    /// Puts each revised decision a hub sent in place of the op of its origin and sequence, and re-folds.
    ///
    /// ```swift
    /// let revised = try replica.reviseCarried(revisionsFromHub)   // 0 when every one was already held
    /// ```
    /// - Returns: the number of ops replaced (those equal to the op held are passed over).
    /// - Throws: `WeftError` with code `sync` when a revision is not a carried decision of an op held
    ///   (see `MergeEngine.revising(_:baseVector:)`), `shutDown`, or the code of a failed commit.
    @discardableResult
    func reviseCarried(_ revisions: [Op]) throws -> Int {
        condition.lock()
        defer { condition.unlock() }
        let engine = try writableEngine()
        let revision: EngineRevision?
        do {
            revision = try engine.revising(revisions, baseVector: instance.compactionVector)
        } catch {
            throw WeftError(.sync, "a revised decision from the hub was refused: \(error)")
        }
        guard let revision else { return 0 }
        let revised = revision.engine
        var outcomes: [Stamp: Outcome] = [:]
        for op in revised.sortedOps() {
            let outcome = revised.outcome(of: op.stamp) ?? .applied
            if engine.outcome(of: op.stamp) != outcome { outcomes[op.stamp] = outcome }
        }
        let old = engine.state
        let new = revised.state
        var report = ApplyReport()
        report.changes = old == new ? [] : [Change(path: .root, old: old, new: new)]
        report.outcomes = outcomes
        var statusChanges: [StoreBatch.StatusChange] = []
        reviseOutcomes(report, records: [], into: &statusChanges, revised)

        var entry = CommitEntry(clockTime: clock.lastTime)
        entry.replacedOps = revision.replaced.map { OpRecord($0, status: nil) }
        if !report.changes.isEmpty {
            if let region = regions.claim(.root, base: revised.base) { entry.preserves = [region] }
            entry.treeWrites = [StoreBatch.TreeWrite(path: .root, value: new)]
            entry.indexWrites = queryIndexes.follow(report.changes) { revised.value(at: $0) }
        }
        entry.statusChanges = statusChanges
        committer.enqueue(entry)
        self.engine = revised
        if !report.changes.isEmpty || !outcomes.isEmpty {
            notifier.post(ChangeBatch(changes: report.changes, isLocalPending: false, outcomes: outcomes))
        }
        return revision.replaced.count
    }
}
