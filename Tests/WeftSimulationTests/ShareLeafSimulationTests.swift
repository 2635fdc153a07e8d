import Foundation
import Testing
import WeftCore

@testable import WeftSimulation

/// Replica 1 of a hub run is a leaf its hub lets read and write `/items/i0` only: it is sent every op cut
/// to its share, the hub's decisions on the batches it cannot decide (revised when they change), and the
/// share of the hub's base when the hub compacts; under the run's faults it ends with exactly its share
/// of the hub's state while the others converge as ever.
@Suite struct ShareLeafSimulationTests {
    static var options: ScenarioOptions {
        var options = ScenarioOptions()
        options.replicasMin = 3
        options.replicasMax = 4
        options.opCount = 400
        options.topology = .hub
        options.shareLeafShare = 1
        return options
    }

    /// A dozen seeds in a row pass, and between them the leaf took partial ops, carried decisions,
    /// revised decisions and share snapshots.
    @Test("leaves end with their share of the hub under faults, taking revisions and share snapshots")
    func leavesEndWithTheirShare() throws {
        var total = Coverage()
        for seed in 1...12 as ClosedRange<UInt64> {
            let scenario = Scenario.draw(seed: seed, options: Self.options)
            try scenario.validate()
            let leaf = try #require(scenario.shareLeaf)
            #expect(leaf.replica == 1)
            let report = Simulation(scenario: scenario).run()
            #expect(report.passed, "seed \(seed): \(String(describing: report.failure))")
            #expect(report.coverage[.leafShareChecks] == 1, "seed \(seed)")
            total.add(report.coverage)
        }
        #expect(total[.leafPartialOps] >= 1_000, "\(total[.leafPartialOps]) partial ops")
        #expect(total[.leafDecisionsCarried] >= 10, "\(total[.leafDecisionsCarried]) decisions carried")
        #expect(total[.leafRevisionsTaken] >= 1, "\(total[.leafRevisionsTaken]) revisions taken")
        #expect(total[.leafShareSnapshotsInstalled] >= 1, "\(total[.leafShareSnapshotsInstalled]) share snapshots")
    }

    @Test("without the option no leaf is drawn, and with it the rest of the draw stays")
    func withoutTheOptionNothingMoves() {
        var plain = Self.options
        plain.shareLeafShare = 0
        for seed in 1...40 as ClosedRange<UInt64> {
            var without = Scenario.draw(seed: seed, options: plain)
            var with = Scenario.draw(seed: seed, options: Self.options)
            #expect(without.shareLeaf == nil)
            guard with.shareLeaf != nil else {
                Issue.record("seed \(seed) drew no leaf")
                continue
            }
            // The leaf's crashes are dropped (its disk reads back partial ops); nothing else moves.
            without.episodes.removeAll {
                if case .crash(1, _) = $0.fault { true } else { false }
            }
            with.shareLeaf = nil
            #expect(with == without, "seed \(seed)")
        }
    }

    @Test("the leaf's writes are drawn into its share, the others' stay as they were")
    func leafWritesStayInTheShare() throws {
        let scenario = Scenario.draw(seed: 3, options: Self.options)
        var withoutLeaf = scenario
        withoutLeaf.shareLeaf = nil
        let plain = WritePlan(scenario: withoutLeaf)
        let plan = WritePlan(scenario: scenario)
        let root = try Path(ShareLeaf.drawnRoot)
        var leafWrites = 0
        for (write, before) in zip(plan.writes, plain.writes) {
            #expect(write.tick == before.tick && write.writer == before.writer)
            guard write.writer == 1 else {
                #expect(write.path == before.path && write.kind == before.kind)
                continue
            }
            leafWrites += 1
            #expect(root.isAncestorOrSelf(of: write.path), "\(write.path)")
            #expect(write.relation == nil)
        }
        #expect(leafWrites > 0)
    }

    @Test("a schedule refuses a leaf that is the hub, crashes, or sits in a mesh")
    func validationRefusesImpossibleLeaves() throws {
        let scenario = Scenario.draw(seed: 5, options: Self.options)
        try scenario.validate()
        var hub = scenario
        hub.shareLeaf = ShareLeaf(replica: Scenario.hubIndex, root: ShareLeaf.drawnRoot)
        #expect(throws: SimulationError.self) { try hub.validate() }
        var mesh = scenario
        mesh.topology = .mesh
        #expect(throws: SimulationError.self) { try mesh.validate() }
        var crashing = scenario
        crashing.episodes = [Episode(startTick: 1, durationTicks: 10, fault: .crash(replica: 1, hub: false))]
        #expect(throws: SimulationError.self) { try crashing.validate() }
        var atRoot = scenario
        atRoot.shareLeaf = ShareLeaf(replica: 1, root: "/")
        #expect(throws: SimulationError.self) { try atRoot.validate() }
    }

    @Test("a schedule file keeps the leaf, and an older file has none")
    func scheduleFilesKeepTheLeaf() throws {
        let scenario = Scenario.draw(seed: 6, options: Self.options)
        let data = try JSONEncoder().encode(scenario)
        #expect(try JSONDecoder().decode(Scenario.self, from: data) == scenario)
        var older = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        older.removeValue(forKey: "shareLeaf")
        let decoded = try JSONDecoder().decode(Scenario.self, from: try JSONSerialization.data(withJSONObject: older))
        #expect(decoded.shareLeaf == nil)
    }
}
