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
}
