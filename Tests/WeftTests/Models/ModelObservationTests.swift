import Foundation
import Testing
import WeftCore

@_spi(Engine) @testable import Weft

@Suite(.timeLimit(.minutes(5))) struct ModelObservationTests {
    @Test("typed key paths observe their fields only, nested fields included")
    func observesTheNamedFields() async throws {
        let fixture = try ReplicaFixture(.memory)
        let replica = fixture.replica
        let post = try await ModelFieldTests.insertPost(in: replica)
        let changes = Collector<ModelChange>()
        let token = try post.observe(\.$title, \.$address.$city) { changes.append($0) }
        post.priority = 99
        try await replica.performChanges { batch in try post.save(in: batch) }
        post.title = "New"
        try await replica.performChanges { batch in try post.save(in: batch) }
        await changes.wait(for: 1)
        post.address.city = "Paris"
        try await replica.performChanges { batch in try post.save(in: batch) }
        await changes.wait(for: 2)
        #expect(
            changes.values == [
                .change([PropertyChange(name: "title", oldValue: "Hello", newValue: "New")]),
                .change([PropertyChange(name: "address/city", oldValue: "Lyon", newValue: "Paris")]),
            ])
        try await replica.performChanges { batch in try post.delete(in: batch) }
        await changes.wait(for: 3)
        #expect(changes.values.last == .deleted)
        token.invalidate()
        await fixture.finish()
    }

    @Test("an observation through a reference follows the link one level, and re-points when it changes")
    func followsAReference() async throws {
        let fixture = try ReplicaFixture(.memory)
        let replica = fixture.replica
        let alice = Person()
        alice.name = "Alice"
        let bob = Person()
        bob.name = "Bob"
        try await replica.performChanges { batch in
            try alice.insert(in: batch)
            try bob.insert(in: batch)
        }
        let post = try await ModelFieldTests.insertPost(in: replica, author: alice)
        let changes = Collector<ModelChange>()
        let token = try post.observe(\.$author.$name) { changes.append($0) }
        alice.name = "Alicia"
        try await replica.performChanges { batch in try alice.save(in: batch) }
        await changes.wait(for: 1)
        post.author = bob
        try await replica.performChanges { batch in try post.save(in: batch) }
        await changes.wait(for: 2)
        alice.name = "Alice again"
        bob.name = "Robert"
        try await replica.performChanges { batch in
            try alice.save(in: batch)
            try bob.save(in: batch)
        }
        await changes.wait(for: 3)
        await drain(replica.callbackQueue)
        #expect(
            changes.values == [
                .change([PropertyChange(name: "author/name", oldValue: "Alice", newValue: "Alicia")]),
                .change([PropertyChange(name: "author/name", oldValue: "Alicia", newValue: "Bob")]),
                .change([PropertyChange(name: "author/name", oldValue: "Bob", newValue: "Robert")]),
            ])
        token.invalidate()
        await fixture.finish()
    }

    @Test("a detached object cannot be observed")
    func detachedRefused() {
        #expect(throws: WeftError.self) { try Post().observe(\.$title) { _ in } }
    }
}
