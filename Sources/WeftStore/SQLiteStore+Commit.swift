import GRDB
import WeftCore

// MARK: - Group commit

extension SQLiteStore {
    public func commit(_ batch: StoreBatch) throws {
        try withDatabase("committing a batch") { db in
            if case .copied(let reason) = cachedIdentity.instance {
                throw StoreError.copiedDatabase(path: path, reason: reason)
            }
            try batch.checkOps(frontier: cachedMarks.frontier)
            guard !batch.isEmpty else { return }
            var clockTime = cachedIdentity.clockTime
            var marks = cachedMarks
            try db.inTransaction(.immediate) {
                try write(batch, to: db, clockTime: &clockTime, marks: &marks)
                // Last, so that a file deleted while the batch was written rolls it back too.
                try requireSameFile()
                return .commit
            }
            cachedIdentity.clockTime = clockTime
            cachedMarks = marks
        }
    }

    /// Throws unless `path` (and `path-wal`) still name the files this store opened: SQLite goes on
    /// writing to a file deleted or replaced under it, and nobody would open those writes again (a crash
    /// with the log gone loses every commit since the last checkpoint).
    private func requireSameFile() throws {
        let message: String
        if (try? FileStat.inode(path)) != fileInode {
            message =
                "the database file at this path is no longer the one opened (it was deleted or replaced while "
                + "open), so no later commit can be kept; stop writing, put the file back and reopen it"
        } else if let walInode, (try? FileStat.inode(path + "-wal")) != walInode {
            message =
                "its write-ahead log \(path)-wal was deleted or replaced while open, so no later commit can be "
                + "kept; close the database now (closing folds the log it still holds into the file) and reopen it"
        } else {
            return
        }
        throw StoreError.io(path: path, operation: "committing a batch", message: message)
    }

    /// Writes every part of `batch` inside the open transaction, in the order ``StoreBatch`` documents.
    private func write(_ batch: StoreBatch, to db: Database, clockTime: inout UInt64, marks: inout LogMarks) throws {
        var tree = try SQLiteTree(db, location: path)
        for preserved in batch.basePreserves { try BaseOverlay.preserve(&tree, at: preserved) }
        if !batch.replacedOps.isEmpty {
            let delete = try SQLiteStatement(db, SQLiteSchema.deleteOpAt)
            for record in batch.replacedOps {
                delete.bind(1, record.op.origin.rawValue)
                delete.bind(2, record.op.sequence)
                try delete.run()
            }
            try insert(batch.replacedOps, into: db)
        }
        if !batch.ops.isEmpty { try insert(batch.ops, into: db) }
        for write in batch.liveTreeWrites {
            if write.replacesScalar {
                try tree.replaceScalar(at: write.path, with: write.value)
            } else {
                try tree.write(write.value, at: write.path)
            }
        }
        for write in batch.baseWrites { try BaseOverlay.apply(write, to: &tree) }
        try writeStatuses(batch.statusChanges, to: db)
        try writePeers(batch, to: db)
        try writeTouches(batch.compactedTouches, to: db)
        try writeIndexes(batch.indexWrites, to: db)

        let before = (clockTime, marks)
        marks.apply(batch.statusChanges)
        if let time = batch.clockTime { clockTime = max(clockTime, time) }
        if let frontier = batch.frontier, marks.frontier.map({ frontier > $0 }) ?? true {
            let delete = try SQLiteStatement(db, SQLiteSchema.deleteOpsThrough)
            delete.bind(1, StampKey.bytes(frontier))
            try delete.run()
            marks.frontier = frontier
        }
        if before != (clockTime, marks) { try SQLiteIdentityRow.updateProgress(db, clockTime: clockTime, marks: marks) }
    }

    /// Inserts ops with one reused statement; the stamp is bound straight from the encoding. An op whose
    /// place (origin and sequence) is taken is skipped when it is the same op, and refused otherwise.
    private func insert(_ records: [OpRecord], into db: Database) throws {
        let insert = try SQLiteStatement(db, SQLiteSchema.insertOp)
        // By index: a loop over the records would copy each (retaining its op and bytes).
        for index in records.indices {
            insert.bind(1, records[index].op.origin.rawValue)
            insert.bind(2, records[index].op.sequence)
            insert.bind(3, records[index].stampBytes)
            if let status = records[index].status { insert.bind(4, Int64(status.rawValue)) } else { insert.bindNull(4) }
            insert.bind(5, records[index].encoded)
            try insert.run()
            if insert.changes == 0 { try checkRepeat(of: records[index].op, in: db) }
        }
    }

    /// Throws unless the op that holds the place of `op` is `op` itself.
    private func checkRepeat(of op: Op, in db: Database) throws {
        let select = try SQLiteStatement(db, SQLiteSchema.selectStampAt)
        select.bind(1, op.origin.rawValue)
        select.bind(2, op.sequence)
        var held: Stamp?
        try select.forEachRow { held = StampKey.stamp(select.blob(0)) }
        guard held == op.stamp else { throw StoreError.conflictingOp(origin: op.origin, sequence: op.sequence) }
    }

    private func writeStatuses(_ changes: [StoreBatch.StatusChange], to db: Database) throws {
        var update: SQLiteStatement?
        for case .op(let stamp, let sequence, let status) in changes {
            let statement = try update ?? SQLiteStatement(db, SQLiteSchema.updateOpStatus)
            update = statement
            statement.bind(1, Int64(status.rawValue))
            statement.bind(2, stamp.replica.rawValue)
            statement.bind(3, sequence)
            statement.bind(4, StampKey.bytes(stamp))
            try statement.run()
        }
    }

    private func writeTouches(_ touches: [CompactedTouch], to db: Database) throws {
        guard !touches.isEmpty else { return }
        let upsert = try SQLiteStatement(db, SQLiteSchema.upsertTouch)
        for touch in touches {
            upsert.bind(1, TreeRows.text(touch.path))
            upsert.bind(2, touch.origin.rawValue)
            upsert.bind(3, touch.sequence)
            try upsert.run()
        }
    }

    private func writePeers(_ batch: StoreBatch, to db: Database) throws {
        if !batch.peerVectors.isEmpty {
            let upsert = try SQLiteStatement(db, SQLiteSchema.upsertPeer)
            for (peer, vector) in batch.peerVectors {
                var writer = ByteWriter()
                OpCodec.write(vector, to: &writer)
                upsert.bind(1, peer.rawValue)
                upsert.bind(2, writer.bytes)
                try upsert.run()
            }
        }
        if let members = batch.members {
            try SQLiteStatement(db, SQLiteSchema.deleteMembers).run()
            let insert = try SQLiteStatement(db, SQLiteSchema.insertMember)
            for member in members {
                insert.bind(1, member.rawValue)
                try insert.run()
            }
        }
    }
}
