import CSQLiteTuning
import Foundation
import GRDB
import GRDBSQLite
import WeftCore

/// The store of a replica in one SQLite file, through GRDB: WAL journal, exclusive access, and group
/// commits that write a whole ``StoreBatch`` in one transaction.
///
/// Opening takes the lock file `<path>.lock` (a second opener gets ``StoreError/inUse(path:pid:)``),
/// checks that the file is a Weft database of a known schema, migrates it, and checks that it is the
/// original of its identity (see ``StoreIdentity/instance``).
///
/// ```swift
/// let store = try SQLiteStore(path: "/var/lib/weft/app.sqlite", options: .init(durability: .full))
/// defer { try? store.close() }
/// try store.commit(batch)
/// ```
///
/// Every call is serialized inside the store (see ``Store`` for the ownership rule).
public final class SQLiteStore: Store, @unchecked Sendable {
    /// The database file.
    public let path: String
    /// The durability of commits (`PRAGMA synchronous`).
    public let durability: Durability
    /// The inodes of the file opened and of its write-ahead log: each commit checks that `path` and
    /// `path-wal` still name them.
    let fileInode: UInt64
    let walInode: UInt64?

    /// Guards everything below; GRDB's queue serializes the connection itself.
    private let lock = NSLock()
    private var queue: DatabaseQueue?
    private var fileLock: FileLock?
    /// The identity and marks as stored; read and written inside ``withDatabase(_:_:)`` only.
    var cachedIdentity: StoreIdentity
    var cachedMarks: LogMarks

    /// Opens the database at `path`, creating it when the file is missing or empty.
    ///
    /// ```swift
    /// let store = try SQLiteStore(path: dir + "/weft.sqlite")
    /// ```
    /// - Throws: ``StoreError/inUse(path:pid:)``, ``StoreError/notADatabase(path:)``,
    ///   ``StoreError/foreignDatabase(path:reason:)``, ``StoreError/newerSchema(path:found:supported:)``,
    ///   ``StoreError/readOnlyLocation(path:reason:)``, ``StoreError/cannotOpen(path:reason:)``,
    ///   ``StoreError/corrupt(path:reason:)`` and I/O errors. A failed open changes nothing in the file.
    public init(path: String, options: StoreOptions = StoreOptions()) throws {
        self.path = path
        self.durability = options.durability
        SQLiteStore.tuneLibrary()
        guard !path.isEmpty else { throw StoreError.cannotOpen(path: path, reason: "the path is empty") }
        // Before the lock file is made beside it: SQLite would fail on it, or write into a device or pipe.
        if let kind = FileStat.irregularKind(path) {
            throw StoreError.cannotOpen(path: path, reason: "it is \(kind); give the path of a database file")
        }
        let fileLock = try FileLock.acquire(databasePath: path)
        do {
            // Before SQLite sees it: it takes a one-byte file for an empty one and writes a database over it.
            let size = FileStat.size(path)
            guard size == 0 || size >= StoreLimits.databaseBytesMin else { throw StoreError.notADatabase(path: path) }
            let queue = try DatabaseQueue(path: path, configuration: SQLiteStore.configuration(path: path))
            do {
                try SQLiteStore.prepare(queue, path: path, options: options)
                try SQLiteSchema.migrator.migrate(queue)
                fileInode = try FileStat.inode(path)
                // SQLite opened the log with the first read, and holds it open until it closes.
                walInode = try? FileStat.inode(path + "-wal")
                (cachedIdentity, cachedMarks) = try queue.inDatabase { db in
                    try SQLiteStore.loadIdentity(db, path: path, options: options)
                }
            } catch {
                try? queue.close()
                throw error
            }
            self.queue = queue
            self.fileLock = fileLock
        } catch {
            fileLock.release()
            throw StoreError.from(error, path: path, operation: "opening the database")
        }
    }

    /// Process-wide SQLite settings, made once before the first connection: memory statistics off
    /// (they take a global mutex on every allocation and free inside SQLite). When SQLite was already
    /// initialized by another connection of the process, it keeps its settings; that is harmless.
    private static let libraryTuning: Void = { _ = weft_sqlite_disable_memory_statistics() }()

