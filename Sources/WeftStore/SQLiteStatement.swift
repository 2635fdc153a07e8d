import GRDB
import GRDBSQLite

/// A statement from GRDB's statement cache, driven through SQLite's C API: values are bound without
/// boxing and columns read without building rows, which is what lets a group commit insert hundreds
/// of thousands of rows per second.
///
/// Every use starts with a reset, so a statement left mid-way by an error cannot leak into the next use.
struct SQLiteStatement {
    private let handle: OpaquePointer
    private let connection: OpaquePointer
    /// The SQL, for errors.
    let sql: String

    /// The cached statement for `sql` on `db`.
    init(_ db: Database, _ sql: String) throws {
        guard let connection = db.sqliteConnection else {
            throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "the connection is closed", sql: sql)
        }
        self.handle = try db.cachedStatement(sql: sql).sqliteStatement
        self.connection = connection
        self.sql = sql
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Tells SQLite to copy bound bytes (`SQLITE_TRANSIENT`).
    private static var transient: sqlite3_destructor_type {
        unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
    }

    // MARK: - Binding (indexes start at 1)

    func bind(_ index: Int32, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { bindBlob(index, $0) }
    }

    func bind(_ index: Int32, _ bytes: ArraySlice<UInt8>) {
        bytes.withUnsafeBytes { bindBlob(index, $0) }
    }

    private func bindBlob(_ index: Int32, _ buffer: UnsafeRawBufferPointer) {
        if let base = buffer.baseAddress {
            _ = sqlite3_bind_blob(handle, index, base, Int32(buffer.count), SQLiteStatement.transient)
        } else {
            _ = sqlite3_bind_zeroblob(handle, index, 0)
        }
    }

    func bind(_ index: Int32, _ value: Int64) { _ = sqlite3_bind_int64(handle, index, value) }

    func bind(_ index: Int32, _ value: UInt64) { bind(index, Int64(bitPattern: value)) }

    func bind(_ index: Int32, _ text: String) {
        var text = text
        text.withUTF8 { buffer in
            buffer.withMemoryRebound(to: CChar.self) { characters in
                if let base = characters.baseAddress {
                    _ = sqlite3_bind_text(handle, index, base, Int32(characters.count), SQLiteStatement.transient)
                } else {
                    _ = sqlite3_bind_text(handle, index, "", 0, SQLiteStatement.transient)
                }
            }
        }
    }

    func bindNull(_ index: Int32) { _ = sqlite3_bind_null(handle, index) }

    // MARK: - Running

    /// Steps once: true when a row is ready, false when the statement is done.
    /// - Throws: a `DatabaseError` with SQLite's extended code and message (mapped by the caller).
    func step() throws -> Bool {
        let code = sqlite3_step(handle)
        if code == SQLITE_ROW { return true }
        if code == SQLITE_DONE { return false }
        let extended = sqlite3_extended_errcode(connection)
        let message = String(cString: sqlite3_errmsg(connection))
        sqlite3_reset(handle)
        throw DatabaseError(resultCode: ResultCode(rawValue: extended), message: message, sql: sql)
    }

    /// Runs a statement that returns no row, then resets it.
    func run() throws {
        defer { sqlite3_reset(handle) }
        while try step() {}
    }

    /// Rows changed by the last run on this connection.
    var changes: Int { Int(sqlite3_changes(connection)) }

    /// Runs a query and calls `body` for each row, then resets it.
    func forEachRow(_ body: () throws -> Void) throws {
        defer { sqlite3_reset(handle) }
        while try step() { try body() }
    }

    /// The integer of the first column of the first row (`count(*)`, `EXISTS`).
    func scalarInt() throws -> Int64 {
        defer { sqlite3_reset(handle) }
        guard try step() else { return 0 }
        return int64(0)
    }

    // MARK: - Columns (indexes start at 0)

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func uint64(_ column: Int32) -> UInt64 { UInt64(bitPattern: int64(column)) }

    func blob(_ column: Int32) -> [UInt8] {
        // Ask for the pointer before the size, as SQLite's documentation advises.
        let base = sqlite3_column_blob(handle, column)
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let base else { return [] }
        return Array(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// Calls `body` with the UTF-8 bytes of a text column, valid only during the call.
    func withText<T>(_ column: Int32, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        let base = sqlite3_column_text(handle, column)
        let count = Int(sqlite3_column_bytes(handle, column))
        return try body(UnsafeBufferPointer(start: base, count: base == nil ? 0 : count))
    }

    func text(_ column: Int32) -> String {
        guard let base = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: base, count: count), as: UTF8.self)
    }
}
