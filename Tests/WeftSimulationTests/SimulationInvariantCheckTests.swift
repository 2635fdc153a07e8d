import Testing
@testable import WeftCore
@testable import WeftSimulation

/// The simulator checks one replica's merge-engine invariants every few events; the check only reads.
@Suite struct SimulationInvariantCheckTests {
    static let options: ScenarioOptions = {
        var options = ScenarioOptions()
        options.replicasMin = 3
        options.replicasMax = 5
        options.opCount = 200
        return options
    }()

    @Test("The invariant check runs every few events and leaves the run's trace as it was", arguments: [UInt64(2), 7])
    func theInvariantCheckRunsAndChangesNothing(seed: UInt64) {
        let scenario = Scenario.draw(seed: seed, options: Self.options)
        let checked = Simulation(scenario: scenario)
        #expect(checked.invariantCheckIntervalEvents == SimulationLimits.invariantCheckIntervalEvents)
        let withChecks = checked.run()
        let unchecked = Simulation(scenario: scenario)
        unchecked.invariantCheckIntervalEvents = 0
        let withoutChecks = unchecked.run()
        #expect(withChecks.passed, "\(String(describing: withChecks.failure))")
        #expect(withChecks.traceHash == withoutChecks.traceHash)
        #expect(withChecks.coverage[.invariantChecks] > 0)
        #expect(withoutChecks.coverage[.invariantChecks] == 0)
        // One check per interval at most, each on one replica (none while it is down).
        #expect(withChecks.coverage[.invariantChecks] <= withChecks.events / SimulationLimits.invariantCheckIntervalEvents + 1)
    }

    @Test("A broken summary fails the run as a merge-invariant failure naming the replica")
    func aBrokenSummaryFailsTheRun() throws {
        let simulation = Simulation(scenario: Scenario.draw(seed: 4, options: Self.options))
        simulation.invariantCheckIntervalEvents = 0
        #expect(simulation.run().passed)
        let replica = try #require(simulation.replicas.last { $0.isUp })
        simulation.invariantChecksDone = replica.index
        simulation.checkMergeInvariants()
        #expect(simulation.failure == nil, "a healthy engine passes")
        let engine = try #require(replica.engine as? MergeEngine)
        engine.loggedCount += 1
        simulation.invariantChecksDone = replica.index
        simulation.checkMergeInvariants()
        let failure = try #require(simulation.failure)
        #expect(failure.kind == .mergeInvariantBroken)
        #expect(failure.replica == replica.index)
        #expect(failure.message.contains("loggedCount"))
    }
}
