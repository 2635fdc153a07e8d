import Foundation
import Testing
import WeftCore

@_spi(Engine) @testable import Weft

@Suite struct DataNodeSubscriptionTests {
    let backend = MemoryBackend()

    @Test func valueEventsStartWithTheCurrentValueThenFollowChanges() async throws {
        let score = try backend.node("game/score")
        try await score.set(1)
        let events = Collector<DataEvent>()
        let token = score.subscribe { events.append($0) }
        #expect(await events.wait(for: 1).map(\.value) == [1])
        try await score.set(2)
        try await (backend.node("game/other")).set("unrelated")
        try await score.clear()
        let all = await events.wait(for: 3)
        #expect(all.map(\.value) == [1, 2, .null])
        #expect(all.map(\.source) == [.initial, .localPending, .localPending])
        #expect(all.allSatisfy { $0.type == .valueChange && $0.node == score && $0.previousSiblingKey == nil })
        withExtendedLifetime(token) {}
    }

    @Test func writesBelowAndAboveTheNodeAreSeen() async throws {
        let alice = try backend.node("users/alice")
        let events = Collector<DataEvent>()
        let token = alice.subscribe { events.append($0) }
        try await alice.at("name").set("Alice")
        try await backend.node("users").set(
            ["alice": ["name": "Alicia"], "bob": ["name": "Bob"]] as [String: [String: String]])
        try await backend.node("users/bob").set("ignored")
        try await backend.root.clear()
        let values = await events.wait(for: 4).map(\.value)
        #expect(values == [.null, ["name": "Alice"], ["name": "Alicia"], .null])
        await settle(backend)
        #expect(events.count == 4)
        withExtendedLifetime(token) {}
    }

    @Test func childEventsCarryThePreviousSiblingInKeyOrder() async throws {
        let list = try backend.node("list")
        try await list.set(.raw, ["b": 1, "10": 2])
        let added = Collector<DataEvent>()
        let changed = Collector<DataEvent>()
        let removed = Collector<DataEvent>()
        let tokens = [
            list.subscribe(to: .childAddition) { added.append($0) },
            list.subscribe(to: .childChange) { changed.append($0) },
            list.subscribe(to: .childRemoval) { removed.append($0) },
        ]
        let initial = await added.wait(for: 2)
        #expect(initial.map { $0.node.key } == ["10", "b"])
        #expect(initial.map(\.previousSiblingKey) == [nil, "10"])
        #expect(initial.allSatisfy { $0.source == .initial })
        try await list.merge(.raw, with: ["a": 3, "2": 4])
        try await list.at("b").set(5)
        try await list.at("10").clear()
        let additions = await added.wait(for: 4)
        #expect(additions.dropFirst(2).map { $0.node.key } == ["2", "a"])
        #expect(additions.dropFirst(2).map(\.previousSiblingKey) == [nil, "10"])
        #expect(additions.dropFirst(2).map(\.value) == [4, 3])
        let changes = await changed.wait(for: 1)
        #expect(changes.map { $0.node.key } == ["b"])
        #expect(changes.map(\.value) == [5])
        #expect(changes.map(\.previousSiblingKey) == ["a"])
        let removals = await removed.wait(for: 1)
        #expect(removals.map { $0.node.key } == ["10"])
        #expect(removals.map(\.value) == [2])
        #expect(removals.map(\.previousSiblingKey) == ["2"])
        withExtendedLifetime(tokens) {}
    }

    /// More children than a subscriber's buffer holds before coalescing: every addition still
    /// arrives, once (a list kept from them would otherwise miss children for ever).
    @Test func aNodeWithMoreChildrenThanTheBufferGetsAnAdditionForEachChild() async throws {
        let count = WeftLimits.subscriberEventsBufferedMax + 2_000
        let big = try backend.node("big")
        try await big.set(.raw, Dictionary(uniqueKeysWithValues: (0..<count).map { ("c\($0)", 1) }))
        let added = Collector<DataEvent>()
        let token = big.subscribe(to: .childAddition) { added.append($0) }
        let events = await added.wait(for: count)
        #expect(Set(events.map { $0.node.key }).count == count)
        await settle(backend)
        #expect(added.count == count)
        withExtendedLifetime(token) {}
    }

