import Foundation
import Testing
import WeftCore
@testable import WeftSimulation
@testable import weft_sim

@Suite struct ShrinkerTests {
    static func failingScenario() throws -> Scenario {
        var options = ScenarioOptions()
        options.replicasMin = 3
        options.replicasMax = 5
        options.opCount = 200
        options.sabotage = .equalIncrementsDropped
        for seed in UInt64(1)...50 {
            let scenario = Scenario.draw(seed: seed, options: options)
            if Simulation(scenario: scenario).run().failure != nil { return scenario }
        }
        throw SimulationError.runDoesNotFail(seed: 50)
    }

    @Test func shrinkingGivesASmallerScheduleThatReplaysAsFailing() throws {
        let original = try Self.failingScenario()
        let originalFailure = try #require(Simulation(scenario: original).run().failure)
        var shrinker = try Shrinker(scenario: original)
        shrinker.runsMax = 400
        var steps: [String] = []
        let result = shrinker.shrink { steps.append($0) }
        #expect(!steps.isEmpty)
        #expect(result.original == original)
        #expect(result.failure.kind == originalFailure.kind)
        let writesBefore = original.keptWrites?.count ?? original.opCount
        let writesAfter = result.shrunk.keptWrites?.count ?? result.shrunk.opCount
        #expect(writesAfter < writesBefore)
        #expect(writesAfter <= 10, "dropping equal increments needs two increments, not \(writesAfter) writes")
        #expect(result.shrunk.replicaCount <= original.replicaCount)
        #expect(result.shrunk.episodes.count <= original.episodes.count)
        #expect(result.runs <= 400)

        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "weft-sim-shrink-test-\(ProcessInfo.processInfo.processIdentifier).json"
        ).path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try ScheduleFile(result: result).write(to: path)
        let file = try ScheduleFile.read(from: path)
        #expect(file.scenario == result.shrunk)
        #expect(file.shrunkFrom?.seed == original.seed)
        let simulation = Simulation(scenario: file.scenario)
        simulation.recordsOps = true
        let replayed = simulation.run()
        #expect(replayed.failure?.kind == result.failure.kind)
        #expect(simulation.writtenOps.count <= writesAfter)