    /// Applies ``libraryTuning`` (once per process).
    public static func tuneLibrary() { _ = libraryTuning }

    private static func configuration(path: String) -> Configuration {
        var configuration = Configuration()
        configuration.label = "weft.store"
        configuration.foreignKeysEnabled = false
        configuration.journalMode = .default
        configuration.busyMode = .timeout(Double(StoreLimits.busyTimeoutMilliseconds) / 1000)
        // The lock file already keeps other processes out; exclusive locking keeps out those that ignore
        // it (or reach the file by another name) and lets WAL work without a shared-memory file. It must
        // come before GRDB's first read of the file: set after it, a file already in WAL mode keeps a
        // `-shm` index that other processes share.
        configuration.prepareDatabase { db in
            // A file that cannot be written fails that first read in exclusive WAL mode ("disk I/O error").
            try requireWritable(db, path: path)
            try db.execute(sql: "PRAGMA locking_mode = EXCLUSIVE")
        }
        return configuration
    }

    /// SQLite falls back to read-only when the file cannot be written; a store must write.
    private static func requireWritable(_ db: Database, path: String) throws {
        guard sqlite3_db_readonly(db.sqliteConnection, "main") == 1 else { return }
        // It also does so, once it read the header, for a file whose header asks for a newer file format
        // than it writes: when the file itself can be written, the header is what is wrong.
        guard !FileStat.isWritable(path) else {
            throw StoreError.corrupt(
                path: path,
                reason: "its header asks for read-only access (its file format bytes are damaged, "
                    + "or from a newer SQLite)")
        }
        throw StoreError.readOnlyLocation(path: path, reason: "the database file cannot be written")
    }

    /// Checks what the file holds, then sets the connection up. Nothing is written before the checks pass.
    private static func prepare(_ queue: DatabaseQueue, path: String, options: StoreOptions) throws {
        try queue.inDatabase { db in
            try requireWritable(db, path: path)
            if try checkFormat(db, path: path) == .empty {
                // Only possible before the first table exists, and not in WAL mode.
                try db.execute(sql: "PRAGMA page_size = \(StoreLimits.pageBytes)")
            }
            let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
            guard mode?.lowercased() == "wal" else {
                throw StoreError.io(
                    path: path, operation: "enabling write-ahead logging", message: "journal mode stayed \(mode ?? "?")"
                )
            }
            try db.execute(sql: "PRAGMA synchronous = \(options.durability == .full ? "FULL" : "NORMAL")")
            try db.execute(sql: "PRAGMA cache_size = -\(StoreLimits.pageCacheKibibytes)")
            if let pages = options.pageCountMax {
                precondition(pages > 0, "a page limit is positive")
                _ = try Int.fetchOne(db, sql: "PRAGMA max_page_count = \(pages)")
            }
        }
    }

    /// What an openable file holds.
    private enum Format { case empty, weft }

    /// Refuses files Weft did not make, and Weft files from a newer schema.
    private static func checkFormat(_ db: Database, path: String) throws -> Format {
        let application = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
        let version = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
        if application == SQLiteSchema.applicationID {
            // The first migration sets the id, and GRDB records it: without that record the migrator would
            // run over whatever the file holds.
            let recorded =
                try db.tableExists("grdb_migrations")
                && (try Int.fetchOne(db, sql: "SELECT count(*) FROM grdb_migrations") ?? 0) > 0
            guard recorded else {
                throw StoreError.foreignDatabase(
                    path: path, reason: "it has Weft's application id but no record of Weft's schema")
            }
            let superseded = try SQLiteSchema.migrator.hasBeenSuperseded(db)
            if version > SQLiteSchema.version || superseded {
                throw StoreError.newerSchema(path: path, found: version, supported: SQLiteSchema.version)
            }
            return .weft
        }
        let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        if application != 0 {
            let hex = String(UInt32(bitPattern: application), radix: 16)
            throw StoreError.foreignDatabase(path: path, reason: "its application id is 0x\(hex), not Weft's")
        }
        // A first open that failed while it made the schema (a full disk, a kill) leaves the empty table
        // the migrator makes before its first migration, outside that migration's transaction: the
        // file is still new, not foreign, or it could never be opened again.
        if tables == ["grdb_migrations"], try Int.fetchOne(db, sql: "SELECT count(*) FROM grdb_migrations") == 0 {
            return .empty
        }
        if !tables.isEmpty {
            let names = tables.prefix(5).joined(separator: ", ") + (tables.count > 5 ? ", …" : "")
            throw StoreError.foreignDatabase(
                path: path, reason: "it holds tables (\(names)) and no Weft application id")
        }
        return .empty
    }