    @Test func childrenConstraintsFilterWhatCounts() async throws {
        let node = try backend.node("n")
        try await node.set(.raw, ["a": 1, "m": 2, "z": 3])
        let nothing = Collector<DataEvent>()
        let range = Collector<DataEvent>()
        let rangeAdded = Collector<DataEvent>()
        let tokens = [
            node.subscribe(childrenConstraint: .none) { nothing.append($0) },
            node.subscribe(childrenConstraint: .keyRange(from: "b", to: "n")) { range.append($0) },
            node.subscribe(to: .childAddition, childrenConstraint: .keyRange(from: "b", to: nil)) {
                rangeAdded.append($0)
            },
        ]
        #expect(await nothing.wait(for: 1).map(\.value) == [.null])
        #expect(await range.wait(for: 1).map(\.value) == [["m": 2]])
        try await node.at("a").set(10)
        try await node.at("m").set(20)
        try await node.set("scalar")
        await settle(backend)
        #expect(nothing.values.map(\.value) == [.null, "scalar"])
        #expect(range.values.map(\.value) == [["m": 2], ["m": 20], "scalar"])
        #expect(rangeAdded.values.map { $0.node.key } == ["m", "z"])
        withExtendedLifetime(tokens) {}
    }

    @Test func mergedRemoteWritesAreMarkedMerged() async throws {
        let node = try backend.node("shared")
        let events = Collector<DataEvent>()
        let token = node.subscribe { events.append($0) }
        await events.wait(for: 1)
        try backend.receiveRemote([
            Sample.remote(
                0xB0B, sequence: 1, millis: UInt64(Date().timeIntervalSince1970 * 1000), path: "/shared",
                .set("from bob"))
        ])
        let all = await events.wait(for: 2)
        #expect(all.last?.value == "from bob")
        #expect(all.last?.source == .merged)
        #expect(all.last?.isLocalPending == false)
        withExtendedLifetime(token) {}
    }

    @Test func invalidatingTheTokenStopsEventsAndTheListener() async throws {
        let node = try backend.node("x")
        let events = Collector<DataEvent>()
        let token = node.subscribe { events.append($0) }
        await events.wait(for: 1)
        #expect(backend.listenerCount == 1)
        token.invalidate()
        #expect(token.isInvalidated)
        #expect(backend.listenerCount == 0)
        try await node.set(1)
        await settle(backend)
        #expect(events.count == 1)
    }

    @Test func droppingTheTokenStopsTheSubscription() async throws {
        let node = try backend.node("x")
        let events = Collector<DataEvent>()
        do {
            let token = node.subscribe { events.append($0) }
            await events.wait(for: 1)
            withExtendedLifetime(token) {}
        }
        #expect(await eventually { backend.listenerCount == 0 })
        try await node.set(1)
        await settle(backend)
        #expect(events.count == 1)
    }

    @Test func theAsyncSequenceFormYieldsEventsUntilCancelled() async throws {
        let chat = try backend.node("chat")
        try await chat.push(Message(author: "alice", text: "hi"))
        let received = Collector<DataEvent>()
        let task = Task {
            for await event in chat.events(for: .childAddition) {
                received.append(event)
                if received.count == 3 { break }
            }
        }
        await received.wait(for: 1)
        try await chat.push(Message(author: "bob", text: "hello"))
        try await chat.push(Message(author: "carol", text: "hey"))
        await task.value
        #expect(received.values.map(\.source) == [.initial, .localPending, .localPending])
        #expect(received.values.map { $0.value["author"] } == ["alice", "bob", "carol"])
        #expect(try received.values.map { try $0.decodedValue(as: Message.self).text } == ["hi", "hello", "hey"])
        #expect(await eventually { backend.listenerCount == 0 })
        let cancelled = Task { for await _ in chat.events() {} }
        try await Task.sleep(nanoseconds: 10_000_000)
        cancelled.cancel()
        await cancelled.value
        #expect(await eventually { backend.listenerCount == 0 })
    }

