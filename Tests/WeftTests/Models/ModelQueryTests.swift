import Foundation
import Testing
import WeftCore

@_spi(Engine) @testable import Weft

@Suite(.timeLimit(.minutes(5))) struct ModelQueryTests {
    static let colors: [Color] = [.red, .green, .blue]

    /// A replica holding `count` posts with random priorities and colors, written as models.
    static func posts(_ count: Int, seed: UInt64) async throws -> ReplicaFixture {
        let fixture = try ReplicaFixture(.memory, seed: seed)
        var rng = SeededGenerator(seed: seed)
        try await fixture.replica.performChanges { batch in
            for number in 0..<count {
                let post = Post()
                post.title = "post \(rng.below(20))"
                post.priority = Int(rng.below(100))
                post.color = colors[Int(rng.below(3))]
                if rng.below(3) == 0 { post.subtitle = "s\(number)" }
                try post.insert(in: batch)
            }
        }
        return fixture
    }

    @Test("typed queries return what the same untyped queries return, with and without an index")
    func typedEqualsUntyped() async throws {
        for seed in UInt64(1)...4 {
            let fixture = try await Self.posts(60, seed: seed)
            let replica = fixture.replica
            if seed.isMultiple(of: 2) { try replica.defineIndex(on: "/posts", orderedBy: "prio") }
            let posts = try #require(replica.node(for: "/posts"))

            let typed = try replica.fetch(for: Post.self).where(
                \.$priority > 50 && \.$color == .red, limit: 10, orderBy: [\.$priority.ascending])
            let untyped = try await posts.orderedByChild("prio")
                .where(QueryField("prio") > .int(50) && QueryField("color") == .string("red")).limit(toFirst: 10).fetch()
            #expect(typed.ids == untyped.keys.map(\.text), "seed \(seed)")
            #expect(typed.allSatisfy { $0.priority > 50 && $0.color == .red })

            let top = try replica.fetch(for: Post.self).all(limit: 5, orderBy: [\.$priority.descending])
            let last = try await posts.orderedByChild("prio").limit(toLast: 5).fetch()
            #expect(top.ids == last.keys.map(\.text).reversed(), "seed \(seed)")

            let optional = try replica.fetch(for: Post.self).where(\.$subtitle == nil)
            let missing = try await posts.query.where(QueryField("subtitle") == .null).fetch()
            #expect(optional.ids == missing.keys.map(\.text))
            #expect(optional.allSatisfy { $0.subtitle == nil })

            let either = try replica.fetch(for: Post.self).where(.isIn(\.$color, [.green, .blue]) && !(\.$priority < 10))
            let untypedEither = try await posts.query.where(
                QueryField("color").isIn([.string("green"), .string("blue")]) && !(QueryField("prio") < .int(10))
            ).fetch()
            #expect(either.ids == untypedEither.keys.map(\.text))

            // Two orderings: sorted by both, ties by key, then the limit.
            let sorted = try replica.fetch(for: Post.self).all(
                limit: 20, orderBy: [\.$color.ascending, \.$priority.descending])
            let all = try await posts.query.fetch().decoded(as: PostRow.self)
            let expected = all.sorted { left, right in
                if left.value.color != right.value.color { return left.value.color < right.value.color }
                if left.value.prio != right.value.prio { return left.value.prio > right.value.prio }
                return KeyOrder.precedes(right.key, left.key)
            }.prefix(20).map(\.key)
            #expect(sorted.ids == Array(expected), "seed \(seed)")
            await fixture.finish()
        }
    }

    /// The stored form of a post, for the untyped side.
    struct PostRow: Decodable {
        let prio: Int
        let color: String
    }

    @Test("an index on a field's key serves the typed query (explain says so)")
    func indexServesTypedQueries() async throws {
        let fixture = try await Self.posts(200, seed: 9)
        let replica = fixture.replica
        try replica.defineIndex(on: "/posts", orderedBy: "prio")
        let plan = try replica.explain(for: Post.self).where(\.$priority >= 90, limit: 3, orderBy: [\.$priority.ascending])
        guard case .indexRange(let field, let read) = plan else {
            Issue.record("no index range: \(plan)")
            return
        }
        #expect(field == QueryField("prio"))
        #expect(read <= 10, "the predicate on the ordering's field is its range")
        let candidates = try replica.explain(for: Post.self).where(\.$priority == 42)
        #expect(candidates.usesIndex)
        await fixture.finish()
    }

    @Test("snapshots are Sendable values that read their fields on another thread; a bad query throws")
    func snapshotsAcrossThreads() async throws {
        let fixture = try await Self.posts(20, seed: 3)
        let result = try fixture.replica.fetch(for: Post.self).all(orderBy: [\.$title.ascending])
        let titles = await Task.detached { result.map(\.title) }.value
        #expect(titles == titles.sorted())
        #expect(titles.count == 20)
        #expect(result[0].object.isFrozen)
        #expect(throws: WeftError.self) { try fixture.replica.fetch(for: Post.self).all(limit: 0) }
        await fixture.finish()
    }
}
