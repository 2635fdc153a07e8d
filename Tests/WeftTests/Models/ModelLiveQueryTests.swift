import Foundation
import Testing
import WeftCore

#if canImport(Combine)
    import Combine
#else
    import OpenCombine
#endif

@_spi(Engine) @testable import Weft

@Suite(.timeLimit(.minutes(5))) struct ModelLiveQueryTests {
    /// One of a few typed queries, chosen by `choice`.
    static func query(_ replica: Replica, _ choice: UInt64, threshold: Int) throws -> FetchedResult<Post> {
        let fetch = replica.fetch(for: Post.self)
        switch choice {
        case 0: return try fetch.where(\.$priority > threshold, limit: 6, orderBy: [\.$priority.ascending])
        case 1: return try fetch.all(limit: 5, orderBy: [\.$priority.descending])
        case 2: return try fetch.where(\.$color == .red, orderBy: [\.$color.ascending, \.$priority.descending])
        default: return try fetch.where(\.$priority <= threshold)
        }
    }

    @Test("typed change sets applied to the old result give the new one, over random model writes")
    func changeSetsReplay() async throws {
        var cases = 0
        for seed in UInt64(0)..<8 {
            let fixture = try await ModelQueryTests.posts(12, seed: seed)
            let replica = fixture.replica
            var rng = SeededGenerator(seed: seed &+ 100)
            if rng.below(2) == 0 { try replica.defineIndex(on: "/posts", orderedBy: "prio") }
            let choice = rng.below(4)
            let threshold = Int(rng.below(60))
            let start = try Self.query(replica, choice, threshold: threshold)
            let changes = Collector<FetchedResultChange<Post>>()
            let token = replica.subscribe(fetchedResult: start) { changes.append($0) }
            var shown = start
            var checked = 0
            for _ in 0..<30 {
                let ids = try replica.fetch(for: Post.self).all().ids
                try await replica.performChanges { batch in
                    for _ in 0...rng.below(3) {
                        switch rng.below(4) {
                        case 0:
                            let post = Post()
                            post.priority = Int(rng.below(100))
                            post.color = ModelQueryTests.colors[Int(rng.below(3))]
                            try post.insert(in: batch)
                        case 1 where !ids.isEmpty:
                            try Post(id: ids[Int(rng.below(UInt64(ids.count)))], in: replica).delete(in: batch)
                        default:
                            guard !ids.isEmpty else { continue }
                            let post = try Post(id: ids[Int(rng.below(UInt64(ids.count)))], in: replica)
                            if rng.below(2) == 0 {
                                post.priority = Int(rng.below(100))
                            } else {
                                post.color = ModelQueryTests.colors[Int(rng.below(3))]
                            }
                            try post.save(in: batch)
                        }
                    }
                }
                let expected = try Self.query(replica, choice, threshold: threshold)
                let arrived = await eventually { changes.values.last?.result == expected || (changes.values.isEmpty && start == expected) }
                #expect(arrived, "seed \(seed): the live result never reached the fetched one")
                for change in changes.values.dropFirst(checked) {
                    guard case .updated(let result, _, _, _, _) = change else {
                        Issue.record("seed \(seed): \(change) is not an update")
                        continue
                    }
                    let replayed = change.changeSet.applied(to: shown.queryResult, reading: result.queryResult)
                    #expect(replayed == result.queryResult, "seed \(seed): \(change.changeSet)")
                    shown = result
                    cases += 1
                }
                checked = changes.count
            }
            token.invalidate()
            await fixture.finish()
        }
        #expect(cases >= 100, "only \(cases) change sets were checked")
    }

    @Test("the publisher and the async sequence start with .initial, then follow with .updated")
    func publisherAndSequence() async throws {
        let fixture = try await ModelQueryTests.posts(10, seed: 5)
        let replica = fixture.replica
        let published = Collector<FetchedResultChange<Post>>()
        let cancellable = try replica.publisher(for: Post.self).all(limit: 3, orderBy: [\.$priority.descending])
            .sink { published.append($0) }
        var iterator = try replica.changes(for: Post.self).all(limit: 3, orderBy: [\.$priority.descending])
            .makeAsyncIterator()
        let first = await iterator.next()
        guard case .initial(let initial)? = first else {
            Issue.record("no initial change: \(String(describing: first))")
            return
        }
        #expect(initial.count == 3)
        let top = Post()
        top.priority = 1_000
        try await replica.performChanges { batch in try top.insert(in: batch) }
        let second = await iterator.next()
        guard case .updated(let result, let deleted, let inserted, _, _)? = second else {
            Issue.record("no update: \(String(describing: second))")
            return
        }
        #expect(result.first?.id == top.id)
        #expect(inserted == IndexSet([0]))
        #expect(deleted == IndexSet([2]))
        await published.wait(for: 2)
        #expect(published.values.map(\.result) == [initial, result])
        cancellable.cancel()
        await fixture.finish()
    }

    @Test("subscribe(object:) reports each change, then .deleted once, and nothing after")
    func objectSubscriptionEndsOnDelete() async throws {
        let fixture = try ReplicaFixture(.memory)
        let replica = fixture.replica
        let post = try await ModelFieldTests.insertPost(in: replica)
        let snapshot = try #require(try replica.fetch(for: Post.self).all().first)
        let updates = Collector<SubscribedObject<ModelSnapshot<Post>>>()
        let token = replica.subscribe(object: snapshot) { updates.append($0) }
        await updates.wait(for: 1)
        post.title = "Second"
        try await replica.performChanges { batch in try post.save(in: batch) }
        await updates.wait(for: 2)
        try await replica.performChanges { batch in try post.delete(in: batch) }
        await updates.wait(for: 3)
        try await snapshot.node.set(["title": "Third"] as Value)
        await drain(replica.callbackQueue)
        let titles = updates.values.map { update -> String in
            if case .updated(let post) = update { return post.title }
            return "deleted"
        }
        #expect(titles == ["Hello", "Second", "deleted"])
        token.invalidate()
        await fixture.finish()
    }
}
