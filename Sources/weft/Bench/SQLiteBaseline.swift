import Foundation
import GRDB
import GRDBSQLite
import WeftCore

/// Plain SQLite inserts of the rows a group commit writes (op rows and tree leaf rows), through a GRDB
/// connection configured as the store configures its own (16 KiB pages, exclusive WAL, the same
/// `synchronous`), with prepared statements driven through SQLite's C API: the fastest way to put the
/// same rows in the same tables, which `weft bench write` compares group commit to.
///
/// ```swift
/// let baseline = try SQLiteBaseline(path: dir + "/baseline.sqlite", synchronousFull: false)
/// let seconds = try baseline.insert(chunks)
/// ```
struct SQLiteBaseline {
    /// The rows of one transaction.
    struct Chunk {
        /// Op rows: the 16-byte stamp key, origin, sequence and encoded body.
        var ops: [(key: [UInt8], origin: UInt64, sequence: UInt64, body: [UInt8])] = []
        /// Leaf rows: path text and encoded scalar (upserted).
        var leaves: [(path: String, value: [UInt8])] = []
    }

    let queue: DatabaseQueue

    init(path: String, synchronousFull: Bool) throws {
        var configuration = Configuration()
        configuration.journalMode = .default
        queue = try DatabaseQueue(path: path, configuration: configuration)
        try queue.inDatabase { db in
            try db.execute(sql: "PRAGMA page_size = 16384")
            try db.execute(sql: "PRAGMA locking_mode = EXCLUSIVE")
            _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA synchronous = \(synchronousFull ? "FULL" : "NORMAL")")
            try db.execute(sql: "PRAGMA cache_size = -16384")
            try db.execute(
                sql: """
                    CREATE TABLE op (origin INTEGER NOT NULL, sequence INTEGER NOT NULL, stamp BLOB NOT NULL,
                        status INTEGER, body BLOB NOT NULL, PRIMARY KEY (origin, sequence)) WITHOUT ROWID;
                    CREATE TABLE node (path TEXT NOT NULL PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;
                    """)
        }
    }

    /// Inserts each chunk in one transaction; returns the seconds taken.
    func insert(_ chunks: [Chunk]) throws -> Double {
        try measureSeconds {
            try queue.inDatabase { db in
                let insertOp = try db.makeStatement(
                    sql: "INSERT INTO op (origin, sequence, stamp, status, body) VALUES (?, ?, ?, 1, ?)")
                let upsertLeaf = try db.makeStatement(
                    sql: """
                        INSERT INTO node (path, value) VALUES (?, ?)
                        ON CONFLICT (path) DO UPDATE SET value = excluded.value
                        """)
                for chunk in chunks {
                    try db.inTransaction(.immediate) {
                        for row in chunk.ops {
                            let handle = insertOp.sqliteStatement
                            sqlite3_bind_int64(handle, 1, Int64(bitPattern: row.origin))
                            sqlite3_bind_int64(handle, 2, Int64(bitPattern: row.sequence))
                            Self.bind(handle, 3, row.key)
                            Self.bind(handle, 4, row.body)
                            try Self.run(handle, db)
                        }
                        for row in chunk.leaves {
                            let handle = upsertLeaf.sqliteStatement
                            var text = row.path
                            text.withUTF8 { bytes in
                                bytes.withMemoryRebound(to: CChar.self) {
                                    _ = sqlite3_bind_text(handle, 1, $0.baseAddress, Int32($0.count), Self.transient)
                                }
                            }
                            Self.bind(handle, 2, row.value)
                            try Self.run(handle, db)
                        }
                        return .commit
                    }
                }
            }
        }
    }

    func close() throws { try queue.close() }

    private static var transient: sqlite3_destructor_type {
        unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
    }

    private static func bind(_ handle: OpaquePointer, _ index: Int32, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { _ = sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), transient) }
    }

    private static func run(_ handle: OpaquePointer, _ db: Database) throws {
        defer { sqlite3_reset(handle) }
        let code = sqlite3_step(handle)
        guard code == SQLITE_DONE else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "baseline insert failed")
        }
    }
}
