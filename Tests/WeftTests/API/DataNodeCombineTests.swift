#if canImport(Combine)
    import Combine
#else
    import OpenCombine
#endif
import Foundation
import Testing
import WeftCore

@_spi(Engine) @testable import Weft

/// Collects what a Combine pipeline publishes.
final class Recorder<Output: Sendable>: @unchecked Sendable {
    // Sendable: fields are guarded by `lock`.
    private let lock = NSLock()
    private var outputs: [Output] = []
    private var completions: [Subscribers.Completion<WeftError>] = []
    private var cancellable: AnyCancellable?

    init(_ publisher: some Publisher<Output, WeftError>) {
        let token = publisher.sink(
            receiveCompletion: { [weak self] completion in self?.lock.withLock { self?.completions.append(completion) }
            },
            receiveValue: { [weak self] value in self?.lock.withLock { self?.outputs.append(value) } })
        lock.withLock { cancellable = token }
    }

    var values: [Output] { lock.withLock { outputs } }
    var errors: [WeftError] {
        lock.withLock { completions.compactMap { if case .failure(let error) = $0 { error } else { nil } } }
    }
    var isFinished: Bool { lock.withLock { completions.contains { if case .finished = $0 { true } else { false } } } }

    @discardableResult
    func wait(for count: Int) async -> [Output] {
        await eventually(timeoutSeconds: 30) { self.values.count + self.errors.count >= count }
        return values
    }

    func cancel() { lock.withLock { cancellable }?.cancel() }
}

@Suite struct DataNodeCombineTests {
    let backend = MemoryBackend()

    @Test func futuresWriteAndRead() async throws {
        let node = try backend.node("users/alice").forCombine
        #expect(node.description == "/users/alice")
        #expect(node.parent?.dataNode == (try backend.node("users")))
        #expect((node / "name")?.dataNode == (try backend.node("users/alice/name")))
        let written = Recorder(node.set(User(name: "Alice", age: 31)))
        #expect(await written.wait(for: 1).first?.status == .durable)
        #expect(await Recorder(node.decodedValue(as: User.self)).wait(for: 1) == [User(name: "Alice", age: 31)])
        #expect(await Recorder(node.value()).wait(for: 1) == [["name": "Alice", "age": 31]])
        #expect(await Recorder(node.childrenKeys()).wait(for: 1) == [["age", "name"]])
        await Recorder(node.merge(with: ["age": 32])).wait(for: 1)
        await Recorder(node.merge(.raw, with: ["address/city": "Lyon"])).wait(for: 1)
        #expect(try await node.dataNode.value() == ["name": "Alice", "age": 32, "address": ["city": "Lyon"]])
        await Recorder(node.copyValue(to: "/backup")).wait(for: 1)
        await Recorder(node.clear()).wait(for: 1)
        #expect(try await node.dataNode.value() == .null)
        #expect(try await backend.node("backup/age").value() == 32)
    }

    @Test func futuresForPushIncrementAndTransactions() async throws {
        let chat = try backend.node("chat").forCombine
        let pushed = await Recorder(chat.push(Message(author: "a", text: "hi"))).wait(for: 1)
        #expect(pushed.first?.parent == chat)
        let counter = try backend.node("counter").forCombine
        #expect(await Recorder(counter.increment(by: 2)).wait(for: 1).map(\.value) == [2])
        let transaction = await Recorder(counter.runTransaction { .set(.int(($0.intValue ?? 0) * 10)) }).wait(for: 1)
        #expect(transaction.first?.value == 20)
        let failed = Recorder(counter.set(json: "{"))
        await failed.wait(for: 1)
        #expect(failed.errors.map(\.code) == [.invalidJSON])
    }

    @Test func eventPublishersHonourDemand() async throws {
        let node = try backend.node("n")
        let subscriber = DemandingSubscriber(initial: .max(1))
        let received = subscriber.received
        node.forCombine.eventPublisher().subscribe(subscriber)
        await received.wait(for: 1)
        for value in 1...5 { try await node.set(value, waitingFor: .pending) }
        await settle(backend)
        #expect(received.values.map(\.value) == [.null])
        subscriber.request(10)
        let all = await received.wait(for: 6)
        #expect(all.map(\.value) == [.null, 1, 2, 3, 4, 5])
        subscriber.cancel()
        #expect(await eventually { backend.listenerCount == 0 })
    }

    @Test func aSubscriberThatCancelsInsideReceiveGetsNoMoreEvents() async throws {
        // Found by cancelling from inside `receive(_:)` during the first additions: the subscription went
        // on delivering every event it had already taken from the feed (all 40 here).
        let list = try backend.node("list")
        try await list.set(.raw, Dictionary(uniqueKeysWithValues: (0..<40).map { ("k\($0)", $0) }))
        let subscriber = DemandingSubscriber(initial: .unlimited, cancellingAfter: 2)
        list.eventPublisher(for: .childAddition).subscribe(subscriber)
        await subscriber.received.wait(for: 2)
        try await list.at("late").set(1)
        await settle(backend)
        #expect(subscriber.received.values.map { $0.node.key } == ["k0", "k1"])
        #expect(subscriber.completions.count == 0)
    }

    @Test func decodedValuePublishersSkipUndecodableValues() async throws {
        let node = try backend.node("users/alice")
        try await node.set(User(name: "Alice", age: 31))
        let users = Recorder(node.forCombine.decodedValuePublisher(as: User.self))
        await users.wait(for: 1)
        try await node.set(.raw, ["name": "Alice", "age": "unknown"])
        try await node.set(User(name: "Alice", age: 32))
        let all = await users.wait(for: 2)
        #expect(all == [User(name: "Alice", age: 31), User(name: "Alice", age: 32)])
        #expect(users.errors.isEmpty)
        users.cancel()
        #expect(await eventually { backend.listenerCount == 0 })
    }
}
