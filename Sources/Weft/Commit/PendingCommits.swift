import WeftCore
import WeftStore

/// Everything waiting for group commit, in flat arrays: a write adds rows to them, not arrays of its
/// own, so that queuing and committing a write allocate little.
///
/// Entries are cut into batches at entry boundaries as they come: a batch holds at most `opsMax` ops,
/// and an isolated entry (a compaction) is a batch of its own.
///
/// ```swift
/// var pending = PendingCommits(opsMax: 8192)
/// pending.append(entry)
/// for batch in pending.batches() { try store.commit(batch.storeBatch) }
/// ```
struct PendingCommits: Sendable {
    /// Where an entry ends in each array of its segment, and the clock's time when it was made.
    struct End: Sendable {
        var records: Int
        var preserves: Int
        var treeWrites: Int
        var statusChanges: Int
        var indexWrites: Int
        var clockTime: UInt64
    }

    /// One batch to commit: its store batch and entry count.
    struct Batch {
        var storeBatch: StoreBatch
        var entries: Int
        var maintenance: CommitEntry.Maintenance?
        /// The durable vector rises to it once the batch commits (an installed snapshot).
        var durableVector: VersionVector?
    }

    /// The rows of the entries one batch commits: entries are appended to the last segment until it
    /// holds `opsMax` ops, so that committing hands each segment's arrays to the store as they are,
    /// without cutting or copying them.
    struct Segment: Sendable {
        var records: [OpRecord] = []
        var preserves: [Path] = []
        var treeWrites: [StoreBatch.TreeWrite] = []
        /// The hash of each tree write's path, taken when the write is queued (its path is then in the
        /// cache), for ``PendingCommits/liveWrites(_:hashes:)``.
        var treeWriteHashes: [Int] = []
        var statusChanges: [StoreBatch.StatusChange] = []
        var indexWrites: [StoreBatch.IndexWrite] = []
        var ends: [End] = []
        /// The entry of an isolated segment (a compaction): it is the segment's only entry.
        var isolated: CommitEntry?

        static let noEnd = End(records: 0, preserves: 0, treeWrites: 0, statusChanges: 0, indexWrites: 0, clockTime: 0)

        /// Moves the rows of the entry not yet closed (those after the last end) into a new segment.
        mutating func splitOpenEntry() -> Segment {
            let from = ends.last ?? Self.noEnd
            var moved = Segment()
            moved.records = Array(records[from.records...])
            moved.preserves = Array(preserves[from.preserves...])
            moved.treeWrites = Array(treeWrites[from.treeWrites...])
            moved.treeWriteHashes = Array(treeWriteHashes[from.treeWrites...])
            moved.statusChanges = Array(statusChanges[from.statusChanges...])
            moved.indexWrites = Array(indexWrites[from.indexWrites...])
            records.removeSubrange(from.records...)
            preserves.removeSubrange(from.preserves...)
            treeWrites.removeSubrange(from.treeWrites...)
            treeWriteHashes.removeSubrange(from.treeWrites...)
            statusChanges.removeSubrange(from.statusChanges...)
            indexWrites.removeSubrange(from.indexWrites...)
            return moved
        }
    }

    /// Most ops in one batch; an entry with more is a batch of its own.
    let opsMax: Int
    /// The segments in order; the last one takes new rows.
    private var segments: [Segment] = [Segment()]
    private(set) var entryCount = 0
    private(set) var opCount = 0
    private var lastClockTime: UInt64 = 0

    /// Empty pending rows, cut into batches of at most `opsMax` ops.
    init(opsMax: Int) {
        precondition(opsMax >= 1, "a batch holds at least one op")
        self.opsMax = opsMax
    }

    var isEmpty: Bool { entryCount == 0 }

    private var last: Int { segments.count - 1 }

    /// Appends an entry.
    mutating func append(_ entry: CommitEntry) {
        if entry.isIsolated, !segments[last].ends.isEmpty { segments.append(Segment()) }
        segments[last].records += entry.records
        segments[last].preserves += entry.preserves
        segments[last].treeWrites += entry.treeWrites
        segments[last].treeWriteHashes += entry.treeWrites.map(\.path.hashValue)
        segments[last].statusChanges += entry.statusChanges
        segments[last].indexWrites += entry.indexWrites
        if entry.isIsolated { segments[last].isolated = entry }
        closeEntry(clockTime: entry.clockTime)
    }

    /// Appends the rows of an entry one part at a time (the road of a local write); finish with
    /// ``closeEntry(clockTime:)``.
    mutating func append(record: OpRecord) { segments[last].records.append(record) }
    mutating func append(preserve: Path) { segments[last].preserves.append(preserve) }
    mutating func append(treeWrite: StoreBatch.TreeWrite) {
        segments[last].treeWrites.append(treeWrite)
        segments[last].treeWriteHashes.append(treeWrite.path.hashValue)
    }
    mutating func append(statusChange: StoreBatch.StatusChange) { segments[last].statusChanges.append(statusChange) }
    mutating func append(indexWrite: StoreBatch.IndexWrite) { segments[last].indexWrites.append(indexWrite) }

