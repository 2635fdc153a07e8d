/// The limits of the daemon's HTTP face, named so that the docs and tests can point at them.
public enum HTTPLimits {
    /// The largest request body read (`413` beyond it): the body of a write is held whole in memory.
    public static let requestBodyBytesMax = 16 * 1024 * 1024
    /// Change notifications one event stream may have unconsumed while its reader is slow (its writes
    /// block); past it the stream ends with `cancel`. Only a count is kept, never the events.
    public static let streamBacklogMax = 10_000
    /// Event streams open at once; one more is refused with `503`.
    public static let streamsMax = 1_024
    /// The interval between `keep-alive` events, as Firebase sends them.
    public static let keepAliveSecondsDefault: Double = 30
    /// The longest `orderBy` child path, query bound or `auth` value read from a query string.
    public static let queryParameterBytesMax = 4_096
}
