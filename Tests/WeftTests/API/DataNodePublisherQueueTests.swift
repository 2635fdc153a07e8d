#if canImport(Combine)
    import Combine
#else
    import OpenCombine
#endif
import Foundation
import Testing
import WeftCore

@_spi(Engine) @testable import Weft

/// Publishers deliver on a queue the app names, by default the replica's `callbackQueue`. Before, events
/// arrived on whatever thread notified, and a `sink` written in main-actor code (Swift 6 makes it
/// main-actor isolated) trapped at run time in `_dispatch_assert_queue_fail`.
@Suite struct DataNodePublisherQueueTests {
    /// Marks the queues of these tests, to tell where a value arrived.
    static let queueName = DispatchSpecificKey<String>()

    static func markedQueue(_ name: String) -> DispatchQueue {
        let queue = DispatchQueue(label: name)
        queue.setSpecific(key: queueName, value: name)
        return queue
    }

    @Test func eventsArriveOnTheQueueNamed() async throws {
        let replica = try Replica.inMemory()
        let node = try replica.root.child("score")
        let places = Collector<String>()
        let values = Collector<Value>()
        let cancellable = node.eventPublisher(queue: Self.markedQueue("named")).sink(
            receiveCompletion: { _ in places.append("end:" + (DispatchQueue.getSpecific(key: Self.queueName) ?? "?")) },
            receiveValue: { event in
                places.append(DispatchQueue.getSpecific(key: Self.queueName) ?? "elsewhere")
                values.append(event.value)
            })
        try await node.set(1)
        try await node.set(2)
        #expect(await values.wait(for: 3) == [.null, 1, 2])
        await replica.shutdown()
        await places.wait(for: 4)
        #expect(places.values == ["named", "named", "named", "end:named"])
        cancellable.cancel()
    }

    @Test func eventsArriveOnTheCallbackQueueByDefault() async throws {
        let replica = try Replica.inMemory()
        replica.callbackQueue = Self.markedQueue("callbacks")
        let node = try replica.root.child("score")
        let places = Collector<String>()
        let cancellable = node.decodedValuePublisher(as: Int.self).sink(
            receiveCompletion: { _ in },
            receiveValue: { _ in places.append(DispatchQueue.getSpecific(key: Self.queueName) ?? "elsewhere") })
        try await node.set(1)
        #expect(await places.wait(for: 1) == ["callbacks"])
        let statuses = Collector<String>()
        let statusCancellable = replica.syncStatusPublisher().sink { _ in
            statuses.append(DispatchQueue.getSpecific(key: Self.queueName) ?? "elsewhere")
        }
        #expect(await statuses.wait(for: 1).first == "callbacks")
        cancellable.cancel()
        statusCancellable.cancel()
        await replica.shutdown()
    }

    @Test func thePublisherThatCannotFailFinishesWhereTheOtherFails() async throws {
        let replica = try Replica.inMemory()
        let node = try replica.root.child("score")
        try await node.set(5)
        let values = Collector<Value>()
        let ends = Collector<Bool>()
        let live = node.publisher().sink(
            receiveCompletion: { _ in ends.append(true) }, receiveValue: { values.append($0.value) })
        #expect(await values.wait(for: 1) == [5])
        await replica.shutdown()
        #expect(await ends.wait(for: 1) == [true])
        let late = Collector<Bool>()
        let after = node.publisher(as: Int.self).sink(
            receiveCompletion: { _ in late.append(true) }, receiveValue: { _ in })
        #expect(await late.wait(for: 1) == [true], "subscribed after shutdown, it finishes")
        live.cancel()
        after.cancel()
    }
}

/// A main-actor app (Swift 6 language mode, as this target is built): a `sink` written on the main
/// actor is main-actor code, and Swift checks at run time that it runs on the main queue.
@MainActor
@Suite struct MainActorSinkTests {
    @Test func aMainActorSinkOnTheMainQueueReceivesAWrite() async throws {
        let replica = try Replica.inMemory()
        let node = try replica.root.child("inventory/widget")
        var received: [Value] = []
        let cancellable = node.publisher(queue: .main).sink { event in
            MainActor.assertIsolated()
            received.append(event.value)
        }
        try await node.set(3)
        let deadline = ContinuousClock.now + .seconds(30)
        while received.count < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(received == [.null, 3])
        cancellable.cancel()
        await replica.shutdown()
    }

    @Test func aMainActorSinkWorksWithReceiveOnTheMainQueue() async throws {
        let replica = try Replica.inMemory()
        let node = try replica.root.child("inventory/gadget")
        var received: [Int] = []
        let cancellable = node.decodedValuePublisher(as: Int.self)
            .receive(on: DispatchQueue.main)
            .sink(receiveCompletion: { _ in }, receiveValue: { received.append($0) })
        try await node.set(7)
        let deadline = ContinuousClock.now + .seconds(30)
        while received.isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(received == [7])
        cancellable.cancel()
        await replica.shutdown()
    }

    @Test func aMainActorCallbackSubscriptionWithTheMainCallbackQueue() async throws {
        let replica = try Replica.inMemory()
        replica.callbackQueue = .main
        let node = try replica.root.child("inventory/gizmo")
        let values = Collector<Value>()
        let token = node.subscribe { event in
            MainActor.assertIsolated()
            values.append(event.value)
        }
        try await node.set(1)
        #expect(await values.wait(for: 2) == [.null, 1])
        token.invalidate()
        await replica.shutdown()
    }
}
