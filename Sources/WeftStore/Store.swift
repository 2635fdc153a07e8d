import WeftCore

/// The persistence seam of a replica: the op log, the materialized tree, the compacted base, the
/// replica's identity, and what it knows of its peers.
///
/// Two implementations pass the same test suite: ``SQLiteStore`` (a file, through GRDB) and
/// ``MemoryStore`` (a simulated disk for tests and the simulator).
///
/// ## Threads
/// The API is synchronous. A store has one owner at a time (the replica's group-commit driver): every
/// batch of a replica goes through that owner, in order. The owner may change threads, and a reader
/// on another thread may call the read methods; each call is serialized with the others inside the
/// store, so no call sees half a commit. Two owners committing in turn would interleave their
/// batches, which the store cannot detect: don't.
///
/// ## Example
/// ```swift
/// let store: any Store = try SQLiteStore(path: "/var/lib/weft/app.sqlite")
/// try store.requireOriginal()
/// var batch = StoreBatch()
/// batch.ops = [OpRecord(op, status: .durable)]
/// batch.treeWrites = [.init(path: op.path, value: newValue)]
/// try store.commit(batch)
/// let user = try store.readTree(at: try Path("/users/alice"))
/// ```
public protocol Store: AnyObject, Sendable {
    /// The durability of commits.
    var durability: Durability { get }

    /// The replica's identity as last read or written.
    var identity: StoreIdentity { get }

    /// The frontier and status watermarks as last read or written.
    var logMarks: LogMarks { get }

    /// Writes everything in `batch` in one transaction (see ``StoreBatch`` for the order of its parts).
    ///
    /// When it returns, the batch is stored per ``durability``. When it throws, nothing of it is.
    /// - Throws: ``StoreError/copiedDatabase(path:reason:)`` until the copy is reidentified,
    ///   ``StoreError/opBelowFrontier(stamp:frontier:)``, ``StoreError/conflictingOp(origin:sequence:)``,
    ///   ``StoreError/diskFull(path:operation:)``, ``StoreError/closed(path:)`` and I/O errors.
    func commit(_ batch: StoreBatch) throws

    /// The ops of `origin` with a sequence above `sequence`, in sequence order, at most `limit` of them.
    ///
    /// - Precondition: `1 <= limit <= StoreLimits.opsPerQueryMax`.
    /// - Throws: ``StoreError/corruptOp(stamp:reason:)`` and I/O errors.
    func ops(from origin: ReplicaID, after sequence: UInt64, limit: Int) throws -> [StoredOp]

    /// The ops after `position` (from the first when nil) in log order, at most `limit` of them: the
    /// whole log a page at a time, each page continuing from the ``LogPosition`` of the last op of the
    /// one before. Log order is by origin, then sequence: not stamp order.
    ///
    /// - Precondition: `1 <= limit <= StoreLimits.opsPerQueryMax`.
    /// - Throws: ``StoreError/corruptOp(stamp:reason:)`` and I/O errors.
    func ops(after position: LogPosition?, limit: Int) throws -> [StoredOp]

    /// Every op in the log, in stamp order.
    /// - Throws: ``StoreError/corruptOp(stamp:reason:)`` and I/O errors.
    func allOps() throws -> [StoredOp]

    /// The op with `stamp`, or nil when the log does not hold it. It may read all of the stamp's
    /// origin's ops (the SQLite log is keyed by origin and sequence).
    /// - Throws: ``StoreError/corruptOp(stamp:reason:)`` and I/O errors.
    func op(_ stamp: Stamp) throws -> StoredOp?

    /// Number of ops in the log.
    func opCount() throws -> Int

    /// The subtree of the materialized tree at `path` (`.null` when absent); the root gives the whole tree.
    /// - Throws: ``StoreError/corrupt(path:reason:)`` and I/O errors.
    func readTree(at path: Path) throws -> Value

    /// Reads the next slice of at most `rowsMax` rows of the whole tree into `reader`, which is
    /// finished after the last one (see ``TreeSliceReader``). Other calls may run between slices;
    /// commits must not.
    ///
    /// - Precondition: `rowsMax >= 1` and `reader` is not finished.
    /// - Throws: ``StoreError/corrupt(path:reason:)`` and I/O errors.
    func readTreeSlice(_ reader: inout TreeSliceReader, rowsMax: Int) throws

