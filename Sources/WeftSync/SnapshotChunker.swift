import WeftCore

/// A replica's state folded up to a frontier: what a peer behind the compaction horizon installs
/// before it receives the tail of the log.
///
/// ```swift
/// let snapshot = SyncSnapshot(value: base, frontier: compactedUpTo)
/// ```
public struct SyncSnapshot: Sendable, Hashable {
    /// The state after folding every op of `frontier`.
    public var value: Value
    /// The ops folded into `value`.
    public var frontier: VersionVector
    /// The compaction stamp of the sender: no op outside `frontier` is stamped at or below it (nil
    /// when nothing was compacted).
    public var stampFrontier: Stamp?
    /// Which origins' ops folded into `value` touched which paths: the transaction rule needs them
    /// for transactions stamped after the frontier.
    public var touches: [CompactedTouch]

    /// A snapshot from its state and frontiers.
    public init(
        value: Value, frontier: VersionVector, stampFrontier: Stamp? = nil, touches: [CompactedTouch] = []
    ) {
        self.value = value
        self.frontier = frontier
        self.stampFrontier = stampFrontier
        self.touches = touches
    }
}

/// Cuts a state into snapshot entries of bounded size, and measures and codes entries.
///
/// An object too large for one entry is split into entries that each carry some of its children
/// (or, for a child too large itself, into that child's entries), recursively. A scalar larger
/// than the budget (a long string) gets an entry of its own.
///
/// ```swift
/// let entries = SnapshotChunker.entries(of: state, entryBytesMax: 64 * 1024)
/// ```
enum SnapshotChunker {
    /// Entries that rebuild `value` when merged deeply into an empty tree; none for null.
    static func entries(of value: Value, entryBytesMax: Int) -> [SnapshotEntry] {
        precondition(entryBytesMax > 0, "entries need a positive budget")
        var entries: [SnapshotEntry] = []
        guard !value.isNull else { return entries }
        split(value, at: .root, size: OpCodec.byteCount(of: value), budget: entryBytesMax, into: &entries)
        return entries
    }

    private static func split(
        _ value: Value, at path: Path, size: Int, budget: Int, into entries: inout [SnapshotEntry]
    ) {
        guard case .object(let children) = value, size > budget else {
            entries.append(SnapshotEntry(path: path, value: value))
            return
        }
        // A group is an object holding some of the children: a tag, a count, then the members.
        func objectSize(count: Int, membersSize: Int) -> Int {
            1 + OpCodec.varintByteCount(UInt64(count)) + membersSize
        }
        var group: [Key: Value] = [:]
        var groupSize = 0
        for key in children.keys.sorted() {
            let child = children[key]!
            let childSize = OpCodec.byteCount(of: child)
            let memberSize = OpCodec.byteCount(ofText: key.text) + childSize
            if objectSize(count: 1, membersSize: memberSize) > budget {
                guard let childPath = try? path.child(key) else { preconditionFailure("a stored key is invalid") }
                split(child, at: childPath, size: childSize, budget: budget, into: &entries)
                continue
            }
            if !group.isEmpty, objectSize(count: group.count + 1, membersSize: groupSize + memberSize) > budget {
                entries.append(SnapshotEntry(path: path, value: .object(group)))
                group = [:]
                groupSize = 0
            }
            group[key] = child
            groupSize += memberSize
        }
        if !group.isEmpty { entries.append(SnapshotEntry(path: path, value: .object(group))) }
    }

    // MARK: - Sizes

    /// Size of an entry as written in a chunk.
    static func byteCount(of entry: SnapshotEntry) -> Int {
        OpCodec.byteCount(of: entry.path) + OpCodec.byteCount(of: entry.value)
    }

    // MARK: - Coding

    static func write(_ entry: SnapshotEntry, to writer: inout ByteWriter) {
        precondition(!entry.value.isNull, "a snapshot entry is never null")
        OpCodec.write(entry.path, to: &writer)
        OpCodec.write(entry.value, to: &writer)
    }

    static func readChunk(from reader: inout ByteReader) throws(SyncError) -> [SnapshotEntry] {
        try MessageCodec.decoding("snapshot chunk") {
            let count = try reader.readCount(max: Int(SyncLimits.snapshotEntriesMax), minimumBytes: 2)
            guard count > 0 else { throw SyncError(.malformedFrame, "a snapshot chunk carries no entry") }
            var entries: [SnapshotEntry] = []
            entries.reserveCapacity(count)
            for _ in 0..<count {
                let path = try OpCodec.readPath(from: &reader)
                let value = try OpCodec.readValue(from: &reader, depth: path.depth)
                guard !value.isNull else { throw SyncError(.malformedFrame, "a snapshot entry at \(path) is null") }
                entries.append(SnapshotEntry(path: path, value: value))
            }
            return entries
        }
    }

    /// Size of a compacted touch as written in a touch frame.
    static func byteCount(of touch: CompactedTouch) -> Int {
        OpCodec.byteCount(of: touch.path) + 8 + OpCodec.varintByteCount(touch.sequence)
    }

