import Testing
import WeftCore
@testable import WeftSimulation
@testable import weft_sim

@Suite struct SimulationSwarmTests {
    /// Small runs, so that 200 seeds fit in a debug test run.
    static let options: ScenarioOptions = {
        var options = ScenarioOptions()
        options.replicasMin = 2
        options.replicasMax = 6
        options.opCount = 200
        options.sqliteShare = 0.05
        return options
    }()

    @Test func twoHundredSeedsConvergeAndPassEveryChecker() async {
        let swarm = Swarm(options: Self.options, firstSeed: 1, seedCount: 200, jobs: 2)
        let report = await swarm.run()
        #expect(report.seeds == 200)
        for failure in report.failures {
            Issue.record("seed \(failure.seed): \(failure.failure) — \(failure.replayCommand)")
        }
        #expect(report.passed == 200)
        #expect(report.opsWritten > 200 * 100)
        #expect(report.convergenceTicks.max <= UInt64(SimulationLimits.ticksMaxConvergence))
        #expect(report.convergenceTicks.p50 <= report.convergenceTicks.p90)
        #expect(report.runs.map(\.seed) == Array(1...200))

        // Coverage: every kind of fault happened somewhere in the swarm, with its effects.
        for counter in CoverageCounter.faults {
            #expect(report.coverage[counter] > 0, "no \(counter.rawValue) in 200 seeds")
        }
        let effects: [CoverageCounter] = [
            .unsyncedCommitsLost, .opsLostInCrashes, .restarts, .connectionsResetAfterDamage, .connectionsResetByCrash,
            .dialsFailed, .driftRefusals, .writesWhileDown, .deliveriesChunked, .sessionsTimedOut,
            .sessionsClosedOnProtocolErrors, .duplicateOpsDelivered, .opsCompacted, .framesHeldByFaults,
            .transactionsRejected, .callsRefused, .bankTransfers, .foldChecks, .digestChecks, .duplicateChecks,
            .recoveryChecks, .engineRefolds, .engineInOrder,
        ]
        for counter in effects {
            #expect(report.coverage[counter] > 0, "\(counter.rawValue) never happened in 200 seeds")
        }
        #expect(report.faultsInjected == CoverageCounter.faults.reduce(0) { $0 + report.coverage[$1] })
    }

    @Test func aSwarmSplitAcrossJobsFindsWhatItFindsOnOne() async {
        let one = await Swarm(options: Self.options, firstSeed: 300, seedCount: 6, jobs: 1).run()
        let two = await Swarm(options: Self.options, firstSeed: 300, seedCount: 6, jobs: 3).run()
        #expect(one.runs == two.runs)
        #expect(one.coverage == two.coverage)
    }

    @Test func aSwarmWhereNoSeedPassedShowsNoConvergenceTimesRatherThanZeros() async {
        var options = Self.options
        options.opCount = 100
        options.sabotage = .duplicateIncrementsCounted
        let failing = await Swarm(options: options, firstSeed: 1, seedCount: 3, jobs: 1).run()
        #expect(failing.passed == 0)
        #expect(SwarmTable.convergenceText(failing) == "none (no seed passed)")
        let passing = await Swarm(options: Self.options, firstSeed: 1, seedCount: 2, jobs: 1).run()
        #expect(passing.passed == 2)
        #expect(SwarmTable.convergenceText(passing).hasPrefix("p50 "))
    }

    @Test func percentilesUseTheNearestRank() {
        let percentiles = SwarmReport.Percentiles((1...100).map(UInt64.init))
        #expect(percentiles.p50 == 50)
        #expect(percentiles.p90 == 90)
        #expect(percentiles.p99 == 99)
        #expect(percentiles.max == 100)
        #expect(SwarmReport.Percentiles([]).max == 0)
    }
}
