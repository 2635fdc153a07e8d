import WeftCore

/// The kinds of fault a swarm may enable. Each seed enables a random subset of the allowed kinds
/// (swarm testing: a run with fewer kinds of fault goes deeper into the ones it has).
public enum FaultKind: String, Codable, Sendable, Hashable, CaseIterable {
    case partitionSymmetric = "partition"
    case partitionAsymmetric = "asymmetric-partition"
    case isolate
    case clog
    case drop
    case duplicate
    case reorder
    case delay
    case crash
    case hubCrash = "hub-crash"
    case clockSkew = "clock-skew"
    case clockJump = "clock-jump"
}

/// What a swarm or a run draws its scenarios from, besides the seed.
///
/// ```swift
/// var options = ScenarioOptions()
/// options.replicasMin = 5
/// options.replicasMax = 5
/// options.opCount = 2_000
/// ```
public struct ScenarioOptions: Codable, Sendable, Hashable {
    /// Fewest replicas drawn.
    public var replicasMin = 2
    /// Most replicas drawn.
    public var replicasMax = 8
    /// Ops written per run, all replicas together.
    public var opCount = 500
    /// The topology, or nil to draw it.
    public var topology: Topology?
    /// Fault kinds a seed may enable.
    public var faults: Set<FaultKind> = Set(FaultKind.allCases)
    /// True to enable every allowed fault kind in every seed instead of a random subset.
    public var allFaults = false
    /// A deliberately broken merge rule for every seed; nil for the real engine.
    public var sabotage: Sabotage?
    /// Where replicas keep their logs.
    public var storage: StorageKind = .memoryStore
    /// Share of seeds in which one replica keeps its log in a SQLite file instead.
    public var sqliteShare = 0.02
    /// Share of hub seeds (of 3 replicas or more) with a late joiner (see ``LateJoiner``); 0 draws none
    /// and leaves every other draw as it was.
    public var lateJoinerShare = 0.0
    /// Share of writes that are relation changes (links, unlinks and deletes planned with integrity
    /// under `/rel`); 0 writes none and leaves every other draw as it was.
    public var relationShare = 0.0
    /// Share of hub seeds with a replica limited to one subtree (see ``ShareLeaf``); 0 draws none and
    /// leaves every other draw as it was.
    public var shareLeafShare = 0.0

    /// The default options: 2 to 8 replicas, 500 ops, every fault kind allowed.
    public init() {}

    enum CodingKeys: String, CodingKey {
        case replicasMin, replicasMax, opCount, topology, faults, allFaults, sabotage, storage, sqliteShare
        case lateJoinerShare, relationShare, shareLeafShare
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        replicasMin = try container.decode(Int.self, forKey: .replicasMin)
        replicasMax = try container.decode(Int.self, forKey: .replicasMax)
        opCount = try container.decode(Int.self, forKey: .opCount)
        topology = try container.decodeIfPresent(Topology.self, forKey: .topology)
        faults = Set(try container.decode([FaultKind].self, forKey: .faults))
        allFaults = try container.decode(Bool.self, forKey: .allFaults)
        sabotage = try container.decodeIfPresent(Sabotage.self, forKey: .sabotage)
        storage = try container.decode(StorageKind.self, forKey: .storage)
        sqliteShare = try container.decode(Double.self, forKey: .sqliteShare)
        lateJoinerShare = try container.decodeIfPresent(Double.self, forKey: .lateJoinerShare) ?? 0
        relationShare = try container.decodeIfPresent(Double.self, forKey: .relationShare) ?? 0
        shareLeafShare = try container.decodeIfPresent(Double.self, forKey: .shareLeafShare) ?? 0
    }

