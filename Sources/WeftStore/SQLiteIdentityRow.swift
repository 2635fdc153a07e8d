import GRDB
import WeftCore

/// The one row of the `identity` table: replica id, clock, instance token and inode, frontier and
/// status watermarks.
struct SQLiteIdentityRow {
    var replica: ReplicaID
    var clockTime: UInt64
    var token: InstanceToken
    /// The inode of the file the identity was made in (see `Docs/STORAGE.md`, instance token).
    var inode: UInt64
    var marks: LogMarks

    /// The stored row, nil in a database that has none yet.
    /// - Throws: ``StoreError/corrupt(path:reason:)`` when a field is out of range.
    static func read(_ db: Database, location: String) throws -> SQLiteIdentityRow? {
        let select = try SQLiteStatement(db, SQLiteSchema.selectIdentity)
        var row: SQLiteIdentityRow?
        try select.forEachRow {
            func damaged(_ reason: String) -> StoreError { .corrupt(path: location, reason: "identity: \(reason)") }
            guard let replica = ReplicaID(rawValue: select.uint64(0)) else { throw damaged("replica id 0") }
            let tokenBytes = select.blob(2)
            guard tokenBytes.count == StoreLimits.instanceTokenBytes else { throw damaged("bad instance token") }
            var frontier: Stamp?
            if !select.isNull(4) {
                guard let stamp = StampKey.stamp(select.blob(4)) else { throw damaged("bad frontier") }
                frontier = stamp
            }
            let marks = LogMarks(
                frontier: frontier, acknowledgedThrough: select.uint64(5), stableThrough: select.uint64(6))
            row = SQLiteIdentityRow(
                replica: replica, clockTime: select.uint64(1), token: InstanceToken(bytes: tokenBytes),
                inode: select.uint64(3), marks: marks)
        }
        return row
    }

    /// Inserts the row of a new database.
    func insert(_ db: Database) throws {
        let insert = try SQLiteStatement(db, SQLiteSchema.insertIdentity)
        insert.bind(1, replica.rawValue)
        insert.bind(2, clockTime)
        insert.bind(3, token.bytes)
        insert.bind(4, inode)
        try insert.run()
    }

    /// Writes every field.
    func update(_ db: Database) throws {
        let update = try SQLiteStatement(db, SQLiteSchema.updateIdentity)
        update.bind(1, replica.rawValue)
        update.bind(2, clockTime)
        update.bind(3, token.bytes)
        update.bind(4, inode)
        if let frontier = marks.frontier { update.bind(5, StampKey.bytes(frontier)) } else { update.bindNull(5) }
        update.bind(6, marks.acknowledgedThrough)
        update.bind(7, marks.stableThrough)
        try update.run()
    }

    /// Writes the clock, the frontier and the watermarks, which a commit may move.
    static func updateProgress(_ db: Database, clockTime: UInt64, marks: LogMarks) throws {
        let update = try SQLiteStatement(db, SQLiteSchema.updateProgress)
        update.bind(1, clockTime)
        if let frontier = marks.frontier { update.bind(2, StampKey.bytes(frontier)) } else { update.bindNull(2) }
        update.bind(3, marks.acknowledgedThrough)
        update.bind(4, marks.stableThrough)
        try update.run()
    }

    /// Writes into each op of `origin` the status its watermarks give it, before the watermarks are reset
    /// for a new identity.
    static func materializeStatuses(_ db: Database, origin: ReplicaID, marks: LogMarks) throws {
        let select = try SQLiteStatement(db, SQLiteSchema.selectOwnSequences)
        select.bind(1, origin.rawValue)
        var changes: [(sequence: UInt64, stamp: [UInt8], status: OpStatus)] = []
        try select.forEachRow {
            guard let recorded = OpStatus(rawValue: UInt8(truncatingIfNeeded: select.int64(2))) else { return }
            let sequence = select.uint64(0)
            let status = marks.status(recorded: recorded, origin: origin, sequence: sequence, local: origin)
            if let status, status != recorded { changes.append((sequence, select.blob(1), status)) }
        }
        let update = try SQLiteStatement(db, SQLiteSchema.updateOpStatus)
        for change in changes {
            update.bind(1, Int64(change.status.rawValue))
            update.bind(2, origin.rawValue)
            update.bind(3, change.sequence)
            update.bind(4, change.stamp)
            try update.run()
        }
    }
}
