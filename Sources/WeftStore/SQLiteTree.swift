import GRDB
import WeftCore

/// The materialized tree and the base overrides of an open SQLite connection, in the row form of
/// ``TreeRows``. Made for one database access (a commit, a read); it prepares its statements once, so a
/// commit of thousands of subtree writes looks none up again.
final class SQLiteTree {
    let db: Database
    /// The database path, for errors.
    let location: String
    private let deleteNode: SQLiteStatement
    private let deleteNodeRange: SQLiteStatement
    private let insertNode: SQLiteStatement
    private let upsertNode: SQLiteStatement
    private let selectNode: SQLiteStatement
    private let selectNodeRange: SQLiteStatement
    /// Path texts known, within this access, to have no row. A commit that writes many leaves under the
    /// same parents deletes each parent's (scalar) row once, not once per leaf. Deleting rows keeps it
    /// true; inserting a row removes that row's text from it.
    private var rowless = Set<String>()
    /// Path texts known, within this access, to have no override. Putting an override removes its text.
    private var overrideless = Set<String>()
    /// Whether any override exists, when known within this access.
    private var overridesExist: Bool?
    /// Statements on `base_override`, prepared on first use (most accesses never touch overrides).
    private var overrideStatements: [OverrideStatement: SQLiteStatement] = [:]

    private enum OverrideStatement: CaseIterable {
        case any, upsert, deleteOne, deleteRange, selectOne, selectRange

        var sql: String {
            switch self {
            case .any: return SQLiteSchema.anyOverride
            case .upsert: return SQLiteSchema.upsertOverride
            case .deleteOne: return SQLiteSchema.deleteOverride
            case .deleteRange: return SQLiteSchema.deleteOverrideRange
            case .selectOne: return SQLiteSchema.selectOverride
            case .selectRange: return SQLiteSchema.selectOverrideRange
            }
        }
    }

    private func statement(_ which: OverrideStatement) throws -> SQLiteStatement {
        if let statement = overrideStatements[which] { return statement }
        let statement = try SQLiteStatement(db, which.sql)
        overrideStatements[which] = statement
        return statement
    }

    init(_ db: Database, location: String) throws {
        self.db = db
        self.location = location
        deleteNode = try SQLiteStatement(db, SQLiteSchema.deleteNode)
        deleteNodeRange = try SQLiteStatement(db, SQLiteSchema.deleteNodeRange)
        insertNode = try SQLiteStatement(db, SQLiteSchema.insertNode)
        upsertNode = try SQLiteStatement(db, SQLiteSchema.upsertNode)
        selectNode = try SQLiteStatement(db, SQLiteSchema.selectNode)
        selectNodeRange = try SQLiteStatement(db, SQLiteSchema.selectNodeRange)
    }

    // MARK: - Tree

    /// The subtree at `path`: the row at `path` if it is a scalar, else the rows of its range.
    func read(at path: Path) throws -> Value {
        var builder = TreeBuilder(path: path, location: location)
        let bounds = TreeRows.bounds(path)
        if let exact = bounds.exact {
            selectNode.bind(1, exact)
            var found = false
            try selectNode.forEachRow {
                let encoded = selectNode.blob(1)
                try selectNode.withText(0) { try builder.add(text: $0, encoded: encoded) }
                found = true
            }
            if found { return builder.finish() }
        }
        selectNodeRange.bind(1, bounds.lower)
        selectNodeRange.bind(2, bounds.upper)
        try selectNodeRange.forEachRow {
            let encoded = selectNodeRange.blob(1)
            try selectNodeRange.withText(0) { try builder.add(text: $0, encoded: encoded) }
        }
        return builder.finish()
    }