    static func write(_ touch: CompactedTouch, to writer: inout ByteWriter) {
        OpCodec.write(touch.path, to: &writer)
        writer.write(fixed: touch.origin.rawValue)
        writer.write(varint: touch.sequence)
    }

    static func readTouches(from reader: inout ByteReader) throws(SyncError) -> [CompactedTouch] {
        try MessageCodec.decoding("snapshot touches") {
            let count = try reader.readCount(max: Int(SyncLimits.snapshotEntriesMax), minimumBytes: 10)
            guard count > 0 else { throw SyncError(.malformedFrame, "a touch frame carries no touch") }
            var touches: [CompactedTouch] = []
            touches.reserveCapacity(count)
            for _ in 0..<count {
                let path = try OpCodec.readPath(from: &reader)
                guard let origin = ReplicaID(rawValue: try reader.readFixed()) else {
                    throw SyncError(.malformedFrame, "a compacted touch names replica id 0")
                }
                touches.append(CompactedTouch(path: path, origin: origin, sequence: try reader.readVarint()))
            }
            return touches
        }
    }

    /// Merges an entry into `tree`: objects meet objects child by child; anything else replaces.
    static func merge(_ value: Value, into tree: inout Value, at path: Path) {
        guard case .object(let children) = value, tree.value(at: path).isObject else {
            tree.write(value, at: path)
            return
        }
        for (key, child) in children {
            guard let childPath = try? path.child(key) else { preconditionFailure("a decoded key is invalid") }
            merge(child, into: &tree, at: childPath)
        }
    }
}

/// Rebuilds a snapshot from its chunks, checking each against what the begin message announced.
struct SnapshotAssembler: Sendable {
    let begin: SnapshotBegin
    private(set) var value: Value = .null
    private(set) var entryCount: UInt64 = 0
    private(set) var byteCount: UInt64 = 0
    private(set) var chunkCount: UInt64 = 0
    private(set) var touches: [CompactedTouch] = []

    /// - Throws: ``SyncErrorCode/limitExceeded`` when the announced snapshot is beyond the limits.
    init(_ begin: SnapshotBegin) throws(SyncError) {
        guard begin.touchCount <= SyncLimits.snapshotEntriesMax else {
            throw SyncError(.limitExceeded, "a snapshot of \(begin.touchCount) compacted touches exceeds the limit")
        }
        guard begin.entryCount <= SyncLimits.snapshotEntriesMax else {
            throw SyncError(.limitExceeded, "a snapshot of \(begin.entryCount) entries exceeds the limit")
        }
        guard begin.byteCount <= SyncLimits.snapshotBytesMax else {
            throw SyncError(.limitExceeded, "a snapshot of \(begin.byteCount) bytes exceeds the limit")
        }
        self.begin = begin
    }

    /// Adds a chunk's entries.
    /// - Throws: ``SyncErrorCode/snapshotMismatch`` when the chunk goes beyond the announced size.
    mutating func add(_ entries: [SnapshotEntry]) throws(SyncError) {
        for entry in entries {
            entryCount += 1
            byteCount += UInt64(SnapshotChunker.byteCount(of: entry))
            guard entryCount <= begin.entryCount, byteCount <= begin.byteCount else {
                throw SyncError(.snapshotMismatch, "a snapshot carries more than its announced entries or bytes")
            }
            SnapshotChunker.merge(entry.value, into: &value, at: entry.path)
        }
        chunkCount += 1
    }

    /// Adds a touch frame's touches, which come after every entry.
    /// - Throws: ``SyncErrorCode/snapshotMismatch`` when they come early or go beyond the announced count.
    mutating func add(_ touches: [CompactedTouch]) throws(SyncError) {
        guard entryCount == begin.entryCount else {
            throw SyncError(.snapshotMismatch, "compacted touches arrived before the snapshot's last entry")
        }
        guard UInt64(self.touches.count + touches.count) <= begin.touchCount else {
            throw SyncError(.snapshotMismatch, "a snapshot carries more than its announced compacted touches")
        }
        self.touches += touches
        chunkCount += 1
    }

    /// The complete snapshot.
    /// - Throws: ``SyncErrorCode/snapshotMismatch`` when entries are missing or the digest differs.
    func finish(digest: StateDigest) throws(SyncError) -> SyncSnapshot {
        guard entryCount == begin.entryCount, byteCount == begin.byteCount else {
            throw SyncError(
                .snapshotMismatch,
                "a snapshot ended after \(entryCount) of \(begin.entryCount) entries, \(byteCount) of \(begin.byteCount) bytes"
            )
        }
        guard UInt64(touches.count) == begin.touchCount else {
            throw SyncError(
                .snapshotMismatch, "a snapshot ended after \(touches.count) of \(begin.touchCount) compacted touches")
        }
        guard StateDigest(of: value) == digest else {
            throw SyncError(.snapshotMismatch, "the snapshot's digest does not match its content")
        }
        return SyncSnapshot(
            value: value, frontier: begin.frontier, stampFrontier: begin.stampFrontier, touches: touches)
    }
}