    /// Encodes the fault kinds in a fixed order, so that a report's bytes depend on nothing else.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(replicasMin, forKey: .replicasMin)
        try container.encode(replicasMax, forKey: .replicasMax)
        try container.encode(opCount, forKey: .opCount)
        try container.encodeIfPresent(topology, forKey: .topology)
        try container.encode(FaultKind.allCases.filter(faults.contains), forKey: .faults)
        try container.encode(allFaults, forKey: .allFaults)
        try container.encodeIfPresent(sabotage, forKey: .sabotage)
        try container.encode(storage, forKey: .storage)
        try container.encode(sqliteShare, forKey: .sqliteShare)
        if lateJoinerShare > 0 { try container.encode(lateJoinerShare, forKey: .lateJoinerShare) }
        if relationShare > 0 { try container.encode(relationShare, forKey: .relationShare) }
        if shareLeafShare > 0 { try container.encode(shareLeafShare, forKey: .shareLeafShare) }
    }

    /// Checks the options against ``SimulationLimits``.
    /// - Throws: ``SimulationError/invalidScenario(reason:)``.
    public func validate() throws {
        let range = SimulationLimits.replicasMin...SimulationLimits.replicasMax
        guard range.contains(replicasMin), range.contains(replicasMax), replicasMin <= replicasMax else {
            throw SimulationError.invalidScenario(reason: "replicas must be within \(range), min before max")
        }
        guard (1...SimulationLimits.opsMax).contains(opCount) else {
            throw SimulationError.invalidScenario(reason: "ops must be in 1...\(SimulationLimits.opsMax)")
        }
        guard (0...1).contains(sqliteShare) else {
            throw SimulationError.invalidScenario(reason: "the SQLite share must be in 0...1")
        }
        guard (0...1).contains(relationShare) else {
            throw SimulationError.invalidScenario(reason: "the relation share must be in 0...1")
        }
        guard (0...1).contains(lateJoinerShare) else {
            throw SimulationError.invalidScenario(reason: "the late joiner share must be in 0...1")
        }
        guard (0...1).contains(shareLeafShare) else {
            throw SimulationError.invalidScenario(reason: "the share leaf share must be in 0...1")
        }
    }
}

extension Scenario {
    /// Draws the scenario of `seed`: replicas, topology, enabled faults and their rates, the fault
    /// schedule, disks, clocks and session settings.
    ///
    /// ```swift
    /// let scenario = Scenario.draw(seed: 7, options: ScenarioOptions())
    /// ```
    public static func draw(seed: UInt64, options: ScenarioOptions) -> Scenario {
        var rng = RandomStream.scenario.generator(seed: seed)
        let replicaCount = rng.int(in: options.replicasMin...options.replicasMax)
        let topology = options.topology ?? (rng.chance(0.5) ? .hub : .mesh)
        let enabled = Set(
            FaultKind.allCases.filter { kind in
                // Draw for every kind, allowed or not, so that allowing one kind changes no other draw.
                let picked = rng.chance(0.5)
                return options.faults.contains(kind) && (options.allFaults || picked)
            })
        let rate = max(1, rng.int(in: 1...8))
        let ticksFault = min(
            SimulationLimits.ticksFaultMax,
            max(SimulationLimits.ticksFaultMin, UInt64(options.opCount * 2 / rate) + rng.below(500)))
        let network = drawNetwork(enabled: enabled, rng: &rng)
        var sessions = drawSessions(opCount: options.opCount, rng: &rng)
        // A handshake takes three one-way trips, and a ping's answer one round trip: timeouts shorter
        // than twice that on the slowest link of the draw could never be met, even after healing.
        // (No draw is spent: every other draw stays as it was.)
        let trip = network.latencyTicksMax + network.jitterTicksMax
        sessions.handshakeTimeoutTicks = max(sessions.handshakeTimeoutTicks, 6 * trip)
        sessions.idleTimeoutTicks = max(sessions.idleTimeoutTicks, sessions.pingIntervalTicks + 4 * trip)
        var replicas = (0..<replicaCount).map { _ in
            drawReplica(enabled: enabled, storage: options.storage, rng: &rng)
        }
        let sqliteReplica = Int(rng.below(UInt64(replicaCount)))
        if rng.chance(options.sqliteShare) {
            replicas[sqliteReplica].storage = .sqliteStore
            replicas[sqliteReplica].syncsEveryCommit = true
        }
        var drawer = EpisodeDrawer(
            replicaCount: replicaCount, topology: topology, ticksFault: ticksFault,
            offsets: replicas.map(\.clockOffsetMillis))
        var episodes = drawer.draw(enabled: enabled, rng: &rng)
        // Drawn last, and only when asked for: every other draw stays as it was.
        var lateJoiner: LateJoiner?
        if options.lateJoinerShare > 0, topology == .hub, replicaCount >= 3, rng.chance(options.lateJoinerShare) {
            let joiner = replicaCount - 1
            lateJoiner = LateJoiner(replica: joiner, joinTick: ticksFault / 4 + rng.below(ticksFault / 4))
            episodes.removeAll { if case .crash(joiner, _) = $0.fault { true } else { false } }
        }
        // After the late joiner, and only when asked for (from a stream of its own: every other draw stays
        // as it was): replica 1, never the hub nor the joiner (the last replica, of 3 or more).
        var shareLeaf: ShareLeaf?
        var leafRNG = RandomStream.shareLeaves.generator(seed: seed)
        if options.shareLeafShare > 0, options.sabotage == nil, topology == .hub, replicaCount >= 2,
            lateJoiner?.replica != 1, leafRNG.chance(options.shareLeafShare)
        {
            shareLeaf = ShareLeaf(replica: 1, root: ShareLeaf.drawnRoot)
            // Its disk would read back partial ops, which the checker's recovery model does not hold.
            episodes.removeAll { if case .crash(1, _) = $0.fault { true } else { false } }
        }
        return Scenario(
            seed: seed, replicaCount: replicaCount, workloadWriters: replicaCount, topology: topology,
            opCount: options.opCount, ticksFault: ticksFault, network: network, sessions: sessions,
            replicas: replicas, episodes: episodes, sabotage: options.sabotage, lateJoiner: lateJoiner,
            relationShare: options.relationShare > 0 ? options.relationShare : nil, shareLeaf: shareLeaf)
    }

