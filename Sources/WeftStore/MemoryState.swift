import WeftCore

/// Everything a ``MemoryStore`` holds, as a value: the state its simulated disk would show.
///
/// A batch is checked first (``check(_:bytesMax:location:)``) and then applied (``apply(_:)``), which
/// cannot fail, so a refused batch changes nothing and a replay after a crash is exact.
struct MemoryState: Sendable {
    /// One op of the log.
    struct Entry: Sendable {
        var op: Op
        var bytes: Int
        var status: OpStatus?
    }

    /// An origin and sequence: the slot of one op.
    struct Slot: Hashable {
        var origin: ReplicaID
        var sequence: UInt64
    }

    var replica: ReplicaID
    var clockTime: UInt64 = 0
    var token: InstanceToken
    /// The simulated file this state was made in (a copy lives in another).
    var boundFile: UInt64
    var marks = LogMarks()
    /// The log: each origin's ops, by ascending sequence. An op is found by its origin (its stamp's
    /// replica) and sequence, so one table serves lookups by stamp, by slot and in log order.
    var log: [ReplicaID: [Entry]] = [:]
    /// Number of ops in `log`.
    var opCount = 0
    /// The tree, without `treeWritesPending`: ``settleTree()`` applies them, and every read of the tree
    /// or of its size comes after one.
    private(set) var tree: Value = .null
    /// Tree writes committed and not yet applied to `tree`, oldest first: only reads need them applied,
    /// so a store that is never read back (most of the simulator's) never builds its tree.
    private var treeWritesPending: [StoreBatch.TreeWrite] = []
    var overrides: [Path: Value] = [:]
    var peers: [ReplicaID: VersionVector] = [:]
    var members: [ReplicaID] = []
    /// Touches of compacted ops: per (path, origin), the greatest sequence.
    var touches: [CompactedTouchSlot: UInt64] = [:]
    /// Query indexes by id, and each one's entries (the ordering value of each child key).
    var queryIndexes: [Int64: StoredQueryIndex] = [:]
    var queryIndexEntries: [Int64: [Key: Value]] = [:]
    /// Size model (see ``TreeRows/bytes(of:textBytes:)``), kept up to date by every write.
    var opBytes = 0
    var treeBytes = 0

    init(replica: ReplicaID, token: InstanceToken, boundFile: UInt64) {
        self.replica = replica
        self.token = token
        self.boundFile = boundFile
    }

    /// Bytes the state would take on disk (after ``settleTree()``).
    var bytes: Int {
        precondition(treeWritesPending.isEmpty, "settle the tree before measuring it")
        let overrideBytes = overrides.reduce(0) { $0 + $1.key.description.utf8.count + OpCodec.byteCount(of: $1.value) }
        let peerBytes = peers.values.reduce(0) { $0 + 8 + 9 * $1.entries.count }
        let touchBytes = touches.keys.reduce(0) { $0 + TreeRows.textBytes($1.path) + 16 }
        return opBytes + treeBytes + overrideBytes + peerBytes + 8 * members.count + touchBytes
    }

    // MARK: - Checking a batch

    /// Throws when `batch` breaks a rule; the state is untouched either way.
    func check(_ batch: StoreBatch, bytesMax: Int?, location: String) throws {
        try batch.checkOps(frontier: marks.frontier)
        // New ops may not take a sequence the log, or another op of the batch, already gives its origin.
        var claimed: [Slot: Stamp] = [:]
        if batch.ops.count > 1 { claimed.reserveCapacity(batch.ops.count) }
        for record in batch.ops {
            let op = record.op
            let held = stamp(of: op.origin, sequence: op.sequence)
            if held == op.stamp { continue }
            let slot = Slot(origin: op.origin, sequence: op.sequence)
            let existing = batch.ops.count > 1 ? claimed.updateValue(op.stamp, forKey: slot) : nil
            if let existing = existing ?? held, existing != op.stamp {
                throw StoreError.conflictingOp(origin: op.origin, sequence: op.sequence)
            }
        }
        guard let bytesMax else { return }
        var growth = [batch.ops, batch.replacedOps].joined().reduce(0) { $0 + $1.encoded.count + StampKey.count }
        for write in batch.treeWrites {
            growth += TreeRows.bytes(of: write.value, textBytes: TreeRows.textBytes(write.path))
        }
        for touch in batch.compactedTouches
        where touches[CompactedTouchSlot(path: touch.path, origin: touch.origin)] == nil {
            growth += TreeRows.textBytes(touch.path) + 16
        }
        if bytes + growth > bytesMax { throw StoreError.diskFull(path: location, operation: "committing a batch") }
    }

