import WeftCore
import WeftStore

/// Everything waiting for group commit, in flat arrays: a write adds rows to them, not arrays of its
/// own, so that queuing and committing a write allocate little.
///
/// Entries are cut into batches at entry boundaries: a batch holds at most `opsMax` ops, and an
/// isolated entry (a compaction) is a batch of its own.
///
/// ```swift
/// var pending = PendingCommits()
/// pending.append(entry)
/// for batch in pending.batches(opsMax: 8192) { try store.commit(batch.storeBatch) }
/// ```
struct PendingCommits: Sendable {
    /// Where an entry ends in each array, and the clock's time when it was made.
    struct End: Sendable {
        var records: Int
        var preserves: Int
        var treeWrites: Int
        var statusChanges: Int
        var clockTime: UInt64
    }

    /// One batch to commit: its store batch and entry count.
    struct Batch {
        var storeBatch: StoreBatch
        var entries: Int
        var maintenance: CommitEntry.Maintenance?
    }

    private(set) var records: [OpRecord] = []
    private(set) var preserves: [Path] = []
    private(set) var treeWrites: [StoreBatch.TreeWrite] = []
    private(set) var statusChanges: [StoreBatch.StatusChange] = []
    private(set) var ends: [End] = []
    /// Isolated entries, by index in `ends`.
    private var isolated: [Int: CommitEntry] = [:]

    var isEmpty: Bool { ends.isEmpty }
    var entryCount: Int { ends.count }
    var opCount: Int { records.count }

    /// Appends an entry.
    mutating func append(_ entry: CommitEntry) {
        if entry.isIsolated { isolated[ends.count] = entry }
        records += entry.records
        preserves += entry.preserves
        treeWrites += entry.treeWrites
        statusChanges += entry.statusChanges
        closeEntry(clockTime: entry.clockTime)
    }

    /// Appends the rows of an entry one part at a time (the road of a local write); finish with
    /// ``closeEntry(clockTime:)``.
    mutating func append(record: OpRecord) { records.append(record) }
    mutating func append(preserve: Path) { preserves.append(preserve) }
    mutating func append(treeWrite: StoreBatch.TreeWrite) { treeWrites.append(treeWrite) }
    mutating func append(statusChange: StoreBatch.StatusChange) { statusChanges.append(statusChange) }

    /// Ends the entry whose rows were appended since the last one ended.
    mutating func closeEntry(clockTime: UInt64) {
        precondition(ends.last.map { $0.clockTime <= clockTime } ?? true, "entries come in clock order")
        ends.append(
            End(
                records: records.count, preserves: preserves.count,
                treeWrites: treeWrites.count, statusChanges: statusChanges.count, clockTime: clockTime))
    }

    /// The batches that commit every entry, in order.
    func batches(opsMax: Int) -> [Batch] {
        precondition(opsMax >= 1, "a batch holds at least one op")
        var result: [Batch] = []
        var first = 0
        while first < ends.count {
            var last = first
            if isolated[first] == nil {
                while last + 1 < ends.count, isolated[last + 1] == nil,
                    ends[last + 1].records - start(of: first).records <= opsMax
                {
                    last += 1
                }
            }
            result.append(batch(first...last))
            first = last + 1
        }
        return result
    }

    private func start(of entry: Int) -> End {
        entry == 0
            ? End(records: 0, preserves: 0, treeWrites: 0, statusChanges: 0, clockTime: 0)
            : ends[entry - 1]
    }

    /// The batch of the entries in `range`.
    private func batch(_ range: ClosedRange<Int>) -> Batch {
        let from = start(of: range.lowerBound)
        let to = ends[range.upperBound]
        var batch = StoreBatch()
        batch.ops = Self.rows(records, from.records, to.records)
        batch.basePreserves = Self.rows(preserves, from.preserves, to.preserves)
        batch.treeWrites = Self.liveWrites(treeWrites[from.treeWrites..<to.treeWrites])
        batch.statusChanges = Self.rows(statusChanges, from.statusChanges, to.statusChanges)
        batch.clockTime = to.clockTime
        var maintenance: CommitEntry.Maintenance?
        if let entry = isolated[range.lowerBound] {
            precondition(range.count == 1, "an isolated entry is a batch of its own")
            batch.baseWrites = entry.baseWrites
            batch.peerVectors = entry.peerVectors
            batch.frontier = entry.frontier
            batch.compactedTouches = entry.compactedTouches
            maintenance = entry.maintenance
        }
        return Batch(
            storeBatch: batch, entries: range.count, maintenance: maintenance)
    }

    /// The rows `[from, to)` of `array`, without a copy when that is all of it.
    private static func rows<T>(_ array: [T], _ from: Int, _ to: Int) -> [T] {
        from == 0 && to == array.count ? array : Array(array[from..<to])
    }

    /// The tree writes without the one-row writes that a later write at the same path replaces.
    static func liveWrites(_ writes: ArraySlice<StoreBatch.TreeWrite>) -> [StoreBatch.TreeWrite] {
        guard writes.count > 1 else { return Array(writes) }
        var later = Set<Path>(minimumCapacity: writes.count)
        var live: [StoreBatch.TreeWrite] = []
        live.reserveCapacity(writes.count)
        for write in writes.reversed() {
            let replaced = !later.insert(write.path).inserted
            if replaced && write.replacesScalar { continue }
            live.append(write)
        }
        live.reverse()
        return live
    }
}
