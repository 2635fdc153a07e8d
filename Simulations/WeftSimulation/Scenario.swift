/// Everything that decides a run besides the code: the seed of every random stream, the shape of
/// the world, the fault rates and the fault schedule.
///
/// A scenario is drawn from a seed (``Scenario/draw(seed:options:)``), or read from a schedule file
/// written by the shrinker. The same scenario on the same commit gives the same run, bit for bit.
///
/// ```swift
/// let scenario = Scenario.draw(seed: 42, options: ScenarioOptions())
/// let report = Simulation(scenario: scenario).run()
/// print(report.traceHash)
/// ```
public struct Scenario: Codable, Sendable, Hashable {
    /// The root of every random stream of the run (workload, network, disk, nonces).
    public var seed: UInt64
    /// Replicas in the world.
    public var replicaCount: Int
    /// Writers of the workload stream. Fixed when the scenario is drawn, so that dropping replicas
    /// while shrinking keeps the ops of the remaining ones.
    public var workloadWriters: Int
    /// How replicas are linked.
    public var topology: Topology
    /// Ops drawn from the workload stream.
    public var opCount: Int
    /// Indices of the workload ops that are written; nil writes them all. The shrinker narrows it.
    public var keptWrites: [Int]?
    /// Length of the fault phase, in ticks; healing follows.
    public var ticksFault: UInt64
    /// Latencies and per-frame fault rates.
    public var network: NetworkProfile
    /// Windows, batches and timers of the sessions.
    public var sessions: SessionProfile
    /// Disk and clock of each replica.
    public var replicas: [ReplicaProfile]
    /// Scheduled faults, by start tick.
    public var episodes: [Episode]
    /// A deliberately broken merge rule, to prove the checkers catch it; nil for the real engine.
    public var sabotage: Sabotage?
    /// A replica the others do not know until it joins (hub topology), or nil.
    public var lateJoiner: LateJoiner?
    /// Share of writes that are relation changes under `/rel` (see `RelationWorkload`); nil for none.
    public var relationShare: Double?
    /// A replica the hub lets read and write one subtree only (hub topology), or nil.
    public var shareLeaf: ShareLeaf?

    /// A scenario from its parts; ``draw(seed:options:)`` is the usual way to get one.
    public init(
        seed: UInt64, replicaCount: Int, workloadWriters: Int, topology: Topology, opCount: Int,
        keptWrites: [Int]? = nil, ticksFault: UInt64, network: NetworkProfile, sessions: SessionProfile,
        replicas: [ReplicaProfile], episodes: [Episode], sabotage: Sabotage? = nil, lateJoiner: LateJoiner? = nil,
        relationShare: Double? = nil, shareLeaf: ShareLeaf? = nil
    ) {
        self.seed = seed
        self.replicaCount = replicaCount
        self.workloadWriters = workloadWriters
        self.topology = topology
        self.opCount = opCount
        self.keptWrites = keptWrites
        self.ticksFault = ticksFault
        self.network = network
        self.sessions = sessions
        self.replicas = replicas
        self.episodes = episodes
        self.sabotage = sabotage
        self.lateJoiner = lateJoiner
        self.relationShare = relationShare
        self.shareLeaf = shareLeaf
    }