    static func drawNetwork(enabled: Set<FaultKind>, rng: inout SeededGenerator) -> NetworkProfile {
        func rate(_ kind: FaultKind) -> Double {
            let draw = Double(rng.below(1_000_000)) / 1_000_000 * SimulationLimits.frameFaultRateMax
            return enabled.contains(kind) ? max(draw, 0.001) : 0
        }
        let delayed = enabled.contains(.delay)
        let latencyMax = delayed ? UInt64(rng.int(in: 5...Int(SimulationLimits.latencyTicksMax))) : 1 + rng.below(4)
        return NetworkProfile(
            latencyTicksMax: latencyMax, jitterTicksMax: delayed ? rng.below(latencyMax + 1) : rng.below(2),
            dropRate: rate(.drop), duplicateRate: rate(.duplicate), reorderRate: rate(.reorder),
            delaySpikeRate: rate(.delay), chunksBytes: rng.chance(0.5),
            resetOnCrashRate: Double(rng.below(101)) / 100)
    }

    /// Windows, batches and timers. The smallest windows are kept for smaller runs: a replica back
    /// from a crash catches up at about a window per round trip, and that must fit the convergence
    /// bound (two bytes of window per op written keeps it within a few thousand ticks).
    static func drawSessions(opCount: Int, rng: inout SeededGenerator) -> SessionProfile {
        let windowBytesNeeded = min(SimulationLimits.windowBytesMax, opCount * 2)
        let windows = [SimulationLimits.windowBytesMin, 4096, 16 * 1024, 64 * 1024, SimulationLimits.windowBytesMax]
            .filter { $0 >= windowBytesNeeded }
        let batches = [SimulationLimits.batchOpsMin, 4, 16, 64, SimulationLimits.batchOpsMax]
        let ping = UInt64(
            rng.int(in: Int(SimulationLimits.pingIntervalTicksMin)...Int(SimulationLimits.pingIntervalTicksMax)))
        return SessionProfile(
            windowBytes: windows[Int(rng.below(UInt64(windows.count)))],
            batchOpsMax: batches[Int(rng.below(UInt64(batches.count)))], pingIntervalTicks: ping,
            idleTimeoutTicks: ping * (3 + rng.below(4)), handshakeTimeoutTicks: ping * (2 + rng.below(4)))
    }

    static func drawReplica(
        enabled: Set<FaultKind>, storage: StorageKind, rng: inout SeededGenerator
    ) -> ReplicaProfile {
        let limit = SimulationLimits.clockOffsetMillisMax
        let offset = Int64(rng.int(in: Int(-limit)...Int(limit)))
        let interval = rng.int(
            in: Int(SimulationLimits.syncIntervalTicksMin)...Int(SimulationLimits.syncIntervalTicksMax))
        return ReplicaProfile(
            syncsEveryCommit: rng.chance(0.5), syncIntervalTicks: UInt64(interval),
            clockOffsetMillis: enabled.contains(.clockSkew) ? offset : 0, storage: storage)
    }
}

/// Draws the fault schedule of a scenario.
struct EpisodeDrawer {
    let replicaCount: Int
    let topology: Topology
    let ticksFault: UInt64
    /// Clock offsets so far, per replica, so that permanent jumps keep them within bounds.
    var offsets: [Int64]