    /// Replaces the subtree at `path` with `value`: deletes the rows of its ancestors when `value` is
    /// not null (a write below a scalar turns it into an object), deletes its own row and the range below
    /// it, and stores a row per leaf of `value` (a scalar at `path` is one upsert).
    func write(_ value: Value, at path: Path) throws {
        if !value.isNull {
            for text in TreeRows.ancestorTexts(path) where rowless.insert(text).inserted {
                try deleteRow(text)
            }
        }
        let bounds = TreeRows.bounds(path)
        deleteNodeRange.bind(1, bounds.lower)
        deleteNodeRange.bind(2, bounds.upper)
        try deleteNodeRange.run()
        switch value {
        case .null, .object:
            if let exact = bounds.exact, rowless.insert(exact).inserted { try deleteRow(exact) }
            try TreeRows.forEachLeaf(of: value, at: path) { text, scalar in
                rowless.remove(text)
                insertNode.bind(1, text)
                insertNode.bind(2, scalar)
                try insertNode.run()
            }
        default:
            let text = bounds.exact ?? "/"
            rowless.remove(text)
            upsertNode.bind(1, text)
            upsertNode.bind(2, OpCodec.encode(value))
            try upsertNode.run()
        }
    }

    /// Replaces the scalar row at `path` with `value` (a scalar), or deletes it (null): one statement.
    /// The caller knows the tree holds a scalar there (see ``StoreBatch/TreeWrite/replacesScalar``).
    func replaceScalar(at path: Path, with value: Value) throws {
        precondition(!value.isObject, "a scalar row holds a scalar")
        let text = TreeRows.text(path)
        if value.isNull {
            rowless.insert(text)
            try deleteRow(text)
            return
        }
        rowless.remove(text)
        upsertNode.bind(1, text)
        upsertNode.bind(2, OpCodec.encode(value))
        try upsertNode.run()
    }

    private func deleteRow(_ text: String) throws {
        deleteNode.bind(1, text)
        try deleteNode.run()
    }

    /// Number of leaf rows.
    func leafCount() throws -> Int {
        Int(try SQLiteStatement(db, SQLiteSchema.countNodes).scalarInt())
    }

    // MARK: - Overrides

    /// The override rows of the range `[lower, upper)`, decoded.
    func overrides(lower: String, upper: String) throws -> [BaseOverride] {
        let range = try statement(.selectRange)
        range.bind(1, lower)
        range.bind(2, upper)
        var result: [BaseOverride] = []
        try range.forEachRow { result.append(try override(text: range.text(0), encoded: range.blob(1))) }
        return result
    }

    /// The override stored exactly at `text`, if any.
    func override(at text: String) throws -> BaseOverride? {
        guard !overrideless.contains(text) else { return nil }
        let one = try statement(.selectOne)
        one.bind(1, text)
        var result: BaseOverride?
        try one.forEachRow { result = try override(text: one.text(0), encoded: one.blob(1)) }
        if result == nil { overrideless.insert(text) }
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
        if let overridesExist { return overridesExist }
        let exist = try statement(.any).scalarInt() != 0
        overridesExist = exist
        return exist
    }

    func treeSubtree(at path: Path) throws -> Value { try read(at: path) }

    func override(covering path: Path) throws -> BaseOverride? {
        for text in TreeRows.chainTexts(path).reversed() {
            if let found = try override(at: text) { return found }
        }
        return nil
    }

    func scalarAncestor(of path: Path) throws -> Path? {
        for (depth, text) in TreeRows.ancestorTexts(path).enumerated() where !rowless.contains(text) {
            selectNode.bind(1, text)
            var found = false
            try selectNode.forEachRow { found = true }
            guard found else {
                rowless.insert(text)
                continue
            }
            var ancestor = path
            for _ in depth..<path.depth { ancestor = ancestor.parent ?? .root }
            return ancestor
        }
        return nil
    }

    func overrides(below path: Path) throws -> [BaseOverride] {
        let bounds = TreeRows.bounds(path)
        let rows = try overrides(lower: bounds.lower, upper: bounds.upper)
        return path.isRoot ? rows.filter { !$0.path.isRoot } : rows
    }

    func putOverride(_ value: Value, at path: Path) throws {
        let text = TreeRows.text(path)
        let upsert = try statement(.upsert)
        upsert.bind(1, text)
        upsert.bind(2, OpCodec.encode(value))
        try upsert.run()
        overrideless.remove(text)
        overridesExist = true
    }

    func deleteOverrides(atOrBelow path: Path) throws {
        let bounds = TreeRows.bounds(path)
        if let exact = bounds.exact {
            let one = try statement(.deleteOne)
            one.bind(1, exact)
            try one.run()
        }
        let range = try statement(.deleteRange)
        range.bind(1, bounds.lower)
        range.bind(2, bounds.upper)
        try range.run()
        overridesExist = nil
    }
}
