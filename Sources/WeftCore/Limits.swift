/// Named limits of the deterministic core. Every size, count and depth that WeftCore checks lives here.
public enum CoreLimits {
    /// Longest key, in UTF-8 bytes (Firebase's limit).
    public static let keyBytesMax = 768
    /// Deepest path, in segments.
    public static let pathDepthMax = 32
    /// Longest string value, in UTF-8 bytes (10 MiB).
    public static let stringBytesMax = 10 * 1024 * 1024
    /// Largest encoded op, in bytes (a 10 MiB string fits; a sync frame of one op fits the transport).
    public static let opBytesMax = 14 * 1024 * 1024
    /// Most children one object may hold in an encoded value.
    public static let objectChildrenMax = 10_000_000
    /// Most parts in one batch op, and most children listed by one merge op.
    public static let batchPartsMax = 100_000
    /// Most separate paths one guarded batch (a transaction that read several nodes) may read.
    public static let guardedReadsMax = 256
    /// Most origins in one version vector.
    public static let versionVectorEntriesMax = 1_000_000
    /// Largest JSON text accepted, in bytes.
    public static let jsonBytesMax = 256 * 1024 * 1024
    /// Deepest JSON nesting accepted by the parser (the tree depth limit plus array/object slack).
    public static let jsonNestingMax = pathDepthMax + 1
    /// Largest HLC logical counter before the clock borrows the next millisecond.
    public static let stampCounterMax: UInt16 = .max
    /// Largest wall time a stamp can carry (48 bits of milliseconds).
    public static let stampMillisMax: UInt64 = (1 << 48) - 1
    /// Default largest distance a remote stamp may run ahead of the local wall clock.
    public static let driftMillisMaxDefault: UInt64 = 60_000
    /// Longest registered function name, in UTF-8 bytes.
    public static let functionNameBytesMax = 256
    /// Most regions one re-fold takes in before the engine re-folds the whole tree instead. A re-fold's
    /// questions cost about a path's depth however many regions it holds (see `RootSet`), and the whole
    /// tree replays every op after the change: the fallback is for closures too large to track.
    public static let refoldRegionsMax = 65_536
    /// Ops a re-fold replays between two snapshots it keeps of its region.
    public static let snapshotSpacing = 8
    /// Ops a late transaction's check looks at among those its origin had not seen, before it walks the
    /// index of its subtree instead.
    public static let unseenOpsScanMax = 512
    /// Ops arriving in one re-fold that a transaction is checked against one by one; with more, the
    /// transaction rule is checked from the log.
    public static let arrivingOpsScanMax = 32
    /// Later ops of a counter that a late increment's shortcut looks at before it leaves the increment
    /// to a re-fold.
    public static let counterWindowMax = 256
    /// Most writes a late batch of blind writes may hold for the engine to take them one by one (their
    /// nodes are checked pairwise for overlap).
    public static let blindBatchWritesMax = 16
    /// Touches of compacted ops below a transaction's node that the transaction rule reads one by one
    /// from the sorted list a reopened engine started from, before it records them all in a trie.
    public static let compactedTouchScanMax = 4_096
    /// Snapshots kept per region.
    public static let snapshotsPerNodeMax = 48
    /// Nodes a region may hold for a re-fold to keep snapshots of it every ``snapshotSpacing`` ops.
    public static let snapshotNodesSmall = 256
    /// Nodes a larger region may hold per op replayed since its last snapshot for a re-fold to keep
    /// another (a snapshot shares the region, so the next writes there copy the objects on their paths;
    /// and the region is counted to know).
    public static let snapshotNodesPerOp = 8
    /// Most children a query's window may hold (`limit(toFirst:)`, `limit(toLast:)`).
    public static let queryLimitMax = objectChildrenMax
    /// Most children a query may skip (`offset(_:)`).
    public static let queryOffsetMax = objectChildrenMax
    /// Most nodes (comparisons, `exists`, `in`, `&&`, `||`, `!`) in a query's predicate.
    public static let queryPredicateNodesMax = 256
    /// Deepest nesting of a query's predicate (each `&&`, `||` and `!` is a level).
    public static let queryPredicateDepthMax = 32
    /// Most values an `in` predicate lists.
    public static let queryInValuesMax = 1_024
    /// Most entries in one chunk of a query index: an update moves at most this many entries, and a reader's
    /// copy of the index shares every chunk a later write does not touch.
    public static let queryIndexChunkEntriesMax = 512
    /// Children an index build reads between two reports of its progress.
    public static let queryIndexProgressStep = 65_536
    /// Largest encoded query, in bytes (its bounds and comparands are scalars: strings are the bulk).
    public static let queryBytesMax = 1024 * 1024
}
