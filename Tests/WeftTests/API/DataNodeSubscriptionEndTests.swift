import Foundation
import Testing
import WeftCore

@_spi(Engine) @testable import Weft

/// The seed's `onCompletion` on callback subscriptions, and Dflat's `subscribe(object:)`, which ends
/// when its node is deleted. Before, a callback subscriber could not learn that no event would come.
@Suite struct DataNodeSubscriptionEndTests {
    @Test func onCompletionComesAfterTheLastEventAtShutdown() async throws {
        let replica = try Replica.inMemory()
        let node = try replica.root.child("score")
        let log = Collector<String>()
        let token = node.subscribe(to: .valueChange) { event in
            log.append("event \(event.value)")
        } onCompletion: { end in
            log.append("end \(end)")
        }
        try await node.set(1)
        await log.wait(for: 2)
        await replica.shutdown()
        #expect(await log.wait(for: 3) == ["event null", "event 1", "end shutDown"])
        token.invalidate()
    }

    @Test func aSubscriptionMadeAfterShutdownCompletesAtOnce() async throws {
        let replica = try Replica.inMemory()
        await replica.shutdown()
        let ends = Collector<SubscriptionEnd>()
        let token = try replica.root.child("a").subscribe(to: .childAddition, onEvent: { _ in }) { ends.append($0) }
        #expect(await ends.wait(for: 1) == [.shutDownBeforeStart])
        token.invalidate()
    }

    @Test func anInvalidatedSubscriptionEndsSilently() async throws {
        let replica = try Replica.inMemory()
        let ends = Collector<SubscriptionEnd>()
        let events = Collector<Value>()
        let token = try replica.root.child("a").subscribe(onEvent: { events.append($0.value) }) { ends.append($0) }
        await events.wait(for: 1)
        token.invalidate()
        await replica.shutdown()
        await drain(replica.callbackQueue)
        try await Task.sleep(for: .milliseconds(50))
        #expect(ends.values.isEmpty)
    }

    @Test func anObjectSubscriptionFollowsTheValueAndEndsWhenTheNodeIsDeleted() async throws {
        let replica = try Replica.inMemory()
        let node = try replica.root.child("users/ada")
        try await node.set(User(name: "Ada", age: 36))
        let updates = Collector<SubscribedObject<User>>()
        let token = node.subscribe(object: User.self) { updates.append($0) }
        #expect(await updates.wait(for: 1) == [.updated(User(name: "Ada", age: 36))])
        try await node.set(["name": "Ada"])  // does not decode as a User: skipped
        try await node.set(User(name: "Ada", age: 37))
        try await node.clear()
        try await node.set(User(name: "Ada", age: 38))  // after the deletion: not reported
        await drain(replica.callbackQueue)
        #expect(
            await updates.wait(for: 3) == [
                .updated(User(name: "Ada", age: 36)), .updated(User(name: "Ada", age: 37)), .deleted,
            ])
        try await Task.sleep(for: .milliseconds(50))
        await drain(replica.callbackQueue)
        #expect(updates.count == 3, "nothing after .deleted")
        token.invalidate()
        await replica.shutdown()
    }

    @Test func anObjectSubscriptionToAnAbsentNodeIsDeletedAtOnce() async throws {
        let replica = try Replica.inMemory()
        let updates = Collector<SubscribedObject<User>>()
        let token = try replica.root.child("users/nobody").subscribe(object: User.self) { updates.append($0) }
        #expect(await updates.wait(for: 1) == [.deleted])
        try await replica.root.child("users/nobody").set(User(name: "Late", age: 1))
        try await Task.sleep(for: .milliseconds(50))
        await drain(replica.callbackQueue)
        #expect(updates.count == 1)
        token.invalidate()
        await replica.shutdown()
    }
}