    /// Ends the entry whose rows were appended since the last one ended. An entry that would take its
    /// segment past `opsMax` starts a segment of its own; a segment that is full, or isolated, takes no
    /// more entries.
    mutating func closeEntry(clockTime: UInt64) {
        precondition(entryCount == 0 || lastClockTime <= clockTime, "entries come in clock order")
        lastClockTime = clockTime
        let previousEnd = segments[last].ends.last ?? Segment.noEnd
        let entryOps = segments[last].records.count - previousEnd.records
        if !segments[last].ends.isEmpty, segments[last].records.count > opsMax {
            let moved = segments[last].splitOpenEntry()
            segments.append(moved)
        }
        let segment = segments[last]
        segments[last].ends.append(
            End(
                records: segment.records.count, preserves: segment.preserves.count,
                treeWrites: segment.treeWrites.count, statusChanges: segment.statusChanges.count,
                indexWrites: segment.indexWrites.count, clockTime: clockTime))
        entryCount += 1
        opCount += entryOps
        if segments[last].isolated != nil || segments[last].records.count >= opsMax { segments.append(Segment()) }
    }

    /// The batches that commit every entry, in order: one per segment.
    func batches() -> [Batch] {
        var result: [Batch] = []
        result.reserveCapacity(segments.count)
        for segment in segments {
            guard let end = segment.ends.last else { continue }
            var batch = StoreBatch()
            batch.ops = segment.records
            batch.basePreserves = segment.preserves
            batch.treeWrites = Self.liveWrites(segment.treeWrites[...], hashes: segment.treeWriteHashes[...])
            batch.statusChanges = segment.statusChanges
            batch.indexWrites = segment.indexWrites
            batch.clockTime = end.clockTime
            var maintenance: CommitEntry.Maintenance?
            var durableVector: VersionVector?
            if let entry = segment.isolated {
                durableVector = entry.durableVector
                batch.replacedOps = entry.replacedOps
                batch.baseWrites = entry.baseWrites
                batch.peerVectors = entry.peerVectors
                batch.members = entry.members
                batch.frontier = entry.frontier
                batch.compactedTouches = entry.compactedTouches
                maintenance = entry.maintenance
            }
            result.append(
                Batch(
                    storeBatch: batch, entries: segment.ends.count, maintenance: maintenance,
                    durableVector: durableVector))
        }
        return result
    }

    /// The tree writes without the one-row writes that a later write at the same path replaces.
    static func liveWrites(_ writes: ArraySlice<StoreBatch.TreeWrite>) -> [StoreBatch.TreeWrite] {
        liveWrites(writes, hashes: writes.map(\.path.hashValue)[...])
    }

    /// ``liveWrites(_:)`` with the hash of each write's path given, in the same order.
    static func liveWrites(
        _ writes: ArraySlice<StoreBatch.TreeWrite>, hashes: ArraySlice<Int>
    ) -> [StoreBatch.TreeWrite] {
        precondition(writes.count == hashes.count, "one hash per write")
        guard writes.count > 1 else { return Array(writes) }
        // An open-addressing table of positions, newest first: paths are compared only when their hashes
        // match, and no path is copied into a set (a retain and a cache miss per write).
        var capacity = 1
        while capacity < writes.count * 2 { capacity <<= 1 }
        let mask = capacity - 1
        var slots = [Int](repeating: -1, count: capacity)
        var slotHashes = [Int](repeating: 0, count: capacity)
        var keep = [Bool](repeating: true, count: writes.count)
        var dropped = 0
        writes.withUnsafeBufferPointer { writes in
            for position in writes.indices.reversed() {
                let hash = hashes[hashes.startIndex + position]
                var slot = hash & mask
                var seen = false
                while slots[slot] >= 0 {
                    if slotHashes[slot] == hash, writes[slots[slot]].path == writes[position].path {
                        seen = true
                        break
                    }
                    slot = (slot + 1) & mask
                }
                if seen {
                    if writes[position].replacesScalar {
                        keep[position] = false
                        dropped += 1
                    }
                } else {
                    slots[slot] = position
                    slotHashes[slot] = hash
                }
            }
        }
        if dropped == 0 { return Array(writes) }
        var live: [StoreBatch.TreeWrite] = []
        live.reserveCapacity(writes.count - dropped)
        for (offset, index) in writes.indices.enumerated() where keep[offset] { live.append(writes[index]) }
        return live
    }
}
