import Foundation
import Testing

#if canImport(Combine)
    import Combine
#else
    import OpenCombine
#endif

@_spi(Engine) @testable import Weft
@testable import WeftCore

@Suite(.timeLimit(.minutes(5))) struct DataQueryLiveTests {
    static let items = Path(uncheckedKeys: ["items"])

    /// A replica holding `/items/k0` … with a score each.
    static func scored(_ count: Int) async throws -> ReplicaFixture {
        let fixture = try ReplicaFixture(.memory)
        var children: [Key: Value] = [:]
        for number in 0..<count { children[Key(unchecked: "k\(number)")] = .object(["score": .int(Int64(number))]) }
        try fixture.replica.submit(path: items, kind: .set(.object(children)))
        return fixture
    }

    @Test("applying each live change set to the previous result gives the new result, over random write streams")
    func changeSetsReplayTheResults() async throws {
        for seed in 0..<UInt64(60) {
            let fixture = try ReplicaFixture(.memory, seed: seed)
            var rng = SeededGenerator(seed: seed)
            var traffic = ReplicaTraffic(
                localSeed: seed &+ 21, remoteSeed: seed &+ 22, remoteWriters: 2, items: 12, counters: 2,
                startMillis: fixture.clock.now)
            let replica = fixture.replica
            if rng.below(2) == 0 { try replica.defineIndex(on: "/items", orderedBy: "score") }
            let query = QueryWorkload.query(
                path: Self.items, fields: DataQueryPropertyTests.fields, values: DataQueryPropertyTests.values, rng: &rng)
            let feed = QueryFeed(query: DataQuery(node: try #require(replica.node(for: "/items")), query: query))
            feed.start {}
            await feed.settle()
            guard case (.initial(var shown)?, nil) = feed.take() else {
                Issue.record("seed \(seed): no initial result")
                continue
            }
            for _ in 0..<40 {
                // Bursts of one to five writes, then whatever the feed made of them.
                for _ in 0...rng.below(5) {
                    if rng.below(3) == 0 {
                        let ops = traffic.remoteOps(from: Int(rng.below(2)), count: 1 + Int(rng.below(4)))
                        traffic.keepAhead(fixture.clock)
                        _ = try replica.applyRemote(ops)
                    } else {
                        try traffic.write(to: replica)
                    }
                }
                await feed.settle()
                let expected = query.evaluate(replica.snapshot().value(at: Self.items))
                switch feed.take() {
                case (.updated(let result, let changes)?, nil):
                    #expect(shown != result, "seed \(seed): an update that changes nothing")
                    #expect(changes.applied(to: shown, reading: result) == result, "seed \(seed): \(changes)")
                    shown = result
                case (nil, nil): break
                case let other: Issue.record("seed \(seed): unexpected \(other)")
                }
                #expect(shown == expected, "seed \(seed): \(query)")
            }
            feed.cancel()
            await fixture.finish()
        }
    }

    @Test("a write outside the window costs no evaluation; one across its edge is a deletion and an insertion")
    func writesOutsideTheWindowAreFree() async throws {
        let fixture = try await Self.scored(100)
        let replica = fixture.replica
        try replica.defineIndex(on: "/items", orderedBy: "score")
        let top = try #require(replica.node(for: "/items")).orderedByChild("score").limit(toLast: 3)
        let feed = QueryFeed(query: top)
        feed.start {}
        await feed.settle()
        #expect(feed.take().event == .initial(try await top.fetch()))
        let evaluations = feed.evaluations
        try replica.submit(path: Path("/items/k5/score"), kind: .set(.int(6)))
        try replica.submit(path: Path("/items/k7/name"), kind: .set(.string("x")))
        try replica.submit(path: Path("/other"), kind: .set(.int(1)))
        await feed.settle()
        #expect(feed.evaluations == evaluations)
        #expect(feed.take().event == nil)

        try replica.submit(path: Path("/items/k5/score"), kind: .set(.int(1_000)))
        await feed.settle()
        guard case .updated(let result, let changes)? = feed.take().event else {
            Issue.record("no update for a write into the window")
            return
        }
        #expect(result.keys.map(\.text) == ["k98", "k99", "k5"])
        #expect(changes.deletions == [0] && changes.insertions == [2] && changes.moves.isEmpty)
        feed.cancel()
        await fixture.finish()
    }

    @Test("an offset window follows changes in the children it skips")
    func offsetsFollowSkippedChildren() async throws {
        let fixture = try await Self.scored(10)
        let query = try #require(fixture.replica.node(for: "/items")).orderedByChild("score").limit(toFirst: 2).offset(3)
        let feed = QueryFeed(query: query)
        feed.start {}
        await feed.settle()
        #expect(feed.take().event?.result.keys.map(\.text) == ["k3", "k4"])
        try fixture.replica.submit(path: Path("/items/k0"), kind: .set(.null))
        await feed.settle()
        #expect(feed.take().event?.result.keys.map(\.text) == ["k4", "k5"])
        feed.cancel()
        await fixture.finish()
    }

    @Test("the callback form delivers the initial result then updates, and stops with its token")
    func callbacksStopWithTheirToken() async throws {
        let fixture = try await Self.scored(5)
        let query = try #require(fixture.replica.node(for: "/items")).orderedByChild("score").limit(toFirst: 2)
        let events = Collector<QueryEvent>()
        let token = query.subscribe { event in events.append(event) }
        #expect(await eventually { events.count == 1 })
        try fixture.replica.submit(path: Path("/items/k9"), kind: .set(.object(["score": .int(-1)])))
        #expect(await eventually { events.count == 2 })
        guard case .updated(let result, let changes) = events.values[1] else {
            Issue.record("the second event is an update")
            return
        }
        #expect(result.keys.map(\.text) == ["k9", "k0"])
        #expect(changes.insertions == [0] && changes.deletions == [1])
        token.invalidate()
        try fixture.replica.submit(path: Path("/items/k8"), kind: .set(.object(["score": .int(-2)])))
        try await fixture.replica.flush()
        await fixture.replica.notifier.waitUntilDelivered()
        try await Task.sleep(nanoseconds: 50_000_000)
        #expect(events.count == 2)
        await fixture.finish()
    }

    @Test("the async sequence and the publisher deliver the initial result then each change")
    func sequencesAndPublishersDeliver() async throws {
        let fixture = try await Self.scored(4)
        let query = try #require(fixture.replica.node(for: "/items")).orderedByChild("score").limit(toLast: 2)
        var iterator = query.results.makeAsyncIterator()
        #expect(await iterator.next()?.result.keys.map(\.text) == ["k2", "k3"])
        let received = Collector<QueryEvent>()
        let cancellable = query.publisher().sink { event in received.append(event) }
        #expect(await eventually { received.count == 1 })
        try fixture.replica.submit(path: Path("/items/k0/score"), kind: .set(.int(10)))
        #expect(await iterator.next()?.result.keys.map(\.text) == ["k3", "k0"])
        #expect(await eventually { received.count == 2 })
        #expect(received.values.last?.result.keys.map(\.text) == ["k3", "k0"])
        cancellable.cancel()
        await fixture.replica.shutdown()
        #expect(await iterator.next() == nil)
        await fixture.finish()
    }
}
