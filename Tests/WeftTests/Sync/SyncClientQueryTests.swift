import Foundation
import Logging
import Testing
import WeftCore
import WeftSync

@_spi(Engine) @testable import Weft

/// `SyncClient.query` and live queries against a daemon's driver on a real replica.
@Suite(.timeLimit(.minutes(5))) struct SyncClientQueryTests {
    static let clientToken = try! AuthToken(string: "the command line's own secret")

    static func served(_ body: (Replica, SyncClient) async throws -> Void) async throws {
        let fixture = try ReplicaFixture(.sqlite)
        let replica = fixture.replica
        try await replica.waitUntilLoaded()
        var tokens = TokenBook()
        tokens.set(Self.clientToken, for: "cli")
        let configuration = SyncConfiguration(replica: replica.replicaID, role: .hub, name: "hub", tokens: tokens)
        let hub = try SyncDriver(replica: replica, configuration: configuration, logger: Logger(label: "test"))
        let port = try await hub.listen(on: "127.0.0.1", port: 0)
        let client = try await SyncClient.connect(
            host: "127.0.0.1", port: port, name: "cli", token: Self.clientToken, serverName: "hub")
        do {
            try await body(replica, client)
        } catch {
            await client.close()
            await hub.shutdown()
            await fixture.finish()
            throw error
        }
        await client.close()
        await hub.shutdown()
        await fixture.finish()
    }

    static let scores = try! Query(path: try! Path("/posts")).orderedByChild("score").limit(toLast: 2)

    @Test("a query through the daemon returns the rows of the reference evaluation, in order")
    func aQueryReturnsOrderedRows() async throws {
        try await Self.served { _, client in
            let posts = try Value(json: #"{"a":{"score":3},"b":{"score":9},"c":{"score":5},"d":{"title":"x"}}"#)
            try await client.request(.set(try Path("/posts"), posts))
            let result = try await client.query(Self.scores)
            #expect(result.keys.map(\.text) == ["c", "b"])
            #expect(result == Self.scores.evaluate(posts))
            // `request` of a query gives its rows as an object.
            #expect(try await client.request(.query(Self.scores)) == Self.scores.evaluate(posts).value)
        }
    }

    @Test("a live query delivers each changed result with its change set, and nothing after unwatch")
    func aLiveQueryFollowsWrites() async throws {
        try await Self.served { _, client in
            try await client.request(.set(try Path("/posts"), try Value(json: #"{"a":{"score":3},"b":{"score":9}}"#)))
            let (stream, continuation) = AsyncStream.makeStream(of: (QueryResult, QueryChangeSet).self)
            let (id, first) = try await client.watch(Self.scores) { continuation.yield(($0, $1)) }
            #expect(first.keys.map(\.text) == ["a", "b"])
            var updates = stream.makeAsyncIterator()

            try await client.request(.set(try Path("/posts/c"), .object(["score": .int(5)])))
            let entered = try #require(await updates.next())
            #expect(entered.0.keys.map(\.text) == ["c", "b"])
            #expect(entered.1.deletions == [0] && entered.1.insertions == [0])

            // Outside the window: no update; the next one is the change of b.
            try await client.request(.set(try Path("/posts/z"), .object(["score": .int(1)])))
            try await client.request(.set(try Path("/posts/b/score"), .int(10)))
            let modified = try #require(await updates.next())
            #expect(modified.0.keys.map(\.text) == ["c", "b"])
            #expect(modified.0[1].value == .object(["score": .int(10)]))
            #expect(modified.1.modifications == [1] && modified.1.insertions.isEmpty)

            try await client.unwatch(id)
            try await client.request(.set(try Path("/posts/e"), .object(["score": .int(50)])))
            // The daemon closed the live query and the client forgot it: the write above is seen by a
            // query, not delivered as an update.
            #expect(try await client.query(Self.scores).keys.map(\.text) == ["b", "e"])
            continuation.finish()
            #expect(await updates.next() == nil)
        }
    }

    @Test("unwatch of an id that is not open fails with the daemon's reason")
    func unwatchOfAnUnknownIDFails() async throws {
        try await Self.served { _, client in
            await #expect(throws: WeftError.self) { try await client.unwatch(999) }
        }
    }
}