    /// The stamp of `origin`'s op `sequence`, if the log holds it.
    func stamp(of origin: ReplicaID, sequence: UInt64) -> Stamp? {
        guard let list = log[origin], let index = index(in: list, of: sequence) else { return nil }
        return list[index].op.stamp
    }

    /// Where `list` holds the op `sequence`, if it does.
    func index(in list: [Entry], of sequence: UInt64) -> Int? {
        let index = firstEntry(in: list, atOrAbove: sequence)
        return index < list.count && list[index].op.sequence == sequence ? index : nil
    }

    /// Index of the first entry whose sequence is above `sequence`.
    func firstEntry(in list: [Entry], above sequence: UInt64) -> Int {
        sequence == .max ? list.count : firstEntry(in: list, atOrAbove: sequence + 1)
    }

    /// Index of the first entry whose sequence is `sequence` or above.
    func firstEntry(in list: [Entry], atOrAbove sequence: UInt64) -> Int {
        if let last = list.last, last.op.sequence < sequence { return list.count }
        return list.partitionPoint { $0.op.sequence >= sequence }
    }

    /// The entry of the op stamped `stamp`, if the log holds it.
    func entry(stamped stamp: Stamp) -> Entry? {
        log[stamp.replica]?.first { $0.op.stamp == stamp }
    }

    /// Every op of the log, in stamp order.
    var entriesInStampOrder: [Entry] {
        log.values.joined().sorted { $0.op.stamp < $1.op.stamp }
    }

    // MARK: - Applying a batch

    /// Applies the tree writes committed since the last call to the tree.
    mutating func settleTree() {
        for write in treeWritesPending { writeTree(write.value, at: write.path) }
        treeWritesPending = []
    }

    /// Applies a batch that passed ``check(_:bytesMax:location:)``.
    mutating func apply(_ batch: StoreBatch) {
        if !batch.basePreserves.isEmpty { settleTree() }
        for path in batch.basePreserves { BaseOverlay.preserve(&self, at: path) }
        for record in batch.replacedOps {
            remove(origin: record.op.origin, sequence: record.op.sequence)
            insert(record)
        }
        for record in batch.ops { insert(record) }
        treeWritesPending += batch.treeWrites
        if !batch.baseWrites.isEmpty || treeWritesPending.count >= StoreLimits.memoryTreeWritesPendingMax {
            settleTree()
        }
        for write in batch.baseWrites { BaseOverlay.apply(write, to: &self) }
        for case .op(let stamp, let sequence, let status) in batch.statusChanges {
            // The list is read in a closure and changed after it: no copy of it is held while it changes.
            let found = log[stamp.replica].flatMap { list in
                index(in: list, of: sequence).flatMap {
                    list[$0].op.stamp == stamp && list[$0].status != nil ? $0 : nil
                }
            }
            if let found { log[stamp.replica]?[found].status = status }
        }
        marks.apply(batch.statusChanges)
        if let time = batch.clockTime { clockTime = max(clockTime, time) }
        for (peer, vector) in batch.peerVectors { peers[peer] = vector }
        if let list = batch.members { members = Array(Set(list)).sorted() }
        for touch in batch.compactedTouches {
            let slot = CompactedTouchSlot(path: touch.path, origin: touch.origin)
            touches[slot] = max(touches[slot] ?? 0, touch.sequence)
        }
        if let frontier = batch.frontier, marks.frontier.map({ frontier > $0 }) ?? true { compact(through: frontier) }
        for write in batch.indexWrites { apply(write) }
    }

    private mutating func apply(_ write: StoreBatch.IndexWrite) {
        switch write {
        case .define(let index):
            queryIndexes[index.id] = index
            queryIndexEntries[index.id] = [:]
        case .drop(let id):
            queryIndexes.removeValue(forKey: id)
            queryIndexEntries.removeValue(forKey: id)
        case let .insert(id, entry): queryIndexEntries[id]?[entry.key] = entry.value
        case let .delete(id, entry):
            if queryIndexEntries[id]?[entry.key] == entry.value { queryIndexEntries[id]?.removeValue(forKey: entry.key) }
        }
    }

    /// The entries of a query index, in order.
    func sortedQueryIndexEntries(of id: Int64) -> [QueryIndexEntry] {
        (queryIndexEntries[id] ?? [:]).map { QueryIndexEntry(value: $0.value, key: $0.key) }
            .sorted(by: QueryIndexEntry.precedes)
    }

    /// Adds an op (a batch that passed the check holds no other op in its slot); an op held already
    /// changes nothing.
    private mutating func insert(_ record: OpRecord) {
        let op = record.op
        let entry = Entry(op: op, bytes: record.encoded.count + StampKey.count, status: record.status)
        // The list is read in a closure and changed after it: no copy of it is held while it changes.
        let (position, held) =
            log[op.origin].map { list in
                let position = firstEntry(in: list, atOrAbove: op.sequence)
                return (position, position < list.count && list[position].op.sequence == op.sequence)
            } ?? (0, false)
        if held { return }
        log[op.origin, default: []].insert(entry, at: position)
        opBytes += entry.bytes
        opCount += 1
    }

