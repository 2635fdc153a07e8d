import WeftCore

/// Every error the store reports. Each case says what went wrong and where; no raw SQLite or system
/// code leaks through, and a failed call leaves the stored data as it was.
///
/// ```swift
/// do {
///     let store = try SQLiteStore(path: path)
/// } catch StoreError.inUse(let path, let pid) {
///     print("\(path) is open in process \(pid.map(String.init) ?? "?")")
/// }
/// ```
public enum StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file is not an SQLite database.
    case notADatabase(path: String)
    /// The file is an SQLite database that Weft did not make (foreign tables, another application id).
    case foreignDatabase(path: String, reason: String)
    /// The database was written by a newer Weft, with a schema this version does not know.
    case newerSchema(path: String, found: Int, supported: Int)
    /// The location cannot be written (a read-only directory, file or file system).
    case readOnlyLocation(path: String, reason: String)
    /// The file cannot be opened or created (missing directory, a file where a directory should be…).
    case cannotOpen(path: String, reason: String)
    /// Another process (or another store in this process) has the database open.
    case inUse(path: String, pid: Int32?)
    /// The disk (or the configured size limit) is full; the commit was rolled back.
    case diskFull(path: String, operation: String)
    /// A stored op cannot be decoded.
    case corruptOp(stamp: Stamp?, reason: String)
    /// Stored data other than an op is damaged.
    case corrupt(path: String, reason: String)
    /// The database is a copy; it refuses to commit or sync until given a new replica id.
    case copiedDatabase(path: String, reason: String)
    /// An op claims the place (origin, sequence) of a different op already in the log.
    case conflictingOp(origin: ReplicaID, sequence: UInt64)
    /// An op at or below the stable frontier cannot enter the log any more.
    case opBelowFrontier(stamp: Stamp, frontier: Stamp)
    /// The store was closed.
    case closed(path: String)
    /// The database stayed locked by another connection for longer than the busy timeout.
    case busy(path: String)
    /// Any other failure of the database or the file system, with its message.
    case io(path: String, operation: String, message: String)

    public var description: String {
        switch self {
        case let .notADatabase(path):
            return "\(path) is not a database file; give the path of a Weft database, or a new path to create one"
        case let .foreignDatabase(path, reason):
            return "\(path) is not a Weft database: \(reason); give Weft a file of its own (a new path creates one)"
        case let .newerSchema(path, found, supported):
            return "\(path) has schema version \(found), newer than the version \(supported) this Weft supports; "
                + "upgrade Weft to open it"
        case let .readOnlyLocation(path, reason):
            return "\(path) is in a read-only location: \(reason); make it writable or choose a writable location"
        case let .cannotOpen(path, reason): return "cannot open \(path): \(reason)"
        case let .inUse(path, pid):
            let who = pid.map { "another process (pid \($0))" } ?? "another process"
            return "database \(path) is in use by \(who); stop it, or open another file"
        case let .diskFull(path, operation):
            return "disk full while \(operation) in \(path); nothing was written: free some space and try again"
        case let .corruptOp(stamp, reason):
            return "stored op \(stamp.map { $0.text } ?? "with a malformed stamp") is corrupt: \(reason); "
                + Self.whatToDoWithDamage
        case let .corrupt(path, reason): return "\(path) is corrupt: \(reason); \(Self.whatToDoWithDamage)"
        case let .copiedDatabase(path, reason):
            return "\(path) is a copy of another replica's database (\(reason)); reidentify it with a new replica id "
                + "before it syncs"
        case let .conflictingOp(origin, sequence):
            return "op \(sequence) of replica \(origin) is already in the log with another stamp; "
                + "two replicas share the id \(origin)"
        case let .opBelowFrontier(stamp, frontier):
            return "op \(stamp.text) is at or below the stable frontier \(frontier.text); it arrived too late"
        case let .closed(path): return "store \(path) is closed"
        case let .busy(path): return "database \(path) stayed locked by another connection; try again later"
        case let .io(path, operation, message): return "\(operation) failed in \(path): \(message)"
        }
    }

    /// What a damaged file's owner can do: the store rewrites nothing itself.
    static let whatToDoWithDamage =
        "restore the file from a backup as a new file (see \"Identity\" in Docs/STORAGE.md), or move it aside "
        + "and start on a new one, which peers fill with what they hold"
}
