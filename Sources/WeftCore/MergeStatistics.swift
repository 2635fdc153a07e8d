/// How many ops took each road through the engine.
public struct MergeStatistics: Sendable, Hashable {
    /// Ops applied directly (nothing later touched their subtree).
    public var inOrder = 0
    /// Late increments, plain or in batches, decided from the ops around them at their counter: merged
    /// by exact arithmetic, hidden, or rejected (with their batch) without a re-fold; and late whole
    /// writes of a counter followed there only by increments, which are replayed on the counter alone.
    public var counterShortcuts = 0
    /// Late writes that change nothing: blind writes and valid transactions hidden by a later whole
    /// write of their node, and stale transactions that no later transaction can have counted on.
    public var hiddenWrites = 0
    /// Late ops that would have taken a shortcut road but were re-folded because a guarded batch is
    /// stamped after them (the shortcuts leave the rule of several read paths to the re-fold).
    public var guardedDeclines = 0
    /// Region re-folds (one may serve several late ops of a batch).
    public var refolds = 0
    /// Re-folds that stopped early, at an op that rewrote their whole region after the change and the
    /// arriving ops: from there on, the region was the same as before.
    public var cutRefolds = 0
    /// Ops of a batch taken into a pending re-fold of their region instead of being applied one by one.
    public var batchedIntoRefolds = 0
    /// Ops replayed by all re-folds together.
    public var replayedOps = 0
    /// Ops that re-folds decided again (stamped at or after the change); the rest were replayed as
    /// recorded.
    public var redecidedOps = 0
    /// Re-folded regions that started from a kept snapshot or a checkpoint instead of the base.
    public var checkpointStarts = 0
    /// Most ops one re-fold replayed.
    public var replayedOpsMax = 0
    /// Root of the re-fold that replayed the most ops.
    public var largestRegion: Path?

    /// Zero everywhere.
    public init() {}

    /// Counts the ops one re-fold replayed into the regions at `regionRoots`, keeping the largest.
    mutating func countReplayed(_ replayed: Int, regionRoots: [Path]) {
        replayedOps += replayed
        guard replayed > replayedOpsMax else { return }
        replayedOpsMax = replayed
        largestRegion = regionRoots.count == 1 ? regionRoots[0] : .root
    }
}
