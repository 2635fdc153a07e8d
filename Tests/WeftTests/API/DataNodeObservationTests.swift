import Foundation
import Testing
import WeftCore

@_spi(Engine) @testable import Weft

@Suite struct DataNodeObservationTests {
    let backend = MemoryBackend()

    @Test func anObserverOfNameIsNotCalledForAChangeOfAge() async throws {
        let alice = try backend.node("users/alice")
        try await alice.set(User(name: "Alice", age: 31))
        let changes = Collector<NodeChange>()
        let token = try alice.observe(keyPaths: ["name"]) { changes.append($0) }
        try await alice.at("age").set(32)
        try await alice.merge(with: ["age": 33, "city": "Lyon"] as [String: Value])
        await settle(backend)
        #expect(changes.count == 0)
        try await alice.at("name").set("Alicia")
        let seen = await changes.wait(for: 1)
        #expect(seen == [.change(alice, [PropertyChange(name: "name", oldValue: "Alice", newValue: "Alicia")])])
        withExtendedLifetime(token) {}
    }

    @Test func deeperKeyPathsAndWholeNodeObservation() async throws {
        let alice = try backend.node("users/alice")
        try await alice.set(.raw, ["name": "Alice", "address": ["city": "Paris", "zip": "75001"]])
        let city = Collector<NodeChange>()
        let whole = Collector<NodeChange>()
        let tokens = [
            try alice.observe(keyPaths: ["address/city"]) { city.append($0) },
            try alice.observe { whole.append($0) },
        ]
        try await alice.merge(.raw, with: ["address/zip": "75002"])
        try await alice.merge(.raw, with: ["address/city": "Lyon"])
        let cityChanges = await city.wait(for: 1)
        #expect(
            cityChanges == [.change(alice, [PropertyChange(name: "address/city", oldValue: "Paris", newValue: "Lyon")])]
        )
        let wholeChanges = await whole.wait(for: 2)
        #expect(
            wholeChanges.allSatisfy {
                if case .change(_, let props) = $0 { props.map(\.name) == ["address"] } else { false }
            })
        withExtendedLifetime(tokens) {}
    }

    @Test func burstsCoalesceIntoOneNotification() async throws {
        let node = try backend.node("doc")
        try await node.set(["title": "a", "body": "x"])
        let queue = DispatchQueue(label: "observer")
        let changes = Collector<NodeChange>()
        let token = try node.observe(keyPaths: ["title", "body"], on: queue) { changes.append($0) }
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }
        for index in 0..<20 { try await node.at("title").set("t\(index)", waitingFor: .pending) }
        try await node.at("body").set("y", waitingFor: .pending)
        try await Task.sleep(nanoseconds: 20_000_000)
        gate.signal()
        await settle(backend)
        await drain(queue)
        #expect(
            changes.values == [
                .change(
                    node,
                    [
                        PropertyChange(name: "title", oldValue: "a", newValue: "t19"),
                        PropertyChange(name: "body", oldValue: "x", newValue: "y"),
                    ])
            ])
        withExtendedLifetime(token) {}
    }

    @Test func thereIsNoInitialCallAndAChangeBackReportsNothing() async throws {
        let node = try backend.node("flag")
        try await node.set(["on": true])
        let queue = DispatchQueue(label: "observer")
        let changes = Collector<NodeChange>()
        let token = try node.observe(keyPaths: ["on"], on: queue) { changes.append($0) }
        await settle(backend)
        #expect(changes.count == 0)
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }
        try await node.at("on").set(false, waitingFor: .pending)
        try await node.at("on").set(true, waitingFor: .pending)
        try await Task.sleep(nanoseconds: 20_000_000)
        gate.signal()
        await settle(backend)
        await drain(queue)
        #expect(changes.count == 0)
        withExtendedLifetime(token) {}
    }

    @Test func deletingTheNodeIsReported() async throws {
        let alice = try backend.node("users/alice")
        try await alice.set(User(name: "Alice", age: 31))
        let changes = Collector<NodeChange>()
        let token = try alice.observe(keyPaths: ["name"]) { changes.append($0) }
        try await alice.clear()
        #expect(await changes.wait(for: 1) == [.deleted])
        withExtendedLifetime(token) {}
    }

    @Test func invalidateStopsTheBlock() async throws {
        let node = try backend.node("n")
        let changes = Collector<NodeChange>()
        let token = try node.observe { changes.append($0) }
        try await node.set(1)
        await changes.wait(for: 1)
        token.invalidate()
        try await node.set(2)
        await settle(backend)
        #expect(changes.values == [.change(node, [PropertyChange(name: ".", oldValue: .null, newValue: 1)])])
        #expect(backend.listenerCount == 0)
    }

    @Test func aNotificationScheduledBeforeShutdownIsDelivered() async throws {
        let fixture = try ReplicaFixture(.memory)
        let node = try fixture.replica.root.at("n")
        try await node.set(.raw, ["name": "A"])
        let queue = DispatchQueue(label: "observation at shutdown")
        let changes = Collector<NodeChange>()
        let token = try node.observe(keyPaths: ["name"], on: queue) { changes.append($0) }
        // The baseline is read before the change: a notification needs one to compare with.
        let events = Collector<DataEvent>()
        let subscription = node.subscribe(to: .valueChange, queue: queue) { events.append($0) }
        await events.wait(for: 1)
        queue.suspend()
        try await node.at("name").set("B")
        let shutdown = Task { await fixture.replica.shutdown() }
        try await Task.sleep(nanoseconds: 100_000_000)
        queue.resume()
        await shutdown.value
        await drain(queue)
        #expect(changes.values == [.change(node, [PropertyChange(name: "name", oldValue: "A", newValue: "B")])])
        withExtendedLifetime((token, subscription)) {}
        await fixture.finish()
    }

    @Test func keyPathsMustStayBelowTheNode() throws {
        let node = try backend.node("users/alice")
        #expect(throws: WeftError.self) { try node.observe(keyPaths: ["../bob"]) { _ in } }
        #expect(throws: WeftError.self) { try node.observe(keyPaths: ["a.b"]) { _ in } }
        let tooMany = (0...WeftLimits.observedKeyPathsMax).map { "k\($0)" }
        #expect(throws: WeftError.self) { try node.observe(keyPaths: tooMany) { _ in } }
    }
}
