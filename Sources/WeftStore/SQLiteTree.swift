import GRDB
import WeftCore

/// The materialized tree and the base overrides of an open SQLite connection, in the row form of
/// ``TreeRows``. Used inside one database access; it holds cached statements, not data.
struct SQLiteTree {
    let db: Database
    /// The database path, for errors.
    let location: String

    init(_ db: Database, location: String) {
        self.db = db
        self.location = location
    }

    // MARK: - Tree

    /// The subtree at `path`: the row at `path` if it is a scalar, else the rows of its range.
    func read(at path: Path) throws -> Value {
        var builder = TreeBuilder(path: path, location: location)
        let bounds = TreeRows.bounds(path)
        if let exact = bounds.exact {
            let one = try SQLiteStatement(db, SQLiteSchema.selectNode)
            one.bind(1, exact)
            var found = false
            try one.forEachRow {
                try builder.add(text: one.text(0), encoded: one.blob(1))
                found = true
            }
            if found { return builder.finish() }
        }
        let range = try SQLiteStatement(db, SQLiteSchema.selectNodeRange)
        range.bind(1, bounds.lower)
        range.bind(2, bounds.upper)
        try range.forEachRow { try builder.add(text: range.text(0), encoded: range.blob(1)) }
        return builder.finish()
    }

    /// Replaces the subtree at `path` with `value`: deletes its rows, deletes the scalar rows above it
    /// (a write below a scalar turns it into an object), and inserts a row per leaf of `value`.
    func write(_ value: Value, at path: Path) throws {
        let bounds = TreeRows.bounds(path)
        let deleteOne = try SQLiteStatement(db, SQLiteSchema.deleteNode)
        if let exact = bounds.exact {
            deleteOne.bind(1, exact)
            try deleteOne.run()
        }
        let deleteRange = try SQLiteStatement(db, SQLiteSchema.deleteNodeRange)
        deleteRange.bind(1, bounds.lower)
        deleteRange.bind(2, bounds.upper)
        try deleteRange.run()
        guard !value.isNull else { return }
        for ancestor in TreeRows.ancestorTexts(path) {
            deleteOne.bind(1, ancestor)
            try deleteOne.run()
        }
        let insert = try SQLiteStatement(db, SQLiteSchema.insertNode)
        try TreeRows.forEachLeaf(of: value, at: path) { text, scalar in
            insert.bind(1, text)
            insert.bind(2, scalar)
            try insert.run()
        }
    }

    /// Number of leaf rows.
    func leafCount() throws -> Int {
        Int(try SQLiteStatement(db, SQLiteSchema.countNodes).scalarInt())
    }

    // MARK: - Overrides

    /// The override rows of the range `[lower, upper)`, decoded.
    func overrides(lower: String, upper: String) throws -> [BaseOverride] {
        let range = try SQLiteStatement(db, SQLiteSchema.selectOverrideRange)
        range.bind(1, lower)
        range.bind(2, upper)
        var result: [BaseOverride] = []
        try range.forEachRow { result.append(try override(text: range.text(0), encoded: range.blob(1))) }
        return result
    }

    /// The override stored exactly at `text`, if any.
    func override(at text: String) throws -> BaseOverride? {
        let one = try SQLiteStatement(db, SQLiteSchema.selectOverride)
        one.bind(1, text)
        var result: BaseOverride?
        try one.forEachRow { result = try override(text: one.text(0), encoded: one.blob(1)) }
        return result
    }

    private func override(text: String, encoded: [UInt8]) throws -> BaseOverride {
        do {
            let path = try Path(text)
            guard path.description == text else { throw CoreError.invalidPath(path: text, reason: "not canonical") }
            return BaseOverride(path: path, value: try OpCodec.decodeValue(encoded))
        } catch {
            throw StoreError.corrupt(path: location, reason: "base override \(text) is damaged: \(error)")
        }
    }
}

// MARK: - BaseOverlayHost

extension SQLiteTree: BaseOverlayHost {
    typealias Failure = any Error

    func hasOverrides() throws -> Bool {
        try SQLiteStatement(db, SQLiteSchema.anyOverride).scalarInt() != 0
    }

    func treeSubtree(at path: Path) throws -> Value { try read(at: path) }

    func override(covering path: Path) throws -> BaseOverride? {
        if let found = try override(at: TreeRows.text(path)) { return found }
        for text in TreeRows.ancestorTexts(path).reversed() {
            if let found = try override(at: text) { return found }
        }
        return nil
    }

    func overrides(below path: Path) throws -> [BaseOverride] {
        let bounds = TreeRows.bounds(path)
        let rows = try overrides(lower: bounds.lower, upper: bounds.upper)
        return path.isRoot ? rows.filter { !$0.path.isRoot } : rows
    }

    mutating func putOverride(_ value: Value, at path: Path) throws {
        let upsert = try SQLiteStatement(db, SQLiteSchema.upsertOverride)
        upsert.bind(1, TreeRows.text(path))
        upsert.bind(2, OpCodec.encode(value))
        try upsert.run()
    }

    mutating func deleteOverrides(atOrBelow path: Path) throws {
        let bounds = TreeRows.bounds(path)
        if let exact = bounds.exact {
            let one = try SQLiteStatement(db, SQLiteSchema.deleteOverride)
            one.bind(1, exact)
            try one.run()
        }
        let range = try SQLiteStatement(db, SQLiteSchema.deleteOverrideRange)
        range.bind(1, bounds.lower)
        range.bind(2, bounds.upper)
        try range.run()
    }
}