    /// Number of scalar leaves in the materialized tree (one stored row each).
    func treeLeafCount() throws -> Int

    /// The subtree of the compacted base at `path`: the tree, except where an override records the base.
    /// - Throws: ``StoreError/corrupt(path:reason:)`` and I/O errors.
    func readBase(at path: Path) throws -> Value

    /// The overrides where the base differs from the tree, sorted by path; empty when they agree.
    func baseOverrides() throws -> [BaseOverride]

    /// The stored version vector of each known replica.
    func peerVectors() throws -> [ReplicaID: VersionVector]

    /// The membership list, sorted.
    func members() throws -> [ReplicaID]

    /// The touches of every op compaction folded into the base, one per (path, origin) with the
    /// greatest sequence committed there, sorted by path then origin. Pass them to
    /// ``MergeEngine/init(registry:base:frontier:baseVector:compactedTouches:capturesChanges:)`` when
    /// reopening, so that transactions are decided as by a replica that never restarted.
    ///
    /// ```swift
    /// let engine = MergeEngine(
    ///     base: base, frontier: store.logMarks.frontier, baseVector: folded,
    ///     compactedTouches: try store.compactedTouches())
    /// ```
    /// - Throws: ``StoreError/corrupt(path:reason:)`` and I/O errors.
    func compactedTouches() throws -> [CompactedTouch]

    /// The query indexes defined (see ``StoreBatch/IndexWrite``), by id.
    func queryIndexes() throws -> [StoredQueryIndex]

    /// The entries of one query index, in order (empty for an id not defined).
    func queryIndexEntries(of id: Int64) throws -> [QueryIndexEntry]

    /// Throws unless the database is the original of its identity. Call it before syncing.
    /// - Throws: ``StoreError/copiedDatabase(path:reason:)``.
    func requireOriginal() throws

    /// Gives the database a new replica id and instance token, and makes it the original again.
    ///
    /// Our ops made under the old id keep their statuses and stay in the log as another origin's ops.
    /// The change is synced before the call returns.
    func reidentify(newID: ReplicaID) throws

    /// Syncs what was committed and folds the write-ahead log into the database file, truncating it.
    func checkpoint() throws

    /// Rebuilds the database file without free pages (after compaction), then checkpoints.
    func vacuum() throws

    /// Bytes the database takes on disk, write-ahead log included.
    func bytesOnDisk() throws -> Int

    /// Closes the store and releases its lock. Later calls throw ``StoreError/closed(path:)``.
    func close() throws
}

extension Store {
    /// The whole materialized tree.
    ///
    /// ```swift
    /// let state = try store.readTree()
    /// ```
    public func readTree() throws -> Value { try readTree(at: .root) }
}

/// A place where the compacted base differs from the materialized tree: the base's whole subtree there.
///
/// ```swift
/// for override in try store.baseOverrides() { print(override.path, override.value.jsonString()) }
/// ```
public struct BaseOverride: Sendable, Hashable {
    /// Where the base differs.
    public var path: Path
    /// The base's subtree at `path` (`.null` when the base has nothing there).
    public var value: Value

    /// An override from its parts.
    public init(path: Path, value: Value) {
        self.path = path
        self.value = value
    }
}

/// The place of an op in the log as the store orders it for paging: its origin, then its sequence.
///
/// ```swift
/// var position: LogPosition?
/// while case let page = try store.ops(after: position, limit: 1000), let last = page.last {
///     position = LogPosition(of: last.op)
/// }
/// ```
public struct LogPosition: Sendable, Hashable, Comparable {
    public var origin: ReplicaID
    public var sequence: UInt64

    public init(origin: ReplicaID, sequence: UInt64) {
        self.origin = origin
        self.sequence = sequence
    }

    /// The position of `op`.
    public init(of op: Op) { self.init(origin: op.origin, sequence: op.sequence) }

    /// Log order: the origin's id as SQLite compares the signed 64-bit integer it is stored as, then the
    /// sequence.
    public static func < (lhs: LogPosition, rhs: LogPosition) -> Bool {
        let (left, right) = (Int64(bitPattern: lhs.origin.rawValue), Int64(bitPattern: rhs.origin.rawValue))
        return left != right ? left < right : lhs.sequence < rhs.sequence
    }
}
