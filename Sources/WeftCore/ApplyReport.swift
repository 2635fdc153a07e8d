/// What one ``MergeEngine/apply(_:)`` did.
public struct ApplyReport: Sendable {
    /// Nodes whose value changed, with old and new values (empty when changes are not captured).
    public var changes: [Change] = []
    /// Outcome of every new op, and revised outcomes of earlier ops.
    public var outcomes: [Stamp: Outcome] = [:]
    /// Ops already known.
    public var duplicates = 0
    /// Ops refused: at or below the compaction frontier, or stamped out of their origin's sequence
    /// order (a broken or forged log).
    public var refused: [Stamp] = []
    /// Positions, in the array given to ``MergeEngine/apply(_:)``, of the ops that were new (neither
    /// known nor refused), in stamp order: the ops a replica stores.
    public var admitted: [Int] = []

    public init() {}
}
