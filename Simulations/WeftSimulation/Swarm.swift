/// Runs many seeds, each with its own randomly chosen subset of faults (swarm testing), on
/// several cores, and sums up what happened.
///
/// ```swift
/// let swarm = Swarm(options: ScenarioOptions(), firstSeed: 1, seedCount: 1000, jobs: 2)
/// let report = await swarm.run { progress in print(progress.done) }
/// print(report.failures.map(\.replayCommand))
/// ```
public struct Swarm: Sendable {
    /// How each seed's scenario is drawn.
    public var options: ScenarioOptions
    /// The first seed; seeds follow one another.
    public var firstSeed: UInt64
    /// How many seeds to run.
    public var seedCount: Int
    /// How many seeds run at once.
    public var jobs: Int

    /// A swarm of `seedCount` seeds from `firstSeed`.
    public init(options: ScenarioOptions, firstSeed: UInt64, seedCount: Int, jobs: Int) {
        precondition((1...SimulationLimits.swarmSeedsMax).contains(seedCount), "a swarm runs 1...swarmSeedsMax seeds")
        precondition(jobs >= 1, "a swarm runs at least one seed at a time")
        self.options = options
        self.firstSeed = firstSeed
        self.seedCount = seedCount
        self.jobs = jobs
    }

    /// Runs every seed; `progress` is called after each one, from the swarm's task.
    public func run(progress: (@Sendable (SwarmProgress) -> Void)? = nil) async -> SwarmReport {
        let clock = ContinuousClock()
        let start = clock.now
        var reports: [SimulationReport] = []
        reports.reserveCapacity(seedCount)
        var failures = 0
        await withTaskGroup(of: SimulationReport.self) { group in
            var next = 0
            let options = self.options
            while next < min(jobs, seedCount) {
                let seed = firstSeed &+ UInt64(next)
                group.addTask { Simulation(scenario: Scenario.draw(seed: seed, options: options)).run() }
                next += 1
            }
            for await report in group {
                reports.append(report)
                if !report.passed { failures += 1 }
                progress?(
                    SwarmProgress(
                        done: reports.count, total: seedCount, failures: failures,
                        elapsedSeconds: Swarm.seconds(clock.now - start)))
                if next < seedCount {
                    let seed = firstSeed &+ UInt64(next)
                    group.addTask { Simulation(scenario: Scenario.draw(seed: seed, options: options)).run() }
                    next += 1
                }
            }
        }
        reports.sort { $0.seed < $1.seed }
        return SwarmReport(swarm: self, reports: reports, elapsedSeconds: Swarm.seconds(clock.now - start))
    }

    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// Where a swarm stands.
public struct SwarmProgress: Sendable, Hashable {
    /// Seeds finished.
    public var done: Int
    /// Seeds in the swarm.
    public var total: Int
    /// Seeds that failed so far.
    public var failures: Int
    /// Wall-clock seconds since the start (for the rate only; the simulation never reads a clock).
    public var elapsedSeconds: Double
}

/// What a swarm found.
public struct SwarmReport: Codable, Sendable {
    /// One failing seed and how to replay it.
    public struct Failure: Codable, Sendable, Hashable {
        /// The failing seed.
        public var seed: UInt64
        /// How it failed.
        public var failure: SimulationFailure
        /// The command that replays it.
        public var replayCommand: String
    }

    /// One run, briefly.
    public struct Run: Codable, Sendable, Hashable {
        /// The seed.
        public var seed: UInt64
        /// Replicas in the run.
        public var replicas: Int
        /// The run's topology.
        public var topology: Topology
        /// The trace hash, sixteen hex digits.
        public var traceHash: String
        /// Ops the workload wrote.
        public var opsWritten: Int
        /// Faults injected.
        public var faultsInjected: Int
        /// Ticks from healing to convergence, for a passing run.
        public var convergenceTicks: UInt64?
        /// The kind of failure, for a failing run.
        public var failure: SimulationFailure.Kind?
    }

    /// Nearest-rank percentiles of the ticks from healing to convergence, over passing runs.
    public struct Percentiles: Codable, Sendable, Hashable {
        /// The median.
        public var p50: UInt64
        /// The 90th percentile.
        public var p90: UInt64
        /// The 99th percentile.
        public var p99: UInt64
        /// The largest value (0 when there is none).
        public var max: UInt64

        init(_ values: [UInt64]) {
            let sorted = values.sorted()
            func rank(_ quantile: Double) -> UInt64 {
                guard !sorted.isEmpty else { return 0 }
                let index = Int((quantile * Double(sorted.count)).rounded(.up)) - 1
                return sorted[Swift.max(0, Swift.min(sorted.count - 1, index))]
            }
            p50 = rank(0.5)
            p90 = rank(0.9)
            p99 = rank(0.99)
            max = sorted.last ?? 0
        }
    }

    /// How each seed's scenario was drawn.
    public var options: ScenarioOptions
    /// The first seed.
    public var firstSeed: UInt64
    /// Seeds run.
    public var seeds: Int
    /// Seeds run at once.
    public var jobs: Int
    /// Seeds that passed.
    public var passed: Int
    /// Seeds that failed, by seed.
    public var failures: [Failure]
    /// Failing seeds per failure kind.
    public var failureKinds: [String: Int]
    /// Ops written, all seeds together.
    public var opsWritten: Int
    /// Faults injected, all seeds together.
    public var faultsInjected: Int
    /// Events handled, all seeds together.
    public var events: Int
    /// Ticks from healing to convergence over the passing seeds.
    public var convergenceTicks: Percentiles
    /// Every coverage counter, summed over the seeds.
    public var coverage: Coverage
    /// Wall-clock seconds the swarm took (measured outside the simulations).
    public var elapsedSeconds: Double
    /// Seeds per wall-clock second.
    public var seedsPerSecond: Double
    /// Every run, briefly, by seed.
    public var runs: [Run]

    init(swarm: Swarm, reports: [SimulationReport], elapsedSeconds: Double) {
        options = swarm.options
        firstSeed = swarm.firstSeed
        seeds = reports.count
        jobs = swarm.jobs
        passed = reports.filter(\.passed).count
        failures = reports.compactMap { report in
            report.failure.map {
                Failure(seed: report.seed, failure: $0, replayCommand: swarm.options.replayCommand(seed: report.seed))
            }
        }
        failureKinds = Dictionary(grouping: failures, by: \.failure.kind.rawValue).mapValues(\.count)
        var total = Coverage()
        for report in reports { total.add(report.coverage) }
        coverage = total
        opsWritten = total[.opsWritten]
        faultsInjected = total.faultsInjected
        events = reports.reduce(0) { $0 + $1.events }
        convergenceTicks = Percentiles(reports.compactMap { $0.passed ? $0.convergenceTicks : nil })
        self.elapsedSeconds = elapsedSeconds
        seedsPerSecond = elapsedSeconds > 0 ? Double(reports.count) / elapsedSeconds : 0
        runs = reports.map {
            Run(
                seed: $0.seed, replicas: $0.replicaCount, topology: $0.topology, traceHash: $0.traceHashText,
                opsWritten: $0.coverage[.opsWritten], faultsInjected: $0.coverage.faultsInjected,
                convergenceTicks: $0.convergenceTicks, failure: $0.failure?.kind)
        }
    }
}
