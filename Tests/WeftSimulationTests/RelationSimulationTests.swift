import Testing
import WeftCore
@testable import WeftSimulation

/// Relation integrity under concurrency: replicas link, relink, unlink and delete objects during
/// partitions, and every converged state keeps the rule (`weft-sim swarm --relations 0.3` runs more
/// seeds; Docs/MODELS.md gives the figures).
@Suite struct RelationSimulationTests {
    static let options: ScenarioOptions = {
        var options = ScenarioOptions()
        options.replicasMin = 2
        options.replicasMax = 5
        options.opCount = 150
        options.relationShare = 0.4
        options.sqliteShare = 0
        return options
    }()

    @Test("a hundred seeds of relation traffic with partitions converge with integrity")
    func relationSeedsKeepIntegrity() async {
        let report = await Swarm(options: Self.options, firstSeed: 1, seedCount: 100, jobs: 2).run()
        for failure in report.failures {
            Issue.record("seed \(failure.seed): \(failure.failure) — \(failure.replayCommand)")
        }
        #expect(report.passed == 100)
        #expect(report.coverage[.relationChecks] == 100)
        #expect(report.coverage[.relationChanges] > 100 * 15)
        // Races happened: changes planned on a state that missed a concurrent one were rejected.
        #expect(report.coverage[.transactionsRejected] > 0)
        #expect(report.coverage[.partitionsSymmetric] + report.coverage[.partitionsAsymmetric] > 0)
    }

    @Test("the integrity check names a dangling link and a back-link without its link")
    func checkFindsBrokenStates() throws {
        let dangling = try Value(json: #"{"rel":{"o0":{"name":"a","one":"/rel/o1"}}}"#)
        #expect(RelationWorkload.violation(in: dangling)?.contains("/rel/o1, which does not exist") == true)
        let orphan = try Value(
            json: #"{"rel":{"o0":{"name":"a"},"o1":{"name":"b","~in":{"%2Frel%2Fo0%2Fone":"#
                + #"{"link":"/rel/o0/one","source":"/rel/o0","rule":"cascade"}}}}}"#)
        #expect(RelationWorkload.violation(in: orphan)?.contains("does not link here") == true)
        var healthy = orphan
        healthy.write(.string("/rel/o1"), at: try Path("/rel/o0/one"))
        #expect(RelationWorkload.violation(in: healthy) == nil)
    }
}