    /// Checks the scenario against ``SimulationLimits`` (a schedule file comes from outside).
    /// - Throws: ``SimulationError/invalidScenario(reason:)`` naming the first broken rule.
    public func validate() throws {
        func require(_ condition: Bool, _ reason: String) throws {
            guard condition else { throw SimulationError.invalidScenario(reason: reason) }
        }
        let replicaRange = SimulationLimits.replicasMin...SimulationLimits.replicasMax
        try require(replicaRange.contains(replicaCount), "replicaCount must be in \(replicaRange)")
        try require(workloadWriters >= replicaCount, "workloadWriters must be at least replicaCount")
        try require(workloadWriters <= SimulationLimits.replicasMax, "workloadWriters is above replicasMax")
        try require(
            (0...SimulationLimits.opsMax).contains(opCount), "opCount must be in 0...\(SimulationLimits.opsMax)")
        let tickRange = SimulationLimits.ticksFaultMin...SimulationLimits.ticksFaultMax
        try require(tickRange.contains(ticksFault), "ticksFault must be in \(tickRange)")
        try require(replicas.count == replicaCount, "one replica profile per replica")
        try require(episodes.count <= SimulationLimits.episodesMax, "at most \(SimulationLimits.episodesMax) episodes")
        if let keptWrites {
            try require(keptWrites.allSatisfy { (0..<opCount).contains($0) }, "keptWrites must index the ops")
            try require(zip(keptWrites, keptWrites.dropFirst()).allSatisfy { $0 < $1 }, "keptWrites must ascend")
        }
        try network.validate()
        try sessions.validate()
        for profile in replicas { try profile.validate() }
        for episode in episodes {
            try episode.validate(replicaCount: replicaCount, ticksFault: ticksFault, topology: topology)
        }
        if let relationShare { try require((0...1).contains(relationShare), "relationShare must be in 0...1") }
        if let lateJoiner {
            try require(topology == .hub, "a late joiner needs the hub topology")
            try require(
                (1..<replicaCount).contains(lateJoiner.replica) && lateJoiner.replica != Scenario.hubIndex,
                "the late joiner must be a replica other than the hub")
            try require(lateJoiner.joinTick < ticksFault, "a late joiner joins within the fault phase")
            try require(
                !episodes.contains { if case .crash(lateJoiner.replica, _) = $0.fault { true } else { false } },
                "a late joiner does not crash (its disk does not model an installed base)")
        }
        if let shareLeaf { try shareLeaf.validate(in: self) }
    }

    /// Replica that others dial in a hub topology.
    public static let hubIndex = 0
}

/// A replica that writes alone, unknown to the others, until `joinTick`: then it dials the hub, which
/// may have compacted ops it lacks and sends it a snapshot (its own writes below the hub's compaction
/// stamp are then stamped again).
public struct LateJoiner: Codable, Sendable, Hashable {
    /// Its index.
    public var replica: Int
    /// The tick its isolation ends.
    public var joinTick: UInt64

    public init(replica: Int, joinTick: UInt64) {
        self.replica = replica
        self.joinTick = joinTick
    }
}

/// How replicas are linked.
public enum Topology: String, Codable, Sendable, Hashable, CaseIterable {
    /// Every replica dials one hub (replica 0), which relays.
    case hub
    /// Peers dial each other: a full mesh up to ``SimulationLimits/fullMeshReplicasMax`` replicas,
    /// then a ring with chords. Peers relay, so the mesh converges transitively.
    case mesh
}

/// Latencies and per-frame fault rates of the network.
public struct NetworkProfile: Codable, Sendable, Hashable {
    /// Largest base one-way latency of a link, in ticks (each link draws its own up to this).
    public var latencyTicksMax: UInt64
    /// Largest random extra latency of each frame, in ticks.
    public var jitterTicksMax: UInt64
    /// Probability that a frame is lost (the stream is then damaged and reset).
    public var dropRate: Double
    /// Probability that a frame is delivered twice (the stream is then damaged and reset).
    public var duplicateRate: Double
    /// Probability that a frame overtakes the next one (the stream is then damaged and reset).
    public var reorderRate: Double
    /// Probability that a frame is held back by a delay spike (order kept, stream intact).
    public var delaySpikeRate: Double
    /// True to cut deliveries at random byte boundaries.
    public var chunksBytes: Bool
    /// Probability that a crashed replica's peers see the connection reset at once, rather than
    /// finding out through their idle timeout.
    public var resetOnCrashRate: Double

    /// A profile from its parts.
    public init(
        latencyTicksMax: UInt64, jitterTicksMax: UInt64, dropRate: Double, duplicateRate: Double,
        reorderRate: Double, delaySpikeRate: Double, chunksBytes: Bool, resetOnCrashRate: Double
    ) {
        self.latencyTicksMax = latencyTicksMax
        self.jitterTicksMax = jitterTicksMax
        self.dropRate = dropRate
        self.duplicateRate = duplicateRate
        self.reorderRate = reorderRate
        self.delaySpikeRate = delaySpikeRate
        self.chunksBytes = chunksBytes
        self.resetOnCrashRate = resetOnCrashRate
    }

    func validate() throws {
        let latencies = SimulationLimits.latencyTicksMin...SimulationLimits.latencyTicksMax
        guard latencies.contains(latencyTicksMax), jitterTicksMax <= SimulationLimits.latencyTicksMax else {
            throw SimulationError.invalidScenario(reason: "latencies must be in \(latencies) ticks")
        }
        for rate in [dropRate, duplicateRate, reorderRate, delaySpikeRate]
        where !(0...SimulationLimits.frameFaultRateMax).contains(rate) {
            throw SimulationError.invalidScenario(
                reason: "frame fault rates must be in 0...\(SimulationLimits.frameFaultRateMax)")
        }
        guard (0...1).contains(resetOnCrashRate) else {
            throw SimulationError.invalidScenario(reason: "resetOnCrashRate must be in 0...1")
        }
    }

