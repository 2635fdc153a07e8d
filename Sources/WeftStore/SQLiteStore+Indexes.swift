import GRDB
import WeftCore

// Query indexes: definitions in `query_index`, entries in `query_index_entry` keyed by the entry's sort
// key, so that an index reads back in order (see `QueryIndexEntry.sortKey`).

extension SQLiteStore {
    /// Applies the batch's index writes inside the open transaction.
    func writeIndexes(_ writes: [StoreBatch.IndexWrite], to db: Database) throws {
        guard !writes.isEmpty else { return }
        var upsert: SQLiteStatement?
        var delete: SQLiteStatement?
        for write in writes {
            switch write {
            case .define(let index):
                let insert = try SQLiteStatement(db, SQLiteSchema.insertQueryIndex)
                insert.bind(1, index.id)
                insert.bind(2, TreeRows.text(index.collection))
                insert.bind(3, index.field.description)
                try insert.run()
            case .drop(let id):
                for sql in [SQLiteSchema.deleteQueryIndex, SQLiteSchema.deleteQueryIndexEntries] {
                    let statement = try SQLiteStatement(db, sql)
                    statement.bind(1, id)
                    try statement.run()
                }
            case let .insert(id, entry):
                if upsert == nil { upsert = try SQLiteStatement(db, SQLiteSchema.upsertQueryIndexEntry) }
                guard let upsert else { continue }
                upsert.bind(1, id)
                upsert.bind(2, entry.sortKey)
                upsert.bind(3, entry.key.text)
                upsert.bind(4, OpCodec.encode(entry.value))
                try upsert.run()
            case let .delete(id, entry):
                if delete == nil { delete = try SQLiteStatement(db, SQLiteSchema.deleteQueryIndexEntry) }
                guard let delete else { continue }
                delete.bind(1, id)
                delete.bind(2, entry.sortKey)
                try delete.run()
            }
        }
    }

    public func queryIndexes() throws -> [StoredQueryIndex] {
        try withDatabase("reading the query indexes") { db in
            let select = try SQLiteStatement(db, SQLiteSchema.selectQueryIndexes)
            var result: [StoredQueryIndex] = []
            try select.forEachRow {
                let id = select.int64(0)
                let text = select.text(1)
                guard let collection = try? Path(text) else {
                    throw StoreError.corrupt(path: path, reason: "query index \(id) has a damaged collection path")
                }
                result.append(StoredQueryIndex(id: id, collection: collection, field: QueryField(select.text(2))))
            }
            return result
        }
    }

    public func queryIndexEntries(of id: Int64) throws -> [QueryIndexEntry] {
        try withDatabase("reading a query index") { db in
            let select = try SQLiteStatement(db, SQLiteSchema.selectQueryIndexEntries)
            select.bind(1, id)
            var result: [QueryIndexEntry] = []
            try select.forEachRow {
                let text = select.text(0)
                guard let key = try? Key(validating: text), let value = try? OpCodec.decodeValue(select.blob(1)) else {
                    throw StoreError.corrupt(path: path, reason: "query index \(id) has a damaged entry")
                }
                result.append(QueryIndexEntry(value: value, key: key))
            }
            return result
        }
    }
}
