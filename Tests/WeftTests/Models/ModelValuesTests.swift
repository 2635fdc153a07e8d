import Foundation
import Testing
import WeftCore

@_spi(Engine) @testable import Weft

@Suite(.timeLimit(.minutes(5))) struct ModelValuesTests {
    @Test("append, insert, move and remove keep the order they say")
    func orderOperations() async throws {
        let fixture = try ReplicaFixture(.memory)
        let replica = fixture.replica
        let post = try await ModelFieldTests.insertPost(in: replica)
        #expect(post.tags == ["a", "b"])
        try await replica.performChanges { batch in try post.$tags.append("c", in: batch) }
        #expect(post.tags == ["a", "b", "c"])
        try await replica.performChanges { batch in try post.$tags.insert("z", at: 0, in: batch) }
        #expect(post.tags == ["z", "a", "b", "c"])
        try await replica.performChanges { batch in try post.$tags.insert("m", at: 2, in: batch) }
        #expect(post.tags == ["z", "a", "m", "b", "c"])
        try await replica.performChanges { batch in try post.$tags.move(from: 0, to: 4, in: batch) }
        #expect(post.tags == ["a", "m", "b", "c", "z"])
        try await replica.performChanges { batch in try post.$tags.move(from: 3, to: 1, in: batch) }
        #expect(post.tags == ["a", "c", "m", "b", "z"])
        try await replica.performChanges { batch in try post.$tags.remove(at: 2, in: batch) }
        #expect(post.tags == ["a", "c", "b", "z"])
        await #expect(throws: WeftError.self) {
            try await replica.performChanges { batch in try post.$tags.remove(at: 4, in: batch) }
        }
        await fixture.finish()
    }

    @Test("two replicas inserting into the same gap at once both keep their element, in the gap")
    func concurrentInsertsKeepBoth() async throws {
        let left = try ReplicaFixture(.memory, seed: 1)
        let right = try ReplicaFixture(.memory, seed: 2)
        let post = try await ModelFieldTests.insertPost(in: left.replica)
        let id = try #require(post.id)
        try right.replica.applyRemote(left.replica.ops(from: left.replica.replicaID, after: 0, limit: 100))
        let mine = try Post(id: id, in: left.replica)
        let theirs = try Post(id: id, in: right.replica)
        try await left.replica.performChanges { batch in try mine.$tags.insert("x", at: 1, in: batch) }
        try await right.replica.performChanges { batch in try theirs.$tags.insert("y", at: 1, in: batch) }
        try right.replica.applyRemote(left.replica.ops(from: left.replica.replicaID, after: 0, limit: 100))
        try left.replica.applyRemote(right.replica.ops(from: right.replica.replicaID, after: 0, limit: 100))
        #expect(mine.tags == theirs.tags)
        #expect(mine.tags.count == 4)
        #expect(mine.tags.first == "a")
        #expect(mine.tags.last == "b")
        #expect(Set(mine.tags[1...2]) == ["x", "y"])
        await left.finish()
        await right.finish()
    }

    @Test("a collection written as a JSON array is re-keyed by the first insert, keeping its order")
    func arraysAreRekeyed() async throws {
        let fixture = try ReplicaFixture(.memory)
        let post = try Post(id: "p", in: fixture.replica)
        try await (fixture.replica.root / "posts/p/tags")!.set(["a", "b", "c"])
        #expect(post.tags == ["a", "b", "c"])
        try await fixture.replica.performChanges { batch in try post.$tags.insert("x", at: 1, in: batch) }
        #expect(post.tags == ["a", "x", "b", "c"])
        #expect(post.$tags.elementKeys.allSatisfy(ValuesKeys.isFractional))
        await fixture.finish()
    }

    @Test("a key made between two keys sorts strictly between them, over random gaps")
    func keysBetween() {
        var rng = SeededGenerator(seed: 38)
        let alphabet = Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz")
        func randomKey() -> String {
            String((0..<(12 + Int(rng.below(10)))).map { _ in alphabet[Int(rng.below(64))] })
        }
        for _ in 0..<300 {
            var keys = [randomKey(), randomKey()].sorted { KeyOrder.precedes($0, $1) }
            if keys[0] == keys[1] { continue }
            // Nest a few insertions into one gap, as repeated inserts at one place do.
            for _ in 0..<8 {
                let lower = rng.below(4) == 0 ? nil : keys[0]
                let upper = rng.below(4) == 0 ? nil : keys[1]
                guard let key = ValuesKeys.key(between: lower, and: upper, suffix: randomKey()) else {
                    Issue.record("no key between \(String(describing: lower)) and \(String(describing: upper))")
                    break
                }
                #expect(ValuesKeys.isFractional(key))
                if let lower { #expect(KeyOrder.precedes(lower, key)) }
                if let upper { #expect(KeyOrder.precedes(key, upper)) }
                keys = rng.below(2) == 0 ? [lower ?? keys[0], key] : [key, upper ?? keys[1]]
                if !KeyOrder.precedes(keys[0], keys[1]) { break }
            }
        }
    }
}
