import WeftCore

/// A broken property found by a checker: what, when, where, and the details to start debugging.
///
/// ```swift
/// if let failure = report.failure { print(failure.kind, failure.message) }
/// ```
public struct SimulationFailure: Codable, Sendable, Hashable, CustomStringConvertible {
    /// Which property broke.
    public enum Kind: String, Codable, Sendable, Hashable, CaseIterable {
        /// A replica's state is not the reference fold of the ops it knows.
        case stateDiffersFromFold = "state-differs-from-fold"
        /// Two replicas that know the same ops show different digests.
        case sameOpsDifferentDigests = "same-ops-different-digests"
        /// Delivering ops a replica already knows changed its state.
        case duplicateChangedState = "duplicate-changed-state"
        /// An op a replica had synced, or a peer had acknowledged, is missing after a crash or at the end.
        case durableOpLost = "durable-op-lost"
        /// An op lost in a crash (never synced) had already reached another replica.
        case unsyncedOpEscaped = "unsynced-op-escaped"
        /// Two different ops claim the same origin and sequence, or an op arrived altered.
        case conflictingOps = "conflicting-ops"
        /// A counter differs from the exact sum of its increments after its last set.
        case counterInexact = "counter-inexact"
        /// The bank's balances went below zero or stopped summing to the funded total.
        case bankInvariant = "bank-invariant"
        /// The converged state holds a link without its target or back-link, or a back-link without its
        /// link (`RelationIntegrity`).
        case relationIntegrity = "relation-integrity"
        /// A replica stamped an op no later than a stamp it had already made or seen.
        case stampNotMonotonic = "stamp-not-monotonic"
        /// What a replica read back from its disk is not what it had synced.
        case recoveryMismatch = "recovery-mismatch"
        /// A peer acknowledged ops it did not durably hold, or a stable frontier claimed ops a member lacks.
        case acknowledgementBeyondDurable = "acknowledgement-beyond-durable"
        /// Replicas did not converge within ``SimulationLimits/ticksMaxConvergence`` of healing.
        case notConverged = "not-converged"
        /// A session asked for something a replica-to-replica session never should.
        case unexpectedAction = "unexpected-action"
        /// The merge engine refused a local op or a storage call failed.
        case localFailure = "local-failure"
        /// The run handled more than ``SimulationLimits/eventsMax`` events.
        case runaway
        /// A merge engine's summaries differ from their recomputation from its log
        /// (`MergeEngine.checkInvariants()`).
        case mergeInvariantBroken = "merge-invariant-broken"
        /// A replica's stable stamp frontier passed an op some member does not durably hold
        /// (`ReplicaInstance.stableFrontier`).
        case stableBeyondHeld = "stable-beyond-held"
        /// The share leaf received a value outside its share, or does not end with its share of the hub.
        case shareLeaked = "share-leaked"
    }

    /// Which property broke.
    public var kind: Kind
    /// Simulated time of the discovery.
    public var tick: UInt64
    /// The replica concerned, when there is one.
    public var replica: Int?
    /// What was seen.
    public var message: String

    /// A failure from its parts.
    public init(kind: Kind, tick: UInt64, replica: Int?, message: String) {
        self.kind = kind
        self.tick = tick
        self.replica = replica
        self.message = message
    }

    /// A short text for logs and reports.

    public var description: String {
        let who = replica.map { " at r\($0)" } ?? ""
        return "\(kind.rawValue)\(who), tick \(tick): \(message)"
    }
}

/// The outcome of one run.
///
/// ```swift
/// let report = Simulation(scenario: scenario).run()
/// print(report.traceHashText, report.failure?.description ?? "ok")
/// ```
public struct SimulationReport: Codable, Sendable, Hashable {
    /// The seed of the run.
    public var seed: UInt64
    /// Replicas in the run.
    public var replicaCount: Int
    /// The run's topology.
    public var topology: Topology
    /// FNV-1a over every event handled, in order: equal hashes mean equal runs.
    public var traceHash: UInt64
    /// The first property found broken; nil for a passing run.
    public var failure: SimulationFailure?
    /// Ticks from the start of healing to convergence; nil when the run failed first.
    public var convergenceTicks: UInt64?
    /// Simulated time at the end of the run.
    public var ticks: UInt64
    /// Events handled.
    public var events: Int
    /// What happened, counted.
    public var coverage: Coverage
    /// The digest every replica converged to.
    public var finalDigest: UInt64?

