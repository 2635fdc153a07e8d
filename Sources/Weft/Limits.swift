import WeftSync

/// Named limits of the public API.
public enum WeftLimits {
    /// Most attempts of a transaction closure before it reports `retriesExhausted` (Firebase's 25).
    public static let transactionRetriesMax = 25
    /// Most events buffered for one subscriber before the oldest are coalesced.
    public static let subscriberEventsBufferedMax = 10_000
}

/// Named limits of the sync shell (``SyncDriver``).
public enum SyncShellLimits {
    /// Most frame bytes a channel holds while its connection pushes back: a full window of ops and one
    /// largest control frame. Beyond it the session closes with `limitExceeded`.
    public static let queuedBytesMax = SyncLimits.windowBytesMax + SyncLimits.frameBytesMax
    /// Most changed paths remembered between two passes over client watches; beyond it every watch is
    /// re-read on the next pass.
    public static let watchPathsPendingMax = 4_096
    /// Most outbound peers one driver dials.
    public static let outboundPeersMax = 256
}
