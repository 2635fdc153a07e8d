/// Reduces a failing scenario to a smaller one that fails the same way: fewer fault episodes, no
/// frame faults it does not need, fewer replicas, fewer writes, a shorter fault phase.
///
/// Every candidate is a full, deterministic run; one is kept when it fails with the same kind of
/// failure. The result is written to a schedule file that `weft-sim replay` runs.
///
/// ```swift
/// let result = try Shrinker(scenario: failing).shrink()
/// try ScheduleFile(result: result).write(to: "seed-42.schedule.json")
/// ```
public struct Shrinker {
    /// The scenario to reduce.
    public let original: Scenario
    /// Most runs to spend.
    public var runsMax = SimulationLimits.shrinkRunsMax
    private var runs = 0
    private var kind: SimulationFailure.Kind = .runaway
    private var best: (scenario: Scenario, failure: SimulationFailure, traceHash: UInt64)

    /// A shrinker for a scenario that fails.
    /// - Throws: ``SimulationError/runDoesNotFail(seed:)`` when it passes.
    public init(scenario: Scenario) throws {
        original = scenario
        let report = Simulation(scenario: scenario).run()
        guard let failure = report.failure else { throw SimulationError.runDoesNotFail(seed: scenario.seed) }
        kind = failure.kind
        best = (scenario, failure, report.traceHash)
        runs = 1
    }

    /// Shrinks until no step helps or the run budget is spent.
    /// - Parameter progress: told about each accepted step.
    public mutating func shrink(progress: ((String) -> Void)? = nil) -> ShrinkResult {
        var improved = true
        while improved, runs < runsMax {
            improved = false
            improved = shrinkEpisodes(progress) || improved
            improved = shrinkNetwork(progress) || improved
            improved = shrinkReplicas(progress) || improved
            improved = shrinkWrites(progress) || improved
            improved = shrinkFaultPhase(progress) || improved
        }
        return ShrinkResult(
            original: original, shrunk: best.scenario, failure: best.failure, runs: runs, traceHash: best.traceHash)
    }

    /// Runs `candidate`; keeps it when it fails the same way.
    private mutating func accept(_ candidate: Scenario) -> Bool {
        guard runs < runsMax, candidate != best.scenario, (try? candidate.validate()) != nil else { return false }
        runs += 1
        let report = Simulation(scenario: candidate).run()
        guard let failure = report.failure, failure.kind == kind else { return false }
        best = (candidate, failure, report.traceHash)
        return true
    }

    private mutating func shrinkEpisodes(_ progress: ((String) -> Void)?) -> Bool {
        let before = best.scenario.episodes.count
        let kept = minimize(best.scenario.episodes) { base, episodes in
            var candidate = base
            candidate.episodes = episodes
            return candidate
        }
        guard kept < before else { return false }
        progress?("episodes \(before) → \(kept)")
        return true
    }

    private mutating func shrinkNetwork(_ progress: ((String) -> Void)?) -> Bool {
        var changed = false
        let steps: [(String, (inout NetworkProfile) -> Void)] = [
            ("no drops", { $0.dropRate = 0 }), ("no duplicates", { $0.duplicateRate = 0 }),
            ("no reordering", { $0.reorderRate = 0 }), ("no delay spikes", { $0.delaySpikeRate = 0 }),
            ("no chunking", { $0.chunksBytes = false }), ("no jitter", { $0.jitterTicksMax = 0 }),
            ("latency 1", { $0.latencyTicksMax = 1 }),
        ]
        for (name, step) in steps {
            var candidate = best.scenario
            step(&candidate.network)
            if accept(candidate) {
                progress?(name)
                changed = true
            }
        }
        return changed
    }

    private mutating func shrinkReplicas(_ progress: ((String) -> Void)?) -> Bool {
        var changed = false
        while best.scenario.replicaCount > SimulationLimits.replicasMin {
            let candidate = best.scenario.droppingLastReplica()
            guard accept(candidate) else { break }
            progress?("replicas → \(candidate.replicaCount)")
            changed = true
        }
        return changed
    }

    private mutating func shrinkWrites(_ progress: ((String) -> Void)?) -> Bool {
        let all = best.scenario.keptWrites ?? Array(0..<best.scenario.opCount)
        let kept = minimize(all) { base, writes in
            var candidate = base
            candidate.keptWrites = writes
            return candidate
        }
        guard kept < all.count else { return false }
        progress?("writes \(all.count) → \(kept)")
        return true
    }

    private mutating func shrinkFaultPhase(_ progress: ((String) -> Void)?) -> Bool {
        var candidate = best.scenario
        candidate.ticksFault = max(SimulationLimits.ticksFaultMin, candidate.ticksFault / 2)
        candidate.episodes = candidate.episodes.filter { $0.startTick < candidate.ticksFault }
        guard candidate.ticksFault < best.scenario.ticksFault, accept(candidate) else { return false }
        progress?("fault phase → \(candidate.ticksFault) ticks")
        return true
    }

    /// Delta debugging (Zeller's ddmin): removes chunks of `items`, halving them, as long as the
    /// scenario built from what remains fails the same way. Returns the number of items kept.
    private mutating func minimize<T>(_ items: [T], _ build: (Scenario, [T]) -> Scenario) -> Int {
        var items = items
        if !items.isEmpty, accept(build(best.scenario, [])) { return 0 }
        var granularity = 2
        while items.count >= 2, runs < runsMax {
            let size = (items.count + granularity - 1) / granularity
            var reduced = false
            for start in stride(from: 0, to: items.count, by: size) {
                let complement = Array(items[..<start] + items[min(items.count, start + size)...])
                if accept(build(best.scenario, complement)) {
                    items = complement
                    granularity = max(granularity - 1, 2)
                    reduced = true
                    break
                }
            }
            if !reduced {
                guard granularity < items.count else { break }
                granularity = min(items.count, granularity * 2)
            }
        }
        return items.count
    }
}

/// What a shrink produced.
public struct ShrinkResult: Codable, Sendable, Hashable {
    /// The scenario shrinking started from.
    public var original: Scenario
    /// The smallest scenario found that fails the same way.
    public var shrunk: Scenario
    /// How the shrunk scenario fails.
    public var failure: SimulationFailure
    /// Simulations run.
    public var runs: Int
    /// The trace hash of the shrunk scenario's run; nil when not known.
    public var traceHash: UInt64? = nil
}

extension Scenario {
    /// The scenario without its last replica: episodes that named it lose it (or vanish), its
    /// writes are skipped (the workload keeps its writers, so the others' writes stay the same).
    func droppingLastReplica() -> Scenario {
        var candidate = self
        let gone = replicaCount - 1
        candidate.replicaCount = gone
        candidate.replicas.removeLast()
        candidate.episodes = episodes.compactMap { episode in
            var episode = episode
            switch episode.fault {
            case .partition(let side, let symmetric):
                let remaining = side.filter { $0 != gone }
                guard !remaining.isEmpty, remaining.count < gone else { return nil }
                episode.fault = .partition(side: remaining, symmetric: symmetric)
                return episode
            default:
                return episode.fault.replicas.contains(gone) ? nil : episode
            }
        }
        if let joiner = lateJoiner?.replica, joiner >= gone || gone < 3 { candidate.lateJoiner = nil }
        if let leaf = shareLeaf?.replica, leaf >= gone { candidate.shareLeaf = nil }
        return candidate
    }
}
