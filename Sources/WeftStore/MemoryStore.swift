import Foundation
import WeftCore

/// A store held in memory that models a disk: what a commit writes is *unsynced* until it is synced,
/// and ``crash(keepingUnsyncedCommits:)`` drops what was not. For tests and the simulator.
///
/// With ``Durability/full`` every commit is synced before it returns. With ``Durability/normal`` commits
/// stay unsynced until ``checkpoint()``, ``close()``, or ``StoreLimits/memoryUnsyncedCommitsMax`` of them
/// pile up (as SQLite's WAL is synced at checkpoints). A crash keeps a prefix of the unsynced commits,
/// never part of one, which is what a write-ahead log allows.
///
/// ```swift
/// let store = MemoryStore(replica: id, durability: .normal)
/// try store.commit(batch)
/// store.crash()                  // the batch is gone
/// try store.commit(batch)
/// try store.checkpoint()
/// store.crash()                  // the batch stays
/// ```
///
/// Every method takes a lock, so calls from several threads are serialized (see ``Store`` for the
/// ownership rule).
public final class MemoryStore: Store, @unchecked Sendable {
    /// The durability of commits.
    public let durability: Durability
    /// The size of the simulated disk in bytes (see ``bytesOnDisk()``); nil for no limit.
    public let bytesMax: Int?
    /// The name used in errors, in place of a file path.
    public let name: String

    /// Which simulated file this store reads; a copy gets another one.
    private let fileID: UInt64
    private let lock = NSLock()
    /// What the simulated disk held at an earlier sync. What it holds after its last sync is this with
    /// `syncedSince` applied: only a crash needs that state, so it is built then, and commits are not
    /// applied a second time at every sync.
    private var syncedBase: MemoryState
    /// Commits synced since `syncedBase`, oldest first (at most ``StoreLimits/memorySyncedBacklogMax``).
    private var syncedSince: [StoreBatch] = []
    /// What the store shows: the synced state with `unsynced` applied.
    private var current: MemoryState
    /// Commits since the last sync, oldest first.
    private var unsynced: [StoreBatch] = []
    private var isClosed = false

    /// A new, empty store for replica `replica`.
    ///
    /// - Parameters:
    ///   - replica: the replica id of the new database.
    ///   - durability: when commits are synced.
    ///   - bytesMax: the size of the simulated disk; a commit that would outgrow it throws
    ///     ``StoreError/diskFull(path:operation:)``.
    ///   - fileID: names the simulated file (distinct files must have distinct ids).
    ///   - name: the name used in errors.
    public init(
        replica: ReplicaID, durability: Durability = .normal, bytesMax: Int? = nil, fileID: UInt64 = 1,
        name: String = "memory"
    ) {
        var generator = SeededGenerator(seed: replica.rawValue ^ fileID)
        let state = MemoryState(replica: replica, token: .random(using: &generator), boundFile: fileID)
        self.durability = durability
        self.bytesMax = bytesMax
        self.fileID = fileID
        self.name = name
        self.syncedBase = state
        self.current = state
    }

    private init(copying state: MemoryState, durability: Durability, bytesMax: Int?, fileID: UInt64, name: String) {
        self.durability = durability
        self.bytesMax = bytesMax
        self.fileID = fileID
        self.name = name
        self.syncedBase = state
        self.current = state
    }

    private func locked<T>(_ body: () throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        guard !isClosed else { throw StoreError.closed(path: name) }
        return try body()
    }

    // MARK: - Simulated disk

    /// Loses the commits that were not synced, as a power loss would, and leaves the store open as if
    /// restarted. `kept` of the oldest unsynced commits survive (the write-ahead log reached the disk
    /// that far); the simulator draws it.
    ///
    /// ```swift
    /// let lost = store.crash(keepingUnsyncedCommits: 1)
    /// ```
    /// - Returns: the number of commits lost.
    @discardableResult
    public func crash(keepingUnsyncedCommits kept: Int = 0) -> Int {
        precondition(kept >= 0, "a crash keeps zero or more commits")
        lock.lock()
        defer { lock.unlock() }
        let lost = unsynced.count - min(kept, unsynced.count)
        unsynced.removeLast(lost)
        syncLocked()
        foldSyncedLocked()
        current = syncedBase
        isClosed = false
        return lost
    }

