/// What a run actually did: each fault that happened, each protocol path taken, each check made.
///
/// A fault kind enabled in a scenario proves nothing by itself; these counters show it fired
/// (a frame really dropped, a crash really lost commits). Swarm reports add them up.
///
/// ```swift
/// report.coverage[.framesDropped]   // frames lost in this run
/// ```
public struct Coverage: Codable, Sendable, Hashable {
    private var counts: [Int]

    /// All counters at zero.
    public init() { counts = Array(repeating: 0, count: CoverageCounter.allCases.count) }

    /// The value of one counter.
    public subscript(counter: CoverageCounter) -> Int {
        get { counts[counter.index] }
        set { counts[counter.index] = newValue }
    }

    /// Adds one to a counter.
    mutating func bump(_ counter: CoverageCounter, by amount: Int = 1) { counts[counter.index] += amount }

    /// Adds every counter of `other` to this one.
    public mutating func add(_ other: Coverage) {
        for index in counts.indices { counts[index] += other.counts[index] }
    }

    /// Faults injected: the sum of the fault counters.
    public var faultsInjected: Int { CoverageCounter.faults.reduce(0) { $0 + self[$1] } }

    /// Counters by name, for reports.
    public var byName: [(name: String, count: Int)] { CoverageCounter.allCases.map { ($0.rawValue, self[$0]) } }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let named = try container.decode([String: Int].self)
        self.init()
        for counter in CoverageCounter.allCases { self[counter] = named[counter.rawValue] ?? 0 }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        var named: [String: Int] = [:]
        for counter in CoverageCounter.allCases { named[counter.rawValue] = self[counter] }
        try container.encode(named)
    }
}

/// The counters of ``Coverage``.
public enum CoverageCounter: String, Codable, Sendable, Hashable, CaseIterable {
    // Faults.
    case partitionsSymmetric = "partitions.symmetric"
    case partitionsAsymmetric = "partitions.asymmetric"
    case isolations
    case clogs
    case framesDropped = "frames.dropped"
    case framesDuplicated = "frames.duplicated"
    case framesReordered = "frames.reordered"
    case framesDelayed = "frames.delayed"
    case framesHeldByFaults = "frames.heldByFaults"
    case crashes
    case hubCrashes = "crashes.hub"
    case clockSkews = "clocks.skewed"
    case clockJumpsForward = "clocks.jumpedForward"
    case clockJumpsBackward = "clocks.jumpedBackward"
    case clockJumpsBeyondDrift = "clocks.beyondDrift"
    // Effects of faults.
    case unsyncedCommitsLost = "disk.unsyncedCommitsLost"
    case opsLostInCrashes = "disk.opsLostInCrashes"
    case restarts
    case sqliteReopens = "disk.sqliteReopens"
    case connectionsResetAfterDamage = "connections.resetAfterDamage"
    case connectionsResetByCrash = "connections.resetByCrash"
    case dialsFailed = "dials.failed"
    case driftRefusals = "clocks.driftRefusals"
    case writesWhileDown = "writes.whileDown"
    case deliveriesChunked = "deliveries.chunked"
    // Protocol.
    case sessionsReady = "sessions.ready"
    case sessionsTimedOut = "sessions.timedOut"
    case sessionsClosedOnProtocolErrors = "sessions.protocolErrors"
    case sessionsClosedOnLostConnections = "sessions.connectionLost"
    case framesSent = "frames.sent"
    case bytesSent = "bytes.sent"
    case duplicateOpsDelivered = "ops.duplicatesDelivered"
    case acknowledgements
    case opsCompacted = "ops.compacted"
    case snapshotsReceived = "snapshots.received"
    case snapshotsInstalled = "snapshots.installed"
    case snapshotsRefused = "snapshots.refused"
    case opsRestamped = "ops.restamped"
    case opsRefused = "ops.refused"
    // Workload.
    case opsWritten = "ops.written"
    case opsRejected = "ops.rejected"
    case transactionsRejected = "ops.transactionsRejected"
    case callsRefused = "ops.callsRefused"
    case bankTransfers = "ops.bankTransfers"
    case relationChanges = "ops.relationChanges"
    case relationFallbacks = "ops.relationFallbacks"
    // The share leaf (`ShareLeaf`)
    case leafPartialOps = "leaf.partialOps"
    case leafDecisionsCarried = "leaf.decisionsCarried"
    case leafRevisionsReceived = "leaf.revisionsReceived"
    case leafRevisionsTaken = "leaf.revisionsTaken"
    case leafShareSnapshotsInstalled = "leaf.shareSnapshotsInstalled"
    // Roads the merge engines took.
    case engineInOrder = "engine.inOrder"
    case engineCounterShortcuts = "engine.counterShortcuts"
    case engineHiddenWrites = "engine.hiddenWrites"
    case engineRefolds = "engine.refolds"
    case engineRefoldsCut = "engine.refoldsCut"
    case engineReplayedOps = "engine.replayedOps"
    case engineRedecidedOps = "engine.redecidedOps"
    case engineBatchedIntoRefolds = "engine.batchedIntoRefolds"
    // Checks.
    case foldChecks = "checks.fold"
    case digestChecks = "checks.digest"
    case duplicateChecks = "checks.duplicates"
    case recoveryChecks = "checks.recovery"
    case invariantChecks = "checks.mergeInvariants"
    case relationChecks = "checks.relations"
    case leafShareChecks = "checks.leafShare"

    /// The counters that count injected faults.
    public static let faults: [CoverageCounter] = [
        .partitionsSymmetric, .partitionsAsymmetric, .isolations, .clogs, .framesDropped, .framesDuplicated,
        .framesReordered, .framesDelayed, .crashes, .hubCrashes, .clockSkews, .clockJumpsForward,
        .clockJumpsBackward, .clockJumpsBeyondDrift,
    ]

    var index: Int { CoverageCounter.indices[self]! }

    private static let indices: [CoverageCounter: Int] = Dictionary(
        uniqueKeysWithValues: allCases.enumerated().map { ($0.element, $0.offset) })
}
