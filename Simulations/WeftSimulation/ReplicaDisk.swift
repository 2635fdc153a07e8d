import WeftCore

/// The storage seam of a simulated replica: what its shell writes in each group commit, when it
/// syncs, and what a power loss leaves behind.
///
/// A commit is one transaction: after a crash it is there whole or not at all, and commits survive
/// in order (a crash keeps a prefix of the unsynced ones, as a write-ahead log allows).
protocol ReplicaDisk: AnyObject {
    /// True when the disk keeps the materialized tree too, so the replica must pass the engine's
    /// changes with each commit.
    var storesTree: Bool { get }
    /// Stores `ops` (each new to the replica), the tree changes they made, and the clock's packed
    /// time in one commit. `encodings`, when given, hold `OpCodec.encode` of each op (the bytes a
    /// received op arrived in), as a replica passes them to its store.
    /// - Throws: any storage error; the simulation reports it as a failure.
    func commit(_ ops: [Op], encodings: [ArraySlice<UInt8>]?, changes: [Change], clockTime: UInt64) throws
    /// Makes every commit so far survive a power loss (fsync).
    /// - Throws: any storage error.
    func sync() throws
    /// Commits a power loss would lose now.
    var unsyncedCommitCount: Int { get }
    /// Power loss: the `kept` oldest unsynced commits reached the disk, the others are gone.
    /// - Returns: the number of commits lost.
    func crash(keepingUnsyncedCommits kept: Int) -> Int
    /// What the disk holds after a restart: every op, in stamp order, and the clock's packed time.
    /// - Throws: any storage error.
    func recover() throws -> RecoveredLog
    /// Releases the disk at the end of a run (closes files).
    func close()
}

/// What a replica reads back from its disk when it restarts.
struct RecoveredLog {
    /// Every op stored, in stamp order.
    var ops: [Op]
    /// The packed time of the greatest stamp the replica had made or seen (0 for a new replica).
    var clockTime: UInt64
    /// The materialized tree read back, when the disk keeps one.
    var tree: Value?
}

/// The simulator's own disk model: an op log whose commits are unsynced until ``sync()``.
final class SimulatedDisk: ReplicaDisk {
    private var synced: [Op] = []
    private var syncedClockTime: UInt64 = 0
    private var unsynced: [(ops: [Op], clockTime: UInt64)] = []

    var storesTree: Bool { false }

    func close() {}

    func commit(_ ops: [Op], encodings: [ArraySlice<UInt8>]?, changes: [Change], clockTime: UInt64) throws {
        unsynced.append((ops, clockTime))
    }

    func sync() throws {
        for commit in unsynced { keep(commit) }
        unsynced = []
    }

    var unsyncedCommitCount: Int { unsynced.count }

    func crash(keepingUnsyncedCommits kept: Int) -> Int {
        precondition(kept >= 0 && kept <= unsynced.count, "a crash keeps a prefix of the unsynced commits")
        for commit in unsynced.prefix(kept) { keep(commit) }
        let lost = unsynced.count - kept
        unsynced = []
        return lost
    }

    func recover() throws -> RecoveredLog {
        precondition(unsynced.isEmpty, "recover after a crash")
        synced.sort { $0.stamp < $1.stamp }
        return RecoveredLog(ops: synced, clockTime: syncedClockTime, tree: nil)
    }

    private func keep(_ commit: (ops: [Op], clockTime: UInt64)) {
        synced.append(contentsOf: commit.ops)
        syncedClockTime = max(syncedClockTime, commit.clockTime)
    }
}