    /// Number of commits that a crash would lose now.
    public var unsyncedCommitCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return unsynced.count
    }

    /// A store over a byte-for-byte copy of this store's file (as `cp` would make it, page cache
    /// included). The copy detects that it is one: its instance is ``InstanceState/copied(reason:)``.
    public func copyFile(name: String? = nil) -> MemoryStore {
        lock.lock()
        defer { lock.unlock() }
        let copyID = fileID &* 0x9E37_79B9_7F4A_7C15 &+ 1
        return MemoryStore(
            copying: current, durability: durability, bytesMax: bytesMax, fileID: copyID,
            name: name ?? self.name + "-copy")
    }

    /// Opens a closed store again, with everything it synced at close.
    public func reopen() {
        lock.lock()
        defer { lock.unlock() }
        isClosed = false
    }

    /// Marks the unsynced commits synced. Call with the lock held.
    private func syncLocked() {
        syncedSince += unsynced
        unsynced = []
        if syncedSince.count >= StoreLimits.memorySyncedBacklogMax { foldSyncedLocked() }
    }

    /// Brings `syncedBase` up to the last sync. Call with the lock held.
    private func foldSyncedLocked() {
        for batch in syncedSince { syncedBase.apply(batch) }
        syncedSince = []
    }

    private var instanceLocked: InstanceState {
        current.boundFile == fileID
            ? .original
            : .copied(reason: "the data was made in simulated file \(current.boundFile), this is file \(fileID)")
    }

    // MARK: - Store

    public var identity: StoreIdentity {
        lock.lock()
        defer { lock.unlock() }
        return StoreIdentity(
            replica: current.replica, clockTime: current.clockTime, instanceToken: current.token,
            schemaVersion: SQLiteSchema.version, instance: instanceLocked)
    }

    public var logMarks: LogMarks {
        lock.lock()
        defer { lock.unlock() }
        return current.marks
    }

    public func commit(_ batch: StoreBatch) throws {
        try locked {
            if case .copied(let reason) = instanceLocked { throw StoreError.copiedDatabase(path: name, reason: reason) }
            if bytesMax != nil { current.settleTree() }
            try current.check(batch, bytesMax: bytesMax, location: name)
            current.apply(batch)
            unsynced.append(batch)
            if durability == .full || unsynced.count >= StoreLimits.memoryUnsyncedCommitsMax { syncLocked() }
        }
    }

    public func ops(from origin: ReplicaID, after sequence: UInt64, limit: Int) throws -> [StoredOp] {
        precondition(limit >= 1 && limit <= StoreLimits.opsPerQueryMax, "query between 1 and opsPerQueryMax ops")
        return try locked {
            let list = current.log[origin] ?? []
            let start = current.firstEntry(in: list, above: sequence)
            return list[start..<min(list.count, start + limit)].map { current.stored($0) }
        }
    }

    public func ops(after position: LogPosition?, limit: Int) throws -> [StoredOp] {
        precondition(limit >= 1 && limit <= StoreLimits.opsPerQueryMax, "query between 1 and opsPerQueryMax ops")
        return try locked {
            var page: [StoredOp] = []
            let origins = current.log.keys.sorted {
                LogPosition(origin: $0, sequence: 0) < LogPosition(origin: $1, sequence: 0)
            }
            for origin in origins {
                let list = current.log[origin] ?? []
                var start = 0
                if let position {
                    guard LogPosition(origin: origin, sequence: .max) > position else { continue }
                    if origin == position.origin { start = current.firstEntry(in: list, above: position.sequence) }
                }
                for entry in list[start...] {
                    guard page.count < limit else { return page }
                    page.append(current.stored(entry))
                }
            }
            return page
        }
    }

    public func allOps() throws -> [StoredOp] {
        try locked { current.entriesInStampOrder.map { current.stored($0) } }
    }

    public func op(_ stamp: Stamp) throws -> StoredOp? {
        try locked { current.entry(stamped: stamp).map { current.stored($0) } }
    }

    public func opCount() throws -> Int { try locked { current.opCount } }

    public func readTree(at path: Path) throws -> Value {
        try locked {
            current.settleTree()
            return current.tree.value(at: path)
        }
    }

    public func readTreeSlice(_ reader: inout TreeSliceReader, rowsMax: Int) throws {
        precondition(rowsMax >= 1 && !reader.isFinished, "read a positive number of rows of an unfinished tree")
        let tree = try locked {
            current.settleTree()
            return current.tree
        }
        reader.finish(with: tree)
    }

    public func treeLeafCount() throws -> Int {
        try locked {
            current.settleTree()
            return MemoryStore.leafCount(current.tree)
        }
    }

    private static func leafCount(_ value: Value) -> Int {
        switch value {
        case .null: return 0
        case .object(let children): return children.values.reduce(0) { $0 + leafCount($1) }
        default: return 1
        }
    }

    public func readBase(at path: Path) throws -> Value {
        try locked {
            current.settleTree()
            return BaseOverlay.read(current, at: path)
        }
    }

    public func baseOverrides() throws -> [BaseOverride] {
        try locked {
            current.overrides.map { BaseOverride(path: $0.key, value: $0.value) }.sorted { $0.path < $1.path }
        }
    }

    public func peerVectors() throws -> [ReplicaID: VersionVector] { try locked { current.peers } }

    public func members() throws -> [ReplicaID] { try locked { current.members } }

    public func compactedTouches() throws -> [CompactedTouch] { try locked { current.sortedTouches } }

    public func queryIndexes() throws -> [StoredQueryIndex] {
        try locked { current.queryIndexes.values.sorted { $0.id < $1.id } }
    }

    public func queryIndexEntries(of id: Int64) throws -> [QueryIndexEntry] {
        try locked { current.sortedQueryIndexEntries(of: id) }
    }

    public func requireOriginal() throws {
        try locked {
            if case .copied(let reason) = instanceLocked { throw StoreError.copiedDatabase(path: name, reason: reason) }
        }
    }

    public func reidentify(newID: ReplicaID) throws {
        try locked {
            var generator = SeededGenerator(seed: newID.rawValue ^ fileID ^ current.clockTime)
            syncLocked()
            current.reidentify(newID: newID, token: .random(using: &generator), boundFile: fileID)
            syncedBase = current
            syncedSince = []
        }
    }

    public func checkpoint() throws { try locked { syncLocked() } }

    public func vacuum() throws { try locked { syncLocked() } }

    public func bytesOnDisk() throws -> Int {
        try locked {
            current.settleTree()
            return current.bytes
        }
    }

    public func close() throws {
        try locked {
            syncLocked()
            isClosed = true
        }
    }
}
