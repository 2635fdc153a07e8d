import WeftCore

/// How much a commit waits for the disk before it returns.
///
/// ```swift
/// let store = try SQLiteStore(path: "/var/lib/weft/app.sqlite", options: .init(durability: .full))
/// ```
public enum Durability: Sendable, Hashable, CustomStringConvertible {
    /// `PRAGMA synchronous = NORMAL` in WAL mode: a commit survives a crash of the process, and is
    /// fsynced at the next checkpoint; a power loss can lose the last commits (never part of one).
    case normal
    /// `PRAGMA synchronous = FULL`: the WAL is fsynced before every commit returns; a commit survives a
    /// power loss.
    case full

    public var description: String {
        switch self {
        case .normal: return "normal"
        case .full: return "full"
        }
    }
}

/// How a store is opened.
///
/// ```swift
/// var options = StoreOptions(durability: .full)
/// options.replicaForNewDatabase = ReplicaID(rawValue: 42)
/// ```
public struct StoreOptions: Sendable, Hashable {
    /// The durability of commits.
    public var durability: Durability
    /// The replica id given to a database created by this open; nil draws a random one. An existing
    /// database keeps its own id.
    public var replicaForNewDatabase: ReplicaID?
    /// The largest the database may grow, in pages (SQLite `max_page_count`); nil for no limit. A
    /// commit that would grow past it fails with ``StoreError/diskFull(path:operation:)``.
    public var pageCountMax: Int?

    /// Options with the given durability, a random id for a new database, and no size limit.
    public init(durability: Durability = .normal, replicaForNewDatabase: ReplicaID? = nil, pageCountMax: Int? = nil) {
        self.durability = durability
        self.replicaForNewDatabase = replicaForNewDatabase
        self.pageCountMax = pageCountMax
    }
}
