import WeftCore
import WeftStore

/// What one change of a replica (a local write, a batch of remote ops, a registration, a status mark
/// or a compaction) asks the store to write, in the order the changes happened. Group commit joins the
/// entries waiting at one moment into one ``StoreBatch``.
///
/// The tree writes hold the values the changed nodes had right after this change, so a prefix of the
/// entries always writes a tree that is the fold of the ops of that prefix, whatever came after.
///
/// ```swift
/// var entry = CommitEntry(clockTime: clock.lastTime)
/// entry.records = [OpRecord(op, status: .durable)]
/// entry.treeWrites = report.changes.map { .init(path: $0.path, value: $0.new) }
/// committer.enqueue(entry)
/// ```
struct CommitEntry: Sendable {
    /// What to do with the store once the entry's batch is committed.
    enum Maintenance: Sendable, Hashable {
        /// Rebuild the file without free pages and truncate the write-ahead log.
        case vacuum
        /// Fold the write-ahead log into the database file and truncate it.
        case checkpoint
    }

    /// New ops for the log.
    var records: [OpRecord] = []
    /// Regions whose base the store saves before the tree writes (see ``PreservedRegions``).
    var preserves: [Path] = []
    /// The new values of the changed nodes, in the order of the changes.
    var treeWrites: [StoreBatch.TreeWrite] = []
    /// Changes of the compacted base (compaction only).
    var baseWrites: [StoreBatch.BaseWrite] = []
    /// Status changes of this replica's ops.
    var statusChanges: [StoreBatch.StatusChange] = []
    /// Version vectors to record.
    var peerVectors: [ReplicaID: VersionVector] = [:]
    /// The replicas sync counts as members, replacing those stored (see ``Replica/persistMembers(_:)``).
    var members: [ReplicaID]?
    /// The new stable frontier (compaction only).
    var frontier: Stamp?
    /// The touches of the ops the compaction folded (compaction only), kept for the next open.
    var compactedTouches: [CompactedTouch] = []
    var indexWrites: [StoreBatch.IndexWrite] = []
    /// Ops replacing the op held under their origin and sequence: own ops stamped again (an installed
    /// snapshot), or decisions a hub revised (a replica limited to a share).
    var replacedOps: [OpRecord] = []
    /// Ops this entry makes durable without records of their own (a snapshot's folded ops): the
    /// durable vector rises to cover them once the entry commits.
    var durableVector: VersionVector?
    /// The clock's packed time when the entry was made; a commit stores the greatest.
    var clockTime: UInt64
    /// What to do after the commit.
    var maintenance: Maintenance?

    init(clockTime: UInt64) { self.clockTime = clockTime }

    /// True for an entry committed in a batch of its own (a compaction reads the store as it is; a
    /// change of membership, an installed snapshot or a revised decision is rare and carries what only
    /// isolated batches carry).
    var isIsolated: Bool {
        frontier != nil || !baseWrites.isEmpty || maintenance != nil || members != nil || durableVector != nil
            || !replacedOps.isEmpty
    }
}
