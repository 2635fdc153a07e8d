import Testing
import WeftCore
@testable import WeftSimulation

@Suite struct SabotageDetectionTests {
    static let seedBudget = 200

    static func options(_ sabotage: Sabotage) -> ScenarioOptions {
        var options = ScenarioOptions()
        options.replicasMin = 2
        options.replicasMax = 6
        options.opCount = 200
        options.sabotage = sabotage
        if sabotage.breaksRelations { options.relationShare = 0.3 }
        return options
    }

    /// The first failing seed, if any within the budget.
    static func firstCatch(_ sabotage: Sabotage) -> (seed: UInt64, failure: SimulationFailure)? {
        for seed in 1...UInt64(seedBudget) {
            let report = Simulation(scenario: Scenario.draw(seed: seed, options: options(sabotage))).run()
            if let failure = report.failure { return (seed, failure) }
        }
        return nil
    }

    @Test(arguments: Sabotage.allCases)
    func everySabotageIsCaughtWithinTheSeedBudget(sabotage: Sabotage) throws {
        let caught = try #require(Self.firstCatch(sabotage), "\(sabotage.rawValue) escaped \(Self.seedBudget) seeds")
        // Caught by a checker of the rule it breaks, not by an accident of the run: a merge rule by the
        // checks of states, the stability rule by the check of the instance's stable stamp frontier, a
        // relation sabotage by the relation integrity check or the checks of states.
        let semantic: Set<SimulationFailure.Kind> =
            sabotage.breaksStability
            ? [.stableBeyondHeld, .acknowledgementBeyondDurable]
            : [
                .stateDiffersFromFold, .sameOpsDifferentDigests, .duplicateChangedState, .counterInexact,
                .bankInvariant, .relationIntegrity,
            ]
        #expect(semantic.contains(caught.failure.kind), "seed \(caught.seed): \(caught.failure)")
    }

    @Test func theSameSeedsPassWithTheRealEngine() {
        for sabotage in Sabotage.allCases {
            guard let caught = Self.firstCatch(sabotage) else { continue }
            var options = Self.options(sabotage)
            options.sabotage = nil
            let report = Simulation(scenario: Scenario.draw(seed: caught.seed, options: options)).run()
            #expect(
                report.passed,
                "seed \(caught.seed) fails without \(sabotage.rawValue): \(String(describing: report.failure))")
        }
    }
}
