import Testing
import WeftCore
@testable import WeftSimulation

@Suite struct SimulationStorageTests {
    /// A scenario of three replicas, the middle one on `storage`, crashed twice.
    static func crashing(_ storage: StorageKind, syncsEveryCommit: Bool) -> Scenario {
        var options = ScenarioOptions()
        options.replicasMin = 3
        options.replicasMax = 3
        options.opCount = 300
        options.faults = []
        options.sqliteShare = 0
        var scenario = Scenario.draw(seed: 21, options: options)
        scenario.replicas[1].storage = storage
        scenario.replicas[1].syncsEveryCommit = syncsEveryCommit
        scenario.replicas[1].syncIntervalTicks = SimulationLimits.syncIntervalTicksMax
        let third = scenario.ticksFault / 3
        scenario.episodes = [
            Episode(startTick: third, durationTicks: 40, fault: .crash(replica: 1, hub: false)),
            Episode(startTick: 2 * third, durationTicks: 40, fault: .crash(replica: 1, hub: false)),
        ]
        return scenario
    }

    @Test func aReplicaOnSQLiteIsReopenedFromItsFileAfterEachCrash() throws {
        let scenario = Self.crashing(.sqliteStore, syncsEveryCommit: true)
        try scenario.validate()
        let report = Simulation(scenario: scenario).run()
        #expect(report.passed, "\(String(describing: report.failure))")
        #expect(report.coverage[.crashes] == 2)
        #expect(report.coverage[.sqliteReopens] == 2)
        #expect(report.coverage[.recoveryChecks] == 2)
        #expect(report.coverage[.opsLostInCrashes] == 0, "a SQLite commit survives the death of the process")
    }

    @Test func aReplicaOnAMemoryStoreLosesOnlyWhatItHadNotSynced() throws {
        let scenario = Self.crashing(.memoryStore, syncsEveryCommit: false)
        let report = Simulation(scenario: scenario).run()
        #expect(report.passed, "\(String(describing: report.failure))")
        #expect(report.coverage[.restarts] == 2)
        #expect(report.coverage[.opsLostInCrashes] > 0, "a crash between fsyncs loses the last commits")
        #expect(report.coverage[.unsyncedCommitsLost] > 0)
    }

    @Test(arguments: StorageKind.allCases)
    func everyStorageRunsTheSameWorkloadToTheSameState(storage: StorageKind) {
        var options = ScenarioOptions()
        options.replicasMin = 3
        options.replicasMax = 3
        options.opCount = 200
        options.faults = []
        options.sqliteShare = 0
        var scenario = Scenario.draw(seed: 8, options: options)
        for index in scenario.replicas.indices {
            scenario.replicas[index].storage = storage
            scenario.replicas[index].syncsEveryCommit = true
        }
        let report = Simulation(scenario: scenario).run()
        #expect(report.passed, "\(String(describing: report.failure))")
        var reference = scenario
        for index in reference.replicas.indices { reference.replicas[index].storage = .simulatedDisk }
        #expect(report.finalDigest == Simulation(scenario: reference).run().finalDigest)
    }
}