        // The file records the shrunk run's trace: a replay shows it ran the same, failure and all.
        #expect(file.traceHash == replayed.traceHashText)
        #expect(
            ReplayCommand.comparison(of: replayed, with: file) == [
                "recorded failure: \(result.failure.kind.rawValue) — replayed exactly",
                "recorded trace \(replayed.traceHashText) — same",
            ])
        var moved = file
        moved.failure?.tick += 1
        moved.traceHash = "0000000000000000"
        let lines = ReplayCommand.comparison(of: replayed, with: moved)
        #expect(lines.first?.contains("replayed as the same kind, but as") == true, "\(lines)")
        #expect(lines.last == "recorded trace 0000000000000000 — DIFFERS: this run's is \(replayed.traceHashText)")
    }

    @Test func aPassingSeedCannotBeShrunk() {
        var options = ScenarioOptions()
        options.opCount = 50
        #expect(throws: SimulationError.runDoesNotFail(seed: 1)) {
            try Shrinker(scenario: Scenario.draw(seed: 1, options: options))
        }
    }

    @Test func aScheduleFileIsCheckedWhenRead() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "weft-sim-bad-schedule-\(ProcessInfo.processInfo.processIdentifier).json"
        ).path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data("{\"format\": 1}".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: SimulationError.self) { try ScheduleFile.read(from: path) }

        var scenario = Scenario.draw(seed: 3, options: ScenarioOptions())
        scenario.replicaCount = 40
        var file = ScheduleFile(
            result: ShrinkResult(
                original: scenario, shrunk: scenario,
                failure: SimulationFailure(kind: .runaway, tick: 0, replica: nil, message: "test"), runs: 1))
        file.note = "a scenario beyond the limits"
        try file.write(to: path)
        #expect(throws: SimulationError.self) { try ScheduleFile.read(from: path) }
    }

    /// A missing file, a folder, an empty or cut file: each is refused with a reason a reader can act
    /// on, not a Foundation error dump.
    @Test func aFileThatIsNoScheduleIsRefusedWithAReasonToActOn() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("weft-sim-unreadable-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let empty = folder.appendingPathComponent("empty.json")
        try Data().write(to: empty)
        let cut = folder.appendingPathComponent("cut.json")
        try Data("{\"format\": 1, \"note\": \"weft".utf8).write(to: cut)
        let cases = [
            (folder.appendingPathComponent("missing.json").path, "no such file"),
            (folder.path, "is a folder"),
            (empty.path, "not a schedule file"),
            (cut.path, "not a schedule file"),
        ]
        for (path, reason) in cases {
            let error = #expect(throws: SimulationError.self) { try ScheduleFile.read(from: path) }
            let message = String(describing: try #require(error))
            #expect(message.contains(reason), "\(message)")
            #expect(message.contains("weft-sim shrink"), "says how to get a schedule file: \(message)")
            #expect(!message.contains("Error Domain"), "\(message)")
        }
    }

    /// A timer is scheduled at `now + timeout`: a timeout near `UInt64.max` in a hand-edited file
    /// overflowed there and crashed `weft-sim replay`.
    @Test(arguments: [UInt64.max, SimulationLimits.sessionTimeoutTicksMax + 1])
    func aScheduleFileWithATimeoutBeyondTheLimitIsRefused(timeout: UInt64) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "weft-sim-timeout-schedule-\(UUID().uuidString).json"
        ).path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let drawn = Scenario.draw(seed: 3, options: ScenarioOptions())
        for field in [\SessionProfile.handshakeTimeoutTicks, \SessionProfile.idleTimeoutTicks] {
            var scenario = drawn
            scenario.sessions[keyPath: field] = timeout
            let file = ScheduleFile(
                result: ShrinkResult(
                    original: scenario, shrunk: scenario,
                    failure: SimulationFailure(kind: .runaway, tick: 0, replica: nil, message: "test"), runs: 1))
            try file.write(to: path)
            #expect(throws: SimulationError.invalidScenario(reason: "session profile out of range")) {
                try ScheduleFile.read(from: path)
            }
        }
    }

    /// A hand-edited schedule could name a hub crash of a replica that is no hub (counted and described
    /// as a hub crash), or one replica twice on a partition's side.
    @Test func anEpisodeThatContradictsTheTopologyOrRepeatsAReplicaIsRefused() {
        var scenario = Scenario.draw(seed: 4, options: ScenarioOptions())
        scenario.replicaCount = 4
        scenario.workloadWriters = max(scenario.workloadWriters, 4)
        scenario.replicas = Array(repeating: scenario.replicas[0], count: 4)
        scenario.lateJoiner = nil
        let cases: [(Topology, Fault, String)] = [
            (.hub, .crash(replica: 2, hub: true), "a hub crash names the hub, r\(Scenario.hubIndex)"),
            (.mesh, .crash(replica: 0, hub: true), "a hub crash needs the hub topology"),
            (.hub, .partition(side: [1, 1], symmetric: true), "a partition names each replica once"),
        ]
        for (topology, fault, reason) in cases {
            var broken = scenario
            broken.topology = topology
            broken.episodes = [Episode(startTick: 1, durationTicks: 5, fault: fault)]
            #expect(throws: SimulationError.invalidScenario(reason: reason)) { try broken.validate() }
        }
        scenario.topology = .hub
        scenario.episodes = [Episode(startTick: 1, durationTicks: 5, fault: .crash(replica: 0, hub: true))]
        #expect(throws: Never.self) { try scenario.validate() }
    }

    @Test func droppingTheLastReplicaRewritesTheEpisodesThatNamedIt() {
        var scenario = Scenario.draw(seed: 4, options: ScenarioOptions())
        scenario.replicaCount = 4
        scenario.workloadWriters = 4
        scenario.replicas = Array(repeating: scenario.replicas[0], count: 4)
        scenario.episodes = [
            Episode(startTick: 1, durationTicks: 5, fault: .partition(side: [1, 3], symmetric: true)),
            Episode(startTick: 2, durationTicks: 5, fault: .partition(side: [3], symmetric: false)),
            Episode(startTick: 3, durationTicks: 5, fault: .crash(replica: 3, hub: false)),
            Episode(startTick: 4, durationTicks: 5, fault: .clog(from: 0, to: 1)),
        ]
        let smaller = scenario.droppingLastReplica()
        #expect(smaller.replicaCount == 3)
        #expect(smaller.workloadWriters == 4, "the workload keeps its writers so the other ops stay the same")
        #expect(smaller.replicas.count == 3)
        #expect(smaller.episodes.map(\.fault) == [.partition(side: [1], symmetric: true), .clog(from: 0, to: 1)])
    }
}
