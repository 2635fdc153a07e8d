/// A summary the merge engine keeps that differs from what its log says it should hold: the first one
/// ``MergeEngine/checkInvariants()`` finds.
///
/// ```swift
/// do {
///     try engine.checkInvariants()
/// } catch {
///     print(error)  // "subtreeMax at /counters/c0: expected t12@r2, found t9@r1"
/// }
/// ```
public struct MergeInvariantViolation: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of summary that differs.
    public enum Summary: String, Sendable, Hashable, CaseIterable {
        // The engine's bookkeeping of its log.
        case loggedCount, waitingOps, outcomes, incrementsFromNull
        // A node of the path index.
        case children, missingNode, ownOps, ownMax, subtreeMax, descendantMax, subtreeTransactionMax
        case ownNonIncrementMax, mayBeScalar, callCount, incrementMagnitude, numberMagnitude
        case ownSequences, subtreeSequences, snapshots, failingBatches, failingBelow, failingChildren
    }

    /// The kind of summary that differs.
    public var summary: Summary
    /// The index node it belongs to (the root for the engine's bookkeeping).
    public var path: Path
    /// True when it was found in the index of compacted touches, not in the live one.
    public var inCompactedIndex: Bool
    /// What the recomputation gave.
    public var expected: String
    /// What the engine held.
    public var found: String

    public init(summary: Summary, path: Path, inCompactedIndex: Bool = false, expected: String, found: String) {
        self.summary = summary
        self.path = path
        self.inCompactedIndex = inCompactedIndex
        self.expected = expected
        self.found = found
    }

    public var description: String {
        "\(summary.rawValue) at \(path)\(inCompactedIndex ? " (compacted touches)" : ""): expected \(expected), "
            + "found \(found)"
    }
}
