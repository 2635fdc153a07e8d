import Foundation
import Testing
import WeftStore

@_spi(Engine) @testable import Weft
@testable import WeftCore

/// Indexes live in the database file, in step with the tree: a reopened replica finds them ready (no
/// rebuild), after a clean shutdown or a kill -9 at any moment of writing.
@Suite(.serialized, .timeLimit(.minutes(5))) struct DataQueryIndexPersistenceTests {
    @Test(arguments: ReplicaKind.allCases)
    func indexesSurviveAReopenWithoutARebuild(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        var traffic = ReplicaTraffic(
            localSeed: 5, remoteSeed: 6, remoteWriters: 2, items: 30, counters: 2, startMillis: fixture.clock.now)
        for _ in 0..<100 { try traffic.write(to: fixture.replica) }
        try fixture.replica.defineIndex(on: "/items", orderedBy: "score")
        try fixture.replica.defineIndex(on: "/items", orderedBy: "score")  // a second definition does nothing
        for _ in 0..<100 { try traffic.write(to: fixture.replica) }
        _ = try fixture.replica.applyRemote(traffic.remoteOps(from: 1, count: 40))
        try await fixture.replica.flush()
        try await fixture.reopen()
        try await fixture.replica.waitUntilLoaded()
        let replica = fixture.replica
        #expect(replica.indexes == ["/items": ["score"]])
        #expect(replica.condition.withLock { replica.queryIndexes.rebuilt } == 0)
        let query = try #require(replica.node(for: "/items")).orderedByChild("score").limit(toLast: 5)
        #expect(try query.explain().usesIndex)
        #expect(try await query.fetch() == query.query.evaluate(replica.snapshot().value(at: query.query.path)))
        try DataQueryPropertyTests.expectIndexesInStep(replica, seed: 0)
        await fixture.finish()
    }

    @Test func indexesSurviveAKillAtAnyMoment() async throws {
        let writer = try #require(ReplicaCrashTests.writer, "build the weft executable: swift build --build-tests")
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        var generator = SeededGenerator(seed: 17)
        let path = directory.appendingPathComponent("weft.sqlite").path
        for round in 0..<6 {
            let child = try CrashChild(
                writer: writer, path: path, durability: .normal, seed: UInt64(round + 1),
                arguments: ["--index", "/items:score", "--index", "/items:name"])
            let started = await eventually(timeoutSeconds: 30) { child.isReady }
            try await Task.sleep(nanoseconds: generator.below(300) * 1_000_000)
            let reported = child.kill()
            #expect(started && reported.ready, "round \(round): the writer never started: \(reported.errors)")

            let replica = try Replica.open(at: path, options: ReplicaFixture.crashOptions)
            try await replica.waitUntilLoaded()
            #expect(replica.indexes["/items"]?.sorted() == ["name", "score"], "round \(round)")
            #expect(replica.condition.withLock { replica.queryIndexes.rebuilt } == 0, "round \(round)")
            try DataQueryPropertyTests.expectIndexesInStep(replica, seed: UInt64(round))
            await replica.shutdown()
        }
    }
}