    @Test func anActorCanIterateTheEvents() async throws {
        actor Consumer {
            var values: [Value] = []
            func consume(_ node: DataNode, count: Int) async {
                for await event in node.events() {
                    values.append(event.value)
                    if values.count == count { return }
                }
            }
        }
        let node = try backend.node("actor")
        let consumer = Consumer()
        let task = Task { await consumer.consume(node, count: 2) }
        #expect(await eventually { backend.listenerCount == 1 })
        try await node.set("x")
        await task.value
        #expect(await consumer.values.last == "x")
    }

    @Test func manyChangesAreDeliveredInOrder() async throws {
        let counter = try backend.node("c")
        let events = Collector<DataEvent>()
        let token = counter.subscribe { events.append($0) }
        await events.wait(for: 1)
        for value in 1...300 { try await counter.set(value, waitingFor: .pending) }
        let all = await events.wait(for: 301)
        #expect(all.map(\.value) == [.null] + (1...300).map { Value.int(Int64($0)) })
        withExtendedLifetime(token) {}
    }
}

@Suite struct EventBufferTests {
    let backend = MemoryBackend()

    func event(_ key: String, _ value: Value, _ type: DataEventType = .childChange) throws -> DataEvent {
        DataEvent(
            type: type, node: try backend.node("list/\(key)"), value: value, previousSiblingKey: nil, source: .merged)
    }

    @Test func aSubscriberThatFallsBehindGetsTheLatestEventPerNode() throws {
        var buffer = EventBuffer(capacity: 8)
        try buffer.append(contentsOf: (0..<6).map { try event("a", .int(Int64($0))) })
        try buffer.append(contentsOf: [event("b", 1), event("c", 1), event("b", 2)])
        #expect(buffer.count <= 8)
        let events = buffer.take(100)
        #expect(events.map { $0.node.key } == ["a", "c", "b"])
        #expect(events.map(\.value) == [5, 1, 2])
        #expect(buffer.isEmpty)
    }

    /// Coalescing keeps one event per node, so a list kept from child events stays right however many
    /// children changed; only past `coalescedMax` nodes do the oldest go.
    @Test func coalescingKeepsTheLastEventOfEveryNodeUpToItsBound() throws {
        var buffer = EventBuffer(capacity: 16, coalescedMax: 64)
        for index in 0..<40 { try buffer.append(contentsOf: [event("k\(index)", 1)]) }
        try buffer.append(contentsOf: [event("k3", 2)])
        let all = buffer.take(100)
        #expect(Set(all.map(\.node.key)).count == 40, "an event for each of 40 children, none lost")
        #expect(all.last?.node.key == "k3")
        #expect(all.last?.value == 2)

        for index in 0..<1_000 { try buffer.append(contentsOf: [event("k\(index)", 1)]) }
        #expect(buffer.count <= 2 * 64)
        let kept = buffer.take(1_000)
        #expect(kept.count <= 128)
        #expect(kept.count >= 64)
        #expect(kept.last?.node.key == "k999")
        #expect(Set(kept.map(\.node.key)).count == kept.count, "coalesced: one per node")
    }

    @Test func takingInPartsKeepsTheOrder() throws {
        var buffer = EventBuffer(capacity: 100)
        try buffer.append(contentsOf: (0..<10).map { try event("k\($0)", .int(Int64($0))) })
        #expect(buffer.take(3).map(\.value) == [0, 1, 2])
        try buffer.append(contentsOf: [event("late", 10)])
        #expect(buffer.take(100).map(\.value) == [3, 4, 5, 6, 7, 8, 9, 10])
    }
}
