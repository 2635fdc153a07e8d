import Foundation
import Testing
import WeftCore

@testable import WeftSimulation

/// A replica the others do not know writes alone, then joins a hub that compacted ops it lacks: it
/// installs the hub's snapshot (the real engine's install), stamps its own writes again above the
/// hub's compaction stamp, and converges with everyone, under the run's faults.
@Suite struct LateJoinerSimulationTests {
    static var options: ScenarioOptions {
        var options = ScenarioOptions()
        options.replicasMin = 3
        options.replicasMax = 5
        options.opCount = 600
        options.topology = .hub
        options.lateJoinerShare = 1
        return options
    }

    /// Seeds where the joiner meets a hub that compacted past its writes. Other seeds may hit the
    /// documented limit (a leaf compacted further than the hub: see `Docs/SIMULATOR.md`).
    @Test(arguments: [6, 15, 16, 23, 31] as [UInt64])
    func aLateJoinerInstallsTheHubsSnapshotStampsItsWritesAgainAndConverges(seed: UInt64) throws {
        let scenario = Scenario.draw(seed: seed, options: Self.options)
        try scenario.validate()
        let joiner = try #require(scenario.lateJoiner)
        #expect(joiner.replica == scenario.replicaCount - 1)
        #expect(!scenario.episodes.contains { $0.fault.replicas.contains(joiner.replica) && $0.fault.isCrash })
        let report = Simulation(scenario: scenario).run()
        #expect(report.passed, "\(String(describing: report.failure))")
        #expect(report.coverage[.snapshotsInstalled] >= 1)
        #expect(report.coverage[.opsRestamped] > 0)
    }

    @Test func withoutTheOptionNoLateJoinerIsDrawnAndWithItTheRestOfTheDrawStays() {
        var plain = Self.options
        plain.lateJoinerShare = 0
        for seed in 1...40 as ClosedRange<UInt64> {
            var without = Scenario.draw(seed: seed, options: plain)
            var with = Scenario.draw(seed: seed, options: Self.options)
            #expect(without.lateJoiner == nil)
            guard let joiner = with.lateJoiner?.replica else {
                Issue.record("seed \(seed) drew no late joiner")
                continue
            }
            // The joiner's crashes are dropped (its disk does not model an installed base); nothing else moves.
            without.episodes.removeAll { $0.fault.isCrash && $0.fault.replicas.contains(joiner) }
            with.lateJoiner = nil
            #expect(with == without, "seed \(seed)")
        }
    }

    @Test func aScheduleFileKeepsTheLateJoinerAndAnOlderFileHasNone() throws {
        let scenario = Scenario.draw(seed: 6, options: Self.options)
        let data = try JSONEncoder().encode(scenario)
        #expect(try JSONDecoder().decode(Scenario.self, from: data) == scenario)
        var older = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        older.removeValue(forKey: "lateJoiner")
        let decoded = try JSONDecoder().decode(Scenario.self, from: try JSONSerialization.data(withJSONObject: older))
        #expect(decoded.lateJoiner == nil)
    }
}

extension Fault {
    fileprivate var isCrash: Bool { if case .crash = self { true } else { false } }
}