    mutating func draw(enabled: Set<FaultKind>, rng: inout SeededGenerator) -> [Episode] {
        var episodes: [Episode] = []
        for kind in FaultKind.allCases {
            let count = 1 + Int(rng.below(4))
            for _ in 0..<count {
                let start = rng.below(ticksFault)
                guard let episode = draw(kind, start: start, rng: &rng), enabled.contains(kind) else { continue }
                episodes.append(episode)
            }
        }
        // Stable: by start tick, then in drawing order.
        let sorted = episodes.enumerated().sorted {
            ($0.element.startTick, $0.offset) < ($1.element.startTick, $1.offset)
        }.map(\.element)
        return Self.boundingDriftWaits(sorted)
    }

    /// Drops backward clock jumps after the first run beyond the drift limit: that run is measured
    /// from the slowest clock when it starts, and a clock going back later would make peers wait
    /// longer than the convergence bound for it.
    static func boundingDriftWaits(_ episodes: [Episode]) -> [Episode] {
        guard
            let first = episodes.first(where: {
                if case .clockBeyondDrift = $0.fault { return true } else { return false }
            })
        else { return episodes }
        return episodes.filter { episode in
            guard case .clockJump(_, let delta) = episode.fault else { return true }
            return delta >= 0 || episode.startTick < first.startTick
        }
    }

    /// One episode of `kind` starting at `start`; nil for kinds that are not episodes.
    mutating func draw(_ kind: FaultKind, start: UInt64, rng: inout SeededGenerator) -> Episode? {
        let room = ticksFault - start
        func duration(_ range: ClosedRange<Int>) -> UInt64 { min(room, UInt64(rng.int(in: range))) }
        let replica = Int(rng.below(UInt64(replicaCount)))
        switch kind {
        case .partitionSymmetric, .partitionAsymmetric:
            var members = Array(0..<replicaCount)
            rng.shuffle(&members)
            let side = Array(members.prefix(1 + Int(rng.below(UInt64(replicaCount - 1))))).sorted()
            return Episode(
                startTick: start, durationTicks: duration(50...2_000),
                fault: .partition(side: side, symmetric: kind == .partitionSymmetric))
        case .isolate:
            return Episode(startTick: start, durationTicks: duration(50...2_000), fault: .isolate(replica: replica))
        case .clog:
            let other = (replica + 1 + Int(rng.below(UInt64(replicaCount - 1)))) % replicaCount
            return Episode(startTick: start, durationTicks: duration(10...600), fault: .clog(from: replica, to: other))
        case .crash:
            let down = duration(1...Int(SimulationLimits.downTicksMax))
            return Episode(startTick: start, durationTicks: down, fault: .crash(replica: replica, hub: false))
        case .hubCrash:
            guard topology == .hub else { return nil }
            let down = duration(1...Int(SimulationLimits.downTicksMax))
            return Episode(
                startTick: start, durationTicks: down, fault: .crash(replica: Scenario.hubIndex, hub: true))
        case .clockJump:
            return drawClockJump(replica: replica, start: start, room: room, rng: &rng)
        case .drop, .duplicate, .reorder, .delay, .clockSkew:
            return nil
        }
    }

    /// A permanent jump within the offset bounds, or (one time in five) a short run past the drift
    /// limit, after which peers refuse the replica's stamps until their clocks catch up.
    mutating func drawClockJump(replica: Int, start: UInt64, room: UInt64, rng: inout SeededGenerator) -> Episode {
        if rng.chance(0.2) {
            let beyond = 1 + rng.below(SimulationLimits.beyondDriftMillisMax)
            return Episode(
                startTick: start, durationTicks: min(room, 20 + rng.below(300)),
                fault: .clockBeyondDrift(replica: replica, beyondMillis: beyond))
        }
        let limit = SimulationLimits.clockOffsetMillisMax
        let jumpMax = SimulationLimits.clockJumpMillisMax
        let low = max(-limit - offsets[replica], -jumpMax)
        let high = min(limit - offsets[replica], jumpMax)
        let delta = Int64(rng.int(in: Int(low)...Int(high)))
        offsets[replica] += delta
        return Episode(startTick: start, durationTicks: 0, fault: .clockJump(replica: replica, deltaMillis: delta))
    }
}

/// The independent random streams of a run, each derived from the seed, so that a change in how
/// one concern draws leaves the others' draws unchanged (which keeps shrinking stable).
enum RandomStream: UInt64, CaseIterable {
    case scenario = 1
    case workload
    case writes
    case network
    case nonces
    case disk
    case checks
    case relations
    case shareLeaves

    /// The generator of this stream for `seed`.
    func generator(seed: UInt64) -> SeededGenerator {
        var hasher = FNV1a()
        hasher.add(seed)
        hasher.add(rawValue)
        return SeededGenerator(seed: hasher.state)
    }
}
