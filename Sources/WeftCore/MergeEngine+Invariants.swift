// The engine's self-check: every summary it keeps beside its log, recomputed from the log and compared.

extension MergeEngine {
    /// Recomputes every summary the engine keeps beside its log (the path index's per-node maxima,
    /// flags, magnitudes, own lists, sequences and failing batches, and the log's own bookkeeping) from
    /// the log alone, and throws the first that differs.
    ///
    /// The roads trust these summaries to decide late ops without a re-fold, so a summary gone wrong
    /// shows up here before it shows up as a wrong state. The check changes nothing; it costs a pass
    /// over the log and one over the index, so property tests run it after every step and the
    /// simulator every few events, not the shells.
    ///
    /// ```swift
    /// engine.apply(ops)
    /// try engine.checkInvariants()
    /// ```
    /// - Throws: ``MergeInvariantViolation`` naming the first summary that differs, and where.
    public func checkInvariants() throws(MergeInvariantViolation) {
        let ops = loggedOps()
        try checkLogBookkeeping(loggedOps: ops)
        var expected: [Path: PathIndex.NodeExpectation] = [:]
        for op in ops {
            var failing: [Path] = []
            if op.hasBatchWrites, case .rejected(let reason) = unusualOutcomes[op.stamp] {
                failing = failingAnchors(of: op, reason: reason)
            }
            PathIndex.expect(op, failingAnchors: failing, into: &expected)
        }
        try index.checkSummaries(against: expected, frontier: frontier)
        do {
            try compactedIndex.checkSummaries(against: nil, frontier: frontier)
        } catch {
            var violation = error
            violation.inCompactedIndex = true
            throw violation
        }
    }

    /// The log's own bookkeeping: the count of logged ops, the ops waiting for a function, the
    /// outcomes kept apart, and the increments marked as having met null.
    private func checkLogBookkeeping(loggedOps ops: [Op]) throws(MergeInvariantViolation) {
        func violation(_ summary: MergeInvariantViolation.Summary, _ expected: String, _ found: String)
            -> MergeInvariantViolation
        {
            MergeInvariantViolation(summary: summary, path: .root, expected: expected, found: found)
        }
        guard loggedCount == ops.count else {
            throw violation(.loggedCount, "\(ops.count) ops in the origins' logs", "\(loggedCount)")
        }
        for (stamp, op) in waiting {
            guard known(stamp) == op else { throw violation(.waitingOps, "\(stamp) in its origin's log", "missing") }
            guard case .call(let call) = op.kind, !registry.contains(name: call.name, version: call.version) else {
                throw violation(.waitingOps, "\(stamp) a call to a function not registered", "\(op.kind)")
            }
        }
        for (stamp, outcome) in unusualOutcomes {
            guard logged(stamp) != nil else { throw violation(.outcomes, "\(stamp) logged", "not logged") }
            guard outcome != .applied, outcome != .waiting else {
                throw violation(.outcomes, "\(stamp) rejected (applied is not stored)", "\(outcome)")
            }
        }
        for stamp in incrementsFromNull {
            guard let op = logged(stamp), case .increment = op.kind else {
                throw violation(.incrementsFromNull, "\(stamp) a logged plain increment", "another op or none")
            }
            guard unusualOutcomes[stamp] == nil else {
                throw violation(.incrementsFromNull, "\(stamp) applied", "\(unusualOutcomes[stamp].map { "\($0)" } ?? "")")
            }
        }
    }
}