    /// True when some frame fault can damage a stream.
    var damagesStreams: Bool { dropRate > 0 || duplicateRate > 0 || reorderRate > 0 }
}

/// Windows, batches and timers of every session of the run.
public struct SessionProfile: Codable, Sendable, Hashable {
    /// Receive window advertised by each side, in bytes.
    public var windowBytes: Int
    /// Most ops in one batch frame.
    public var batchOpsMax: Int
    /// Keep-alive interval, in ticks.
    public var pingIntervalTicks: UInt64
    /// Idle timeout, in ticks (at least twice the ping interval, at most
    /// ``SimulationLimits/sessionTimeoutTicksMax``).
    public var idleTimeoutTicks: UInt64
    /// Handshake timeout, in ticks (at most ``SimulationLimits/sessionTimeoutTicksMax``).
    public var handshakeTimeoutTicks: UInt64

    /// A profile from its parts.
    public init(
        windowBytes: Int, batchOpsMax: Int, pingIntervalTicks: UInt64, idleTimeoutTicks: UInt64,
        handshakeTimeoutTicks: UInt64
    ) {
        self.windowBytes = windowBytes
        self.batchOpsMax = batchOpsMax
        self.pingIntervalTicks = pingIntervalTicks
        self.idleTimeoutTicks = idleTimeoutTicks
        self.handshakeTimeoutTicks = handshakeTimeoutTicks
    }

    func validate() throws {
        let windows = SimulationLimits.windowBytesMin...SimulationLimits.windowBytesMax
        let batches = SimulationLimits.batchOpsMin...SimulationLimits.batchOpsMax
        let pings = SimulationLimits.pingIntervalTicksMin...SimulationLimits.pingIntervalTicksMax
        let timeouts = 1...SimulationLimits.sessionTimeoutTicksMax
        guard windows.contains(windowBytes), batches.contains(batchOpsMax), pings.contains(pingIntervalTicks),
            idleTimeoutTicks >= 2 * pingIntervalTicks, timeouts.contains(idleTimeoutTicks),
            timeouts.contains(handshakeTimeoutTicks)
        else { throw SimulationError.invalidScenario(reason: "session profile out of range") }
    }
}

/// Where a replica keeps its log.
public enum StorageKind: String, Codable, Sendable, Hashable, CaseIterable {
    /// WeftStore's `MemoryStore`, whose disk model loses unsynced commits in a crash.
    case memoryStore = "memory"
    /// WeftStore's `SQLiteStore` in a temporary folder (every commit synced; a crash closes and
    /// reopens the file).
    case sqliteStore = "sqlite"
    /// The simulator's own, faster disk model: an op log with synced and unsynced commits, no tree.
    case simulatedDisk = "simulated"
}

/// Disk and clock of one replica.
public struct ReplicaProfile: Codable, Sendable, Hashable {
    /// True when every commit is synced before the replica goes on (durability "full").
    public var syncsEveryCommit: Bool
    /// Ticks between two fsyncs when commits are not synced one by one.
    public var syncIntervalTicks: UInt64
    /// The replica's wall clock minus simulated time, in milliseconds, at tick 0.
    public var clockOffsetMillis: Int64
    /// Where the replica keeps its log.
    public var storage: StorageKind

    /// A profile from its parts.
    public init(syncsEveryCommit: Bool, syncIntervalTicks: UInt64, clockOffsetMillis: Int64, storage: StorageKind) {
        self.syncsEveryCommit = syncsEveryCommit
        self.syncIntervalTicks = syncIntervalTicks
        self.clockOffsetMillis = clockOffsetMillis
        self.storage = storage
    }

    func validate() throws {
        let intervals = SimulationLimits.syncIntervalTicksMin...SimulationLimits.syncIntervalTicksMax
        let offsets = -SimulationLimits.clockOffsetMillisMax...SimulationLimits.clockOffsetMillisMax
        guard intervals.contains(syncIntervalTicks), offsets.contains(clockOffsetMillis) else {
            throw SimulationError.invalidScenario(reason: "replica profile out of range")
        }
    }
}
