import GRDB
import WeftCore

// MARK: - Maintenance

extension SQLiteStore {
    public func checkpoint() throws {
        try withDatabase("checkpointing") { db in try SQLiteStore.checkpoint(db, path: path) }
    }

    /// Folds the WAL into the database file and truncates it (`wal_checkpoint(TRUNCATE)`).
    static func checkpoint(_ db: Database, path: String) throws {
        guard let row = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)") else { return }
        let busy: Int = row[0]
        guard busy == 0 else { throw StoreError.busy(path: path) }
    }

    public func vacuum() throws {
        try withDatabase("vacuuming") { db in
            try db.execute(sql: "VACUUM")
            try SQLiteStore.checkpoint(db, path: path)
        }
    }

    public func bytesOnDisk() throws -> Int {
        try withDatabase("measuring the file") { _ in FileStat.size(path) + FileStat.size(path + "-wal") }
    }
}
