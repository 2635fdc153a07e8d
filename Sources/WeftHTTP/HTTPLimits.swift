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
    /// The delay before the first retry of a failed webhook delivery (doubled at each failure, jittered).
    public static let webhookRetryBaseMillis: Int64 = 500
    /// The longest delay between two attempts of a webhook delivery.
    public static let webhookRetryCapMillis: Int64 = 300_000
    /// How long a webhook receiver has to answer a delivery before it counts as failed.
    public static let webhookTimeoutSeconds: Double = 10
    /// Deliveries in flight at once, across subscriptions (one at most per subscription, to keep order).
    public static let webhookConcurrentMax = 32
    /// How long a stopping server lets the requests in progress end before it is cancelled.
    public static let shutdownGraceSeconds: Double = 5
}
