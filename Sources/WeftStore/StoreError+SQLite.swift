import GRDB
import WeftCore

extension StoreError {
    /// The store error for anything a database access threw: SQLite codes become cases, and never
    /// leave the module.
    static func from(_ error: any Error, path: String, operation: String) -> StoreError {
        if let error = error as? StoreError { return error }
        if let error = error as? CoreError { return .corrupt(path: path, reason: error.description) }
        guard let error = error as? DatabaseError else {
            return .io(path: path, operation: operation, message: "\(error)")
        }
        let message = error.message ?? "no message"
        switch error.resultCode {
        case .SQLITE_NOTADB: return .notADatabase(path: path)
        case .SQLITE_FULL: return .diskFull(path: path, operation: operation)
        case .SQLITE_READONLY, .SQLITE_PERM, .SQLITE_AUTH: return .readOnlyLocation(path: path, reason: message)
        case .SQLITE_CANTOPEN: return .cannotOpen(path: path, reason: message)
        case .SQLITE_BUSY, .SQLITE_LOCKED: return .busy(path: path)
        case .SQLITE_CORRUPT: return .corrupt(path: path, reason: message)
        default: return .io(path: path, operation: operation, message: message)
        }
    }
}
