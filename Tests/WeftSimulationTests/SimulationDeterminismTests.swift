import Foundation
import Testing
import WeftCore
@testable import WeftSimulation
@testable import weft_sim

@Suite struct SimulationDeterminismTests {
    static let options: ScenarioOptions = {
        var options = ScenarioOptions()
        options.replicasMin = 3
        options.replicasMax = 6
        options.opCount = 200
        return options
    }()

    @Test(arguments: [UInt64(1), 2, 3, 42])
    func theSameSeedRunsTwiceToTheSameTraceHash(seed: UInt64) {
        let scenario = Scenario.draw(seed: seed, options: Self.options)
        let first = Simulation(scenario: scenario).run()
        let second = Simulation(scenario: scenario).run()
        #expect(first.traceHash == second.traceHash)
        #expect(first == second, "the whole report is reproduced, coverage included")
        #expect(first.passed, "\(String(describing: first.failure))")
    }

    @Test func differentSeedsGiveDifferentRuns() {
        let hashes = (1...8).map { seed in
            Simulation(scenario: Scenario.draw(seed: UInt64(seed), options: Self.options)).run().traceHash
        }
        #expect(Set(hashes).count == hashes.count)
    }

    @Test func drawingAScenarioIsAFunctionOfTheSeedAndOptions() throws {
        let first = Scenario.draw(seed: 9, options: Self.options)
        #expect(first == Scenario.draw(seed: 9, options: Self.options))
        #expect(first != Scenario.draw(seed: 10, options: Self.options))
        try first.validate()
    }

    @Test func aScenarioSurvivesAScheduleFileRoundTrip() throws {
        var options = Self.options
        options.sabotage = .arrivalOrderWins
        let scenario = Scenario.draw(seed: 5, options: options)
        let data = try JSONEncoder().encode(scenario)
        let decoded = try JSONDecoder().decode(Scenario.self, from: data)
        #expect(decoded == scenario)
        let before = Simulation(scenario: scenario).run()
        let after = Simulation(scenario: decoded).run()
        #expect(before.traceHash == after.traceHash)
    }

    /// jq and most JSON readers hold numbers as doubles: a 64-bit hash written as a number would come
    /// back with other last digits, so the report writes it as the text output does.
    @Test func aReportWritesItsHashesAsHexTextAndReadsThemBack() throws {
        let report = Simulation(scenario: Scenario.draw(seed: 3, options: Self.options)).run()
        let data = try JSONEncoder().encode(report)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["traceHash"] as? String == report.traceHashText)
        let digest = try #require(report.finalDigest)
        #expect(object["finalDigest"] as? String == StateDigest(rawValue: digest).description)
        #expect(try JSONDecoder().decode(SimulationReport.self, from: data) == report)
    }

    @Test func theReplayCommandNamesEveryOptionThatChangesTheDraw() throws {
        var options = ScenarioOptions()
        try options.setReplicas("5")
        options.opCount = 2_000
        options.topology = .hub
        try options.setFaults("crash,partition")
        options.sabotage = .duplicateIncrementsCounted
        #expect(
            options.replayCommand(seed: 7)
                == "weft-sim run --seed 7 --replicas 5 --ops 2000 --topology hub --faults partition,crash --sabotage double-count"
        )
        var parsed = ScenarioOptions()
        try parsed.setReplicas("5")
        parsed.opCount = 2_000
        parsed.topology = .hub
        try parsed.setFaults("partition,crash")
        parsed.sabotage = .duplicateIncrementsCounted
        #expect(parsed == options)
        #expect(throws: SimulationError.self) { try parsed.setFaults("earthquake") }
        for empty in ["", ",", "crash,", "crash,,partition"] {
            #expect(throws: SimulationError.self, "\(empty) is not none") { try parsed.setFaults(empty) }
        }
        #expect(parsed == options, "a refused list changes nothing")
        #expect(throws: SimulationError.self) { try parsed.setReplicas("2-x") }
    }

    /// Each option set away from its default alone, then all of them at once: `weft-sim`'s own flags
    /// must read the printed command back to the same options, or a failure's replay command would run
    /// another scenario.
    static let changedOptions: [ScenarioOptions] = {
        let changes: [(inout ScenarioOptions) -> Void] = [
            { $0.replicasMin = 4 },
            { $0.replicasMax = 5 },
            { $0.opCount = 1_500 },
            { $0.topology = .mesh },
            { $0.faults = [.crash, .clockJump] },
            { $0.allFaults = true },
            { $0.sabotage = .callsRunAtArrival },
            { $0.storage = .simulatedDisk },
            { $0.sqliteShare = 0.25 },
            { $0.lateJoinerShare = 0.3 },
        ]
        var all = ScenarioOptions()
        var variants: [ScenarioOptions] = []
        for change in changes {
            var one = ScenarioOptions()
            change(&one)
            variants.append(one)
            change(&all)
        }
        return variants + [all]
    }()

    @Test(arguments: changedOptions)
    func weftSimReadsTheReplayCommandBackToTheSameOptions(options: ScenarioOptions) throws {
        #expect(options != ScenarioOptions())
        let arguments = options.commandLineArguments
        #expect(!arguments.isEmpty, "a changed option is missing from the replay command")
        let parsed = try ScenarioFlags.parse(arguments).options()
        #expect(parsed == options, "weft-sim run \(arguments.joined(separator: " "))")
    }
}
