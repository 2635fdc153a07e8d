/// Named limits of the store.
public enum StoreLimits {
    /// Most ops written in one SQLite transaction by group commit.
    public static let groupCommitOpsMax = 8192
    /// Longest a pending op waits for its group commit, in milliseconds.
    public static let groupCommitDelayMillisecondsMax = 5
    /// Most pending (not yet durable) ops held in memory before writers wait.
    public static let pendingOpsMax = 65_536
    /// Milliseconds a connection waits on a lock held by another process before reporting it.
    public static let busyTimeoutMilliseconds = 2_000
    /// Most ops one paged log query (`ops(from:after:limit:)`, `ops(after:limit:)`) returns.
    public static let opsPerQueryMax = 65_536
    /// SQLite page size of a new database, in bytes: larger pages mean fewer pages touched per commit
    /// (measured: about a quarter more inserts per second than 4 KiB pages).
    public static let pageBytes = 16_384
    /// SQLite page cache of the store's connection, in KiB: room for the hot pages of a tree of a few
    /// million nodes, so that commits touching nodes all over it read few pages back from the file.
    public static let pageCacheKibibytes = 65_536
    /// Bytes of a random instance token.
    public static let instanceTokenBytes = 16
    /// Most bytes read from a lock file to learn the pid of the process holding it.
    public static let lockFilePidBytesMax = 32
    /// Most times an opener that lost the lock reads the holder's pid while the file is still empty
    /// (the holder writes it just after it takes the lock), and the pause between two reads.
    public static let lockFilePidReadsMax = 20
    public static let lockFilePidReadPauseMicroseconds = 2_000
    /// Smallest file SQLite can have written (one page of the smallest size): a shorter file that is
    /// not empty is not a database, and SQLite would take a one-byte file for an empty one.
    public static let databaseBytesMin = 512
    /// Most commits a `MemoryStore` in `.normal` durability keeps unsynced before it syncs on its own,
    /// the way SQLite's WAL auto-checkpoint (1000 pages) syncs the log.
    public static let memoryUnsyncedCommitsMax = 1_000
    /// Most synced commits a `MemoryStore` keeps as a list before it applies them to its copy of the
    /// disk's state: that copy is needed only after a crash, so it is brought up to date lazily.
    public static let memorySyncedBacklogMax = 100_000
    /// Most tree writes a `MemoryStore` keeps as a list before it applies them to its tree: the tree is
    /// read only to recover, snapshot or measure, so it is brought up to date lazily.
    public static let memoryTreeWritesPendingMax = 100_000
}