    /// Reads the identity row, creating it in a new database, and checks the instance binding.
    private static func loadIdentity(
        _ db: Database, path: String, options: StoreOptions
    ) throws -> (StoreIdentity, LogMarks) {
        let inode = try FileStat.inode(path)
        let version = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
        if let stored = try SQLiteIdentityRow.read(db, location: path) {
            let instance: InstanceState =
                stored.inode == inode
                ? .original
                : .copied(reason: "the file is inode \(inode) but the database was made as inode \(stored.inode)")
            let identity = StoreIdentity(
                replica: stored.replica, clockTime: stored.clockTime, instanceToken: stored.token,
                schemaVersion: version, instance: instance)
            return (identity, stored.marks)
        }
        var generator = SystemRandomNumberGenerator()
        let row = SQLiteIdentityRow(
            replica: options.replicaForNewDatabase ?? ReplicaID.random(using: &generator), clockTime: 0,
            token: .random(using: &generator), inode: inode, marks: LogMarks())
        try row.insert(db)
        let identity = StoreIdentity(
            replica: row.replica, clockTime: 0, instanceToken: row.token, schemaVersion: version, instance: .original)
        return (identity, row.marks)
    }

    // MARK: - Access

    /// Runs `body` on the connection, serialized with every other call; errors come out as ``StoreError``.
    func withDatabase<T>(_ operation: String, _ body: (Database) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        guard let queue else { throw StoreError.closed(path: path) }
        do {
            return try queue.inDatabase(body)
        } catch {
            throw StoreError.from(error, path: path, operation: operation)
        }
    }

    public var identity: StoreIdentity {
        lock.lock()
        defer { lock.unlock() }
        return cachedIdentity
    }

    public var logMarks: LogMarks {
        lock.lock()
        defer { lock.unlock() }
        return cachedMarks
    }

    public func requireOriginal() throws {
        if case .copied(let reason) = identity.instance { throw StoreError.copiedDatabase(path: path, reason: reason) }
    }

    public func reidentify(newID: ReplicaID) throws {
        try withDatabase("giving the database a new identity") { db in
            var generator = SystemRandomNumberGenerator()
            let old = cachedIdentity
            var row = SQLiteIdentityRow(
                replica: newID, clockTime: old.clockTime, token: .random(using: &generator),
                inode: try FileStat.inode(path), marks: cachedMarks)
            try db.inTransaction(.immediate) {
                try SQLiteIdentityRow.materializeStatuses(db, origin: old.replica, marks: cachedMarks)
                row.marks.acknowledgedThrough = 0
                row.marks.stableThrough = 0
                try row.update(db)
                return .commit
            }
            // An identity must survive a power loss: a lost one could hand out the old id's sequences again.
            try SQLiteStore.checkpoint(db, path: path)
            cachedIdentity = StoreIdentity(
                replica: newID, clockTime: old.clockTime, instanceToken: row.token, schemaVersion: old.schemaVersion,
                instance: .original)
            cachedMarks = row.marks
        }
    }

    public func close() throws {
        lock.lock()
        defer { lock.unlock() }
        guard let queue else { return }
        self.queue = nil
        defer {
            fileLock?.release()
            fileLock = nil
        }
        do {
            try queue.close()
        } catch {
            throw StoreError.from(error, path: path, operation: "closing the database")
        }
    }
}
