import WeftCore
import WeftSync

/// Named limits of the public API.
public enum WeftLimits {
    /// Failed delivery attempts in a row after which a subscription shows as failing (it keeps retrying).
    public static let subscriptionFailuresBeforeFailing = 5
    /// Most webhook and notification subscriptions one replica keeps.
    public static let subscriptionsMax = 10_000
    /// Most op stamps one webhook delivery lists (the latest ones; the delivery says when some are left out).
    public static let deliveryStampsMax = 100
    /// Most logged ops read to find the stamps of one webhook delivery: a node that missed more changes
    /// than this (a receiver down for long) lists the latest it found and says the list is incomplete.
    public static let deliveryStampsScanMax = 10_000
    /// Most key paths one observation (`DataNode.observe(keyPaths:on:_:)`) may name.
    public static let observedKeyPathsMax = 1_000
    /// Most attempts of a transaction closure before it reports `retriesExhausted` (Firebase's 25).
    public static let transactionRetriesMax = 25
    /// How long a transaction waits, by default, for its write to reach the awaited status (`.stable` on a
    /// replica that syncs) before it reports `.pending`, in seconds: long enough for a group that is
    /// connected to answer many times over, short enough that an offline app is not left hanging.
    public static let transactionWaitSecondsDefault: Int64 = 10
    /// How often ``Replica/waitUntilSynced(timeout:)`` and ``Replica/connect(to:token:waitUntilConnected:)``
    /// look at the sync loop's state again, in milliseconds.
    public static let syncWaitPollMilliseconds: Int64 = 2
    /// Most events buffered for one subscriber before they are coalesced (the latest per node).
    public static let subscriberEventsBufferedMax = 10_000
    /// Most coalesced events one subscriber may hold, one per node: a subscriber to a node with more
    /// children than this that falls this far behind loses the oldest of its child events.
    public static let subscriberEventsCoalescedMax = 1_000_000
    /// Most rows a replica's lazy open reads in one slice of the tree before it lets a waiting read
    /// through (a read waits at most one slice, a few milliseconds).
    public static let loadSliceRowsMax = 8_192
    /// Most nodes the base may hold in a region that a replica preserves whole before an unstable op
    /// changes it; larger regions are split into their children (see `Docs/STORAGE.md`).
    public static let preservedRegionNodesMax = 64
    /// Most change batches waiting for change listeners; beyond it new batches are folded into the last
    /// waiting one, so a slow listener cannot make the queue grow without bound.
    public static let changeBatchesQueuedMax = 1_024
    /// Most write receipts a replica tracks for their acknowledged and stable statuses; beyond it the
    /// oldest stop being updated after they are durable.
    public static let receiptsTrackedMax = 1_000_000
    /// Longest a replica's `groupCommitDelayMilliseconds` option may be.
    public static let groupCommitDelayMillisecondsMax = 100
    /// Most statuses waiting in one ``Replica/syncStatusUpdates()`` sequence; a slow reader skips the
    /// older ones (each status is whole, so the latest is all it needs).
    public static let syncStatusUpdatesBufferedMax = 16
    /// Most times one `decodedValue(as:)` offers a node to the decoder: once, then once more for each
    /// array field of the type the decoder found stored as an object (its elements share one attempt).
    public static let decodingAttemptsMax = 64
    /// Most bytes of a model's `Data` field: stored as base64 (4 characters per 3 bytes), it must fit in
    /// one string of the tree.
    public static let modelDataBytesMax = CoreLimits.stringBytesMax / 4 * 3
    /// Longest key `Values` makes when inserting between two elements: each insertion into the same gap
    /// may add a character; past this length, assign the whole collection to re-key it.
    public static let valuesKeyBytesMax = 512
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
    /// How long a dialled peer waits before dialling again after a refusal that only a change of
    /// configuration ends (`authenticationFailed`, `roleMismatch`): long, so that the pair does not
    /// trade refusals for ever, and fixed, so that a fix on the other side (a reload) is picked up.
    public static let refusedRedialDelayMilliseconds = 300_000

    // MARK: - Before authentication (see Docs/SECURITY.md)

    /// Bytes of unfinished frame each connection that has not authenticated may hold on its own: a
    /// client's hello (a few hundred bytes) fits with room to spare.
    public static let handshakeBytesReserved = 4 * 1024
    /// Most bytes all connections that have not authenticated may hold beyond their reserves, together
    /// (a peer's hello carries its version vector). A connection the pool cannot cover is refused with
    /// `busy`.
    public static let handshakeBytesSharedMax = 8 * 1024 * 1024
    /// The wait before answering the first recent failed authentication from one host, in milliseconds;
    /// it doubles with each further failure.
    public static let failedAuthenticationDelayMillisecondsBase: UInt64 = 250
    /// The longest wait before answering a failed authentication, in milliseconds (below a client's
    /// default connect timeout, so that it still hears why).
    public static let failedAuthenticationDelayMillisecondsMax: UInt64 = 3_000
    /// How long a host's failures are remembered after its last one, in milliseconds.
    public static let failedAuthenticationMemoryMilliseconds: UInt64 = 60_000
    /// Most hosts whose failed authentications are remembered.
    public static let failedAuthenticationHostsMax = 4_096
}