    private mutating func remove(origin: ReplicaID, sequence: UInt64) {
        guard let index = log[origin].flatMap({ index(in: $0, of: sequence) }) else { return }
        opBytes -= log[origin]?.remove(at: index).bytes ?? 0
        opCount -= 1
        if log[origin]?.isEmpty == true { log[origin] = nil }
    }

    private mutating func writeTree(_ value: Value, at path: Path) {
        let text = TreeRows.textBytes(path)
        // One walk down: the old value's rows go; a scalar above the path gives way to an object
        // (when the value is not null), and its row goes.
        var node = tree
        var nodeText = 0
        for key in path.keys {
            guard case .object(let children) = node else {
                if !value.isNull { treeBytes -= TreeRows.bytes(of: node, textBytes: nodeText) }
                node = .null
                break
            }
            node = children[key] ?? .null
            nodeText += 1 + key.text.utf8.count
        }
        treeBytes -= TreeRows.bytes(of: node, textBytes: text)
        tree.write(value, at: path)
        treeBytes += TreeRows.bytes(of: value, textBytes: text)
        precondition(treeBytes >= 0, "the tree size model went negative")
    }

    private mutating func compact(through frontier: Stamp) {
        marks.frontier = frontier
        for origin in Array(log.keys) {
            guard let list = log[origin], list.contains(where: { $0.op.stamp <= frontier }) else { continue }
            let kept = list.filter { $0.op.stamp > frontier }
            for entry in list where entry.op.stamp <= frontier { opBytes -= entry.bytes }
            opCount -= list.count - kept.count
            log[origin] = kept.isEmpty ? nil : kept
        }
        precondition(opBytes >= 0, "the op size model went negative")
    }

    /// Gives the state a new identity, writing the old identity's status watermarks into its ops.
    mutating func reidentify(newID: ReplicaID, token: InstanceToken, boundFile: UInt64) {
        for index in (log[replica] ?? []).indices {
            guard let entry = log[replica]?[index] else { continue }
            log[replica]?[index].status = marks.status(
                recorded: entry.status, origin: replica, sequence: entry.op.sequence, local: replica)
        }
        replica = newID
        self.token = token
        self.boundFile = boundFile
        marks.acknowledgedThrough = 0
        marks.stableThrough = 0
    }

    /// The stored touches, sorted by path then origin.
    var sortedTouches: [CompactedTouch] {
        touches.map { CompactedTouch(path: $0.key.path, origin: $0.key.origin, sequence: $0.value) }.sortedForStore()
    }

    /// The stored form of an entry, with its status as reported.
    func stored(_ entry: Entry) -> StoredOp {
        let op = entry.op
        return StoredOp(
            op: op,
            status: marks.status(recorded: entry.status, origin: op.origin, sequence: op.sequence, local: replica))
    }
}

// MARK: - BaseOverlayHost

extension MemoryState: BaseOverlayHost {
    typealias Failure = Never

    func hasOverrides() -> Bool { !overrides.isEmpty }

    func treeSubtree(at path: Path) -> Value {
        precondition(treeWritesPending.isEmpty, "settle the tree before reading it")
        return tree.value(at: path)
    }

    func override(covering path: Path) -> BaseOverride? {
        var candidate: Path? = path
        while let current = candidate {
            if let value = overrides[current] { return BaseOverride(path: current, value: value) }
            candidate = current.parent
        }
        return nil
    }

    func scalarAncestor(of path: Path) -> Path? {
        precondition(treeWritesPending.isEmpty, "settle the tree before reading it")
        var node = tree
        for (depth, key) in path.keys.enumerated() {
            guard case .object(let children) = node else {
                if node.isNull { return nil }
                var ancestor = path
                for _ in depth..<path.depth { ancestor = ancestor.parent ?? .root }
                return ancestor
            }
            node = children[key] ?? .null
        }
        return nil
    }

    func overrides(below path: Path) -> [BaseOverride] {
        overrides.compactMap { entry in
            entry.key != path && path.isAncestorOrSelf(of: entry.key)
                ? BaseOverride(path: entry.key, value: entry.value) : nil
        }
        .sorted { $0.path < $1.path }
    }

    mutating func putOverride(_ value: Value, at path: Path) { overrides[path] = value }

    mutating func deleteOverrides(atOrBelow path: Path) {
        for key in overrides.keys where path.isAncestorOrSelf(of: key) { overrides.removeValue(forKey: key) }
    }
}
