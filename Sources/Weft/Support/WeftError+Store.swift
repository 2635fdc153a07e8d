import Foundation
import WeftCore
import WeftStore

extension WeftError {
    /// Maps a store error to the public one; the message says what happened and what to do.
    ///
    /// ```swift
    /// WeftError(StoreError.inUse(path: "/data/app.sqlite", pid: 123)).message
    /// // "database /data/app.sqlite is in use by another process (pid 123)"
    /// ```
    init(_ error: StoreError) {
        switch error {
        case .notADatabase, .foreignDatabase:
            self.init(.notAWeftDatabase, error.description)
        case .newerSchema:
            self.init(.newerSchema, error.description)
        case .readOnlyLocation:
            self.init(.readOnly, error.description)
        case .inUse(let path, let pid) where pid == ProcessInfo.processInfo.processIdentifier:
            self.init(.databaseInUse, "database \(path) is already open in this process; open it once and share it")
        case .inUse, .busy:
            self.init(.databaseInUse, error.description)
        case .diskFull:
            self.init(.diskFull, error.description)
        case .copiedDatabase:
            self.init(.copiedDatabase, error.description)
        case .closed:
            self.init(.shutDown, error.description)
        case .cannotOpen, .corruptOp, .corrupt, .conflictingOp, .opBelowFrontier, .io:
            self.init(.storage, error.description)
        }
    }

    /// Maps any error raised below the public API (store, core) to the public one.
    static func wrapping(_ error: any Error) -> WeftError {
        switch error {
        case let error as WeftError: return error
        case let error as StoreError: return WeftError(error)
        case let error as CoreError: return WeftError(error)
        default: return WeftError(.storage, "\(error)")
        }
    }

    /// The error of a write to a replica that has shut down.
    static let replicaShutDown = WeftError(.shutDown, "the replica has shut down; open it again to write")
}
