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

    /// Forty seeds in a row pass; in many the joiner meets a hub that compacted past its writes, so it
    /// installs a snapshot and stamps writes again.
    @Test func lateJoinersInstallSnapshotsStampTheirWritesAgainAndConverge() throws {
        var installs = 0
        var restamped = 0
        for seed in 1...40 as ClosedRange<UInt64> {
            let scenario = Scenario.draw(seed: seed, options: Self.options)
            try scenario.validate()
            let joiner = try #require(scenario.lateJoiner)
            #expect(joiner.replica == scenario.replicaCount - 1)
            #expect(!scenario.episodes.contains { $0.fault.replicas.contains(joiner.replica) && $0.fault.isCrash })
            let report = Simulation(scenario: scenario).run()
            #expect(report.passed, "seed \(seed): \(String(describing: report.failure))")
            installs += report.coverage[.snapshotsInstalled]
            restamped += report.coverage[.opsRestamped]
        }
        #expect(installs >= 10, "\(installs) snapshots installed")
        #expect(restamped >= 1_000, "\(restamped) ops stamped again")
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
