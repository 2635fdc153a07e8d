import Foundation
import Testing

#if canImport(Combine)
    import Combine
#else
    import OpenCombine
#endif

@_spi(Engine) @testable import Weft
@testable import WeftCore

@Suite(.timeLimit(.minutes(5))) struct DataQueryReadTests {
    struct Post: Codable, Equatable {
        var title: String
        var score: Int
    }

    static func posts() async throws -> (ReplicaFixture, DataNode) {
        let fixture = try ReplicaFixture(.memory)
        let posts = try #require(fixture.replica.node(for: "/posts"))
        try await posts.set(json: #"""
            {"a":{"title":"A","score":3},"b":{"title":"B","score":1},"c":{"title":"C","score":3},
             "d":{"title":"D","score":7},"e":{"title":"E"}}
            """#)
        return (fixture, posts)
    }

    @Test("a query chain reads in Firebase's order, with bounds, predicates and limits")
    func queriesReadInOrder() async throws {
        let (fixture, posts) = try await Self.posts()
        let byScore = try posts.orderedByChild("score")
        #expect(try await byScore.fetch().keys.map(\.text) == ["e", "b", "a", "c", "d"])
        #expect(try await byScore.starting(at: 3).fetch().keys.map(\.text) == ["a", "c", "d"])
        #expect(try await byScore.equal(to: 3, key: "c").fetch().keys.map(\.text) == ["c"])
        #expect(try await byScore.limit(toLast: 2).fetch().keys.map(\.text) == ["c", "d"])
        #expect(try await posts.query.where(QueryField("score") > 2).fetch().keys.map(\.text) == ["a", "c", "d"])
        let decoded = try await byScore.starting(at: 3).fetch(as: Post.self)
        #expect(decoded.map(\.value) == [Post(title: "A", score: 3), Post(title: "C", score: 3), Post(title: "D", score: 7)])
        #expect(try await byScore.limit(toFirst: 1).fetch().decoded(as: [String: String].self).first?.value == ["title": "E"])
        await fixture.finish()
    }

    @Test("invalid queries throw invalidQuery naming the problem, never crash")
    func invalidQueriesThrow() async throws {
        let (fixture, posts) = try await Self.posts()
        let cases: [() throws -> DataQuery] = [
            { try posts.orderedByKey().orderedByChild("score") },
            { try posts.limit(toFirst: 0) },
            { try posts.orderedByChild("a.b") },
            { try posts.query.where(QueryField("x/$y").exists) },
            { try posts.orderedByValue().starting(at: .object(["a": 1])) },
        ]
        for make in cases {
            let error = #expect(throws: WeftError.self) { try make() }
            #expect(error?.code == .invalidQuery)
            #expect(error?.path == "/posts")
        }
        #expect(throws: WeftError.self) { try fixture.replica.defineIndex(on: "/posts", orderedBy: "") }
        #expect(throws: WeftError.self) { try fixture.replica.defineIndex(on: "/po.sts", orderedBy: "score") }
        await fixture.finish()
    }

    @Test("the callback and Combine forms give the async form's result")
    func threeFormsAgree() async throws {
        let (fixture, posts) = try await Self.posts()
        let query = try posts.orderedByChild("score").limit(toLast: 3)
        let expected = try await query.fetch()
        let viaCallback = await withCheckedContinuation { continuation in
            query.fetch(queue: .global()) { continuation.resume(returning: $0) }
        }
        #expect(try viaCallback.get() == expected)
        let viaCombine = Collector<QueryResult>()
        let cancellable = query.forCombine.fetch().sink(receiveCompletion: { _ in }, receiveValue: viaCombine.append)
        #expect(viaCombine.values == [expected])
        cancellable.cancel()
        await fixture.finish()
    }

    @Test("queries in a snapshot see the snapshot's state, through its indexes")
    func snapshotsQueryTheirOwnState() async throws {
        let (fixture, posts) = try await Self.posts()
        try fixture.replica.defineIndex(on: "/posts", orderedBy: "score")
        let top = try posts.orderedByChild("score").limit(toLast: 2)
        let (keys, count): ([String], Int) = try fixture.replica.readSnapshot { reader in
            try fixture.replica.submit(path: Path("/posts/z"), kind: .set(.object(["score": .int(99)])))
            return (try reader.fetch(top).keys.map(\.text), try reader.childrenKeys(of: posts).count)
        }
        #expect(keys == ["c", "d"] && count == 5)
        #expect(try await top.fetch().keys.map(\.text) == ["d", "z"])
        await fixture.finish()
    }

    @Test("explain says which road a query takes")
    func explainNamesTheRoad() async throws {
        let (fixture, posts) = try await Self.posts()
        let top = try posts.orderedByChild("score").limit(toLast: 2)
        #expect(try top.explain() == .scan(children: 5))
        try fixture.replica.defineIndex(on: "/posts", orderedBy: "score")
        #expect(try top.explain() == .indexRange(field: "score", entriesRead: 2))
        let filtered = try posts.orderedByChild("title").where(QueryField("score") == 3)
        #expect(try filtered.explain() == .indexCandidates(field: "score", candidates: 2))
        #expect(try await filtered.fetch().keys.map(\.text) == ["a", "c"])
        #expect(fixture.replica.indexes == ["/posts": ["score"]])
        await fixture.finish()
    }
}
