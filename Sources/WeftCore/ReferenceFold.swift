/// The oracle that defines a replica's state: all known ops, deduplicated, sorted by stamp, applied one
/// after another to the base (the empty tree, or a compacted base).
///
/// It is deliberately simple. Property tests and the simulator compare every faster path against it.
///
/// ```swift
/// let result = ReferenceFold.fold(ops, registry: registry)
/// result.state.jsonString()
/// ```
public enum ReferenceFold {
    /// The state and the outcome of every op.
    public struct Result: Sendable {
        public var state: Value
        public var outcomes: [Stamp: Outcome]
    }

    /// Folds `ops` (in any order, with duplicates) onto `base`.
    public static func fold(_ ops: some Sequence<Op>, base: Value = .null, registry: FunctionRegistry) -> Result {
        var unique: [Stamp: Op] = [:]
        for op in ops { unique[op.stamp] = op }
        let sorted = unique.values.sorted { $0.stamp < $1.stamp }
        var state = base
        var outcomes: [Stamp: Outcome] = [:]
        outcomes.reserveCapacity(sorted.count)
        let index = PathIndex()
        for op in sorted {
            let outcome = Fold.apply(op, to: &state, registry: registry) {
                // The transaction rule: every op before it related to a guarded path was seen.
                guard let read = $0.readVector else { return true }
                return $0.guardedPaths.allSatisfy { index.isCovered(path: $0, by: read) }
            }
            outcomes[op.stamp] = outcome
            // The transaction rule needs only which origins touched which nodes, up to which sequence.
            if outcome != .waiting { index.insertTouches(of: op) }
        }
        return Result(state: state, outcomes: outcomes)
    }
}