    /// The trace hash as sixteen hex digits.
    public var traceHashText: String { StateDigest(rawValue: traceHash).description }

    /// True when no checker failed.
    public var passed: Bool { failure == nil }
}

// MARK: - Codable

extension SimulationReport {
    private enum CodingKeys: String, CodingKey {
        case seed, replicaCount, topology, traceHash, failure, convergenceTicks, ticks, events, coverage, finalDigest
    }

    /// The trace hash and the digest are written as sixteen hex digits, as the text output and the
    /// swarm's report write them: a JSON number above 2^53 loses its last digits in most readers (jq).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(seed, forKey: .seed)
        try container.encode(replicaCount, forKey: .replicaCount)
        try container.encode(topology, forKey: .topology)
        try container.encode(traceHashText, forKey: .traceHash)
        try container.encodeIfPresent(failure, forKey: .failure)
        try container.encodeIfPresent(convergenceTicks, forKey: .convergenceTicks)
        try container.encode(ticks, forKey: .ticks)
        try container.encode(events, forKey: .events)
        try container.encode(coverage, forKey: .coverage)
        try container.encodeIfPresent(finalDigest.map { StateDigest(rawValue: $0).description }, forKey: .finalDigest)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        seed = try container.decode(UInt64.self, forKey: .seed)
        replicaCount = try container.decode(Int.self, forKey: .replicaCount)
        topology = try container.decode(Topology.self, forKey: .topology)
        traceHash = try Self.hex(container.decode(String.self, forKey: .traceHash), key: .traceHash, in: container)
        failure = try container.decodeIfPresent(SimulationFailure.self, forKey: .failure)
        convergenceTicks = try container.decodeIfPresent(UInt64.self, forKey: .convergenceTicks)
        ticks = try container.decode(UInt64.self, forKey: .ticks)
        events = try container.decode(Int.self, forKey: .events)
        coverage = try container.decode(Coverage.self, forKey: .coverage)
        finalDigest = try container.decodeIfPresent(String.self, forKey: .finalDigest).map {
            try Self.hex($0, key: .finalDigest, in: container)
        }
    }

    private static func hex(
        _ text: String, key: CodingKeys, in container: KeyedDecodingContainer<CodingKeys>
    ) throws -> UInt64 {
        guard let digest = StateDigest(hex: text) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: container, debugDescription: "\(text) is not sixteen hex digits")
        }
        return digest.rawValue
    }
}

/// A 64-bit FNV-1a of the events of a run.
struct TraceHash {
    private(set) var hasher = FNV1a()

    mutating func add(_ word: UInt64) { hasher.add(word) }

    mutating func add(_ values: UInt64...) { for value in values { hasher.add(value) } }

    /// Mixes in a byte count and a cheap fold of the bytes (every byte, eight at a time).
    mutating func add(bytes: [UInt8]) {
        var word: UInt64 = UInt64(bytes.count)
        var fold: UInt64 = 0xcbf2_9ce4_8422_2325
        bytes.withUnsafeBufferPointer { buffer in
            var index = 0
            while index + 8 <= buffer.count {
                var chunk: UInt64 = 0
                for offset in 0..<8 { chunk |= UInt64(buffer[index + offset]) << (offset * 8) }
                fold = (fold ^ chunk) &* 0x0000_0100_0000_01b3
                index += 8
            }
            while index < buffer.count {
                fold = (fold ^ UInt64(buffer[index])) &* 0x0000_0100_0000_01b3
                index += 1
            }
        }
        word ^= fold
        hasher.add(word)
    }

    var value: UInt64 { hasher.state }
}
