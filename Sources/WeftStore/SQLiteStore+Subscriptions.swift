import GRDB
import WeftCore

// Webhook and notification subscriptions: one row each in `subscription`, its definition and cursor
// encoded as values (OpCodec), written outside group commits.

extension SQLiteStore: SubscriptionStore {
    public func subscriptions() throws -> [StoredSubscription] {
        try withDatabase("reading the subscriptions") { db in
            let select = try SQLiteStatement(db, SQLiteSchema.selectSubscriptions)
            var result: [StoredSubscription] = []
            try select.forEachRow {
                let id = select.text(0)
                guard let definition = try? OpCodec.decodeValue(select.blob(1)),
                    let cursor = try? OpCodec.decodeValue(select.blob(2))
                else {
                    throw StoreError.corrupt(path: path, reason: "subscription \(id) is damaged")
                }
                result.append(StoredSubscription(id: id, definition: definition, cursor: cursor))
            }
            return result
        }
    }

    public func saveSubscription(_ subscription: StoredSubscription) throws {
        try withDatabase("saving a subscription") { db in
            let upsert = try SQLiteStatement(db, SQLiteSchema.upsertSubscription)
            upsert.bind(1, subscription.id)
            upsert.bind(2, OpCodec.encode(subscription.definition))
            upsert.bind(3, OpCodec.encode(subscription.cursor))
            try upsert.run()
        }
    }

    public func saveSubscriptionCursor(id: String, cursor: Value) throws {
        try withDatabase("saving a subscription's cursor") { db in
            let update = try SQLiteStatement(db, SQLiteSchema.updateSubscriptionCursor)
            update.bind(1, OpCodec.encode(cursor))
            update.bind(2, id)
            try update.run()
        }
    }

    public func deleteSubscriptions(ids: [String]) throws {
        guard !ids.isEmpty else { return }
        try withDatabase("deleting subscriptions") { db in
            try db.inTransaction(.immediate) {
                let delete = try SQLiteStatement(db, SQLiteSchema.deleteSubscription)
                for id in ids {
                    delete.bind(1, id)
                    try delete.run()
                }
                return .commit
            }
        }
    }
}
