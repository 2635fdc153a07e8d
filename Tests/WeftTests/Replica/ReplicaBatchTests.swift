import Foundation
import Testing
import WeftCore

@_spi(Engine) @testable import Weft

@Suite struct ReplicaBatchTests {
    let backend = MemoryBackend()

    @Test func aBatchWritesSeveralPathsUnderOneStamp() async throws {
        let access = backend.access
        let order = try backend.node("orders/1")
        let stats = try backend.node("stats/orders")
        let cart = try backend.node("carts/alice")
        try await cart.set(["item": "book"])
        let receipt = try await access.performChanges(at: .now, waitingFor: .durable) { batch in
            try batch.set(["total": 42], at: order)
            try batch.increment(by: 1, at: stats)
            try batch.clear(at: cart)
            try batch.merge(.raw, with: ["status": "paid"], at: order)
        }
        #expect(receipt?.status == .durable)
        #expect(
            try await backend.root.value() == [
                "orders": ["1": ["total": 42, "status": "paid"]], "stats": ["orders": 1],
            ])
    }

    @Test func aSubscriberSeesABatchAllAtOnce() async throws {
        let accounts = try backend.node("accounts")
        try await accounts.set(["alice": 100, "bob": 0])
        let events = Collector<DataEvent>()
        let token = accounts.subscribe { events.append($0) }
        await events.wait(for: 1)
        for _ in 0..<20 {
            try await backend.access.performChanges(at: .now, waitingFor: .pending) { batch in
                try batch.increment(by: -5, at: accounts.at("alice"))
                try batch.increment(by: 5, at: accounts.at("bob"))
            }
        }
        let all = await events.wait(for: 21)
        #expect(all.count == 21)
        // Every state an observer saw keeps the total: no transfer was seen half done.
        #expect(all.allSatisfy { ($0.value["alice"].intValue ?? 0) + ($0.value["bob"].intValue ?? 0) == 100 })
        #expect(all.last?.value == ["alice": 0, "bob": 100])
        withExtendedLifetime(token) {}
    }

    @Test func aBatchWithARejectedPartWritesNothing() async throws {
        let name = try backend.node("name")
        let other = try backend.node("other")
        try await name.set("alice")
        let code = await weftErrorCode {
            try await backend.access.performChanges(at: .now, waitingFor: .durable) { batch in
                try batch.set("written?", at: other)
                try batch.increment(at: name)
            }
        }
        #expect(code == .rejected)
        #expect(try await other.value() == .null)
        #expect(try await name.value() == "alice")
    }

    @Test func anAbortedOrThrowingBatchWritesNothing() async throws {
        struct Stop: Error {}
        let node = try backend.node("n")
        let aborted = await weftErrorCode {
            try await backend.access.performChanges(at: .now, waitingFor: .durable) { batch in
                try batch.set(1, at: node)
                batch.abort()
            }
        }
        #expect(aborted == .transactionAborted)
        await #expect(throws: Stop.self) {
            try await backend.access.performChanges(at: .now, waitingFor: .durable) { batch in
                try batch.set(1, at: node)
                throw Stop()
            }
        }
        let invalid = await weftErrorCode {
            try await backend.access.performChanges(at: .now, waitingFor: .durable) { batch in
                try batch.set(1, at: node)
                try batch.set(.raw, ["bad.key": 1], at: node)
            }
        }
        #expect(invalid == .invalidKey)
        let foreign = await weftErrorCode {
            try await backend.access.performChanges(at: .now, waitingFor: .durable) { batch in
                try batch.set(1, at: MemoryBackend().root)
            }
        }
        #expect(foreign == .invalidPath)
        #expect(try await node.value() == .null)
        let empty = try await backend.access.performChanges(at: .now, waitingFor: .durable) { _ in }
        #expect(empty == nil)
    }

    @Test func pushInABatchCreatesAChild() async throws {
        let chat = try backend.node("chat")
        let children = Collector<DataNode>()
        try await backend.access.performChanges(at: .now, waitingFor: .durable) { batch in
            children.append(try batch.push(Message(author: "a", text: "1"), under: chat))
            children.append(try batch.push(Message(author: "b", text: "2"), under: chat))
        }
        let keys = try await chat.childrenKeys()
        #expect(keys == children.values.compactMap(\.key))
    }

    @Test func theCompletionFormReportsSuccess() async throws {
        let node = try backend.node("cb")
        let results = Collector<Result<WriteReceipt?, WeftError>>()
        backend.access.performChanges(
            at: .now, waitingFor: .durable, queue: nil, { batch in try batch.set(1, at: node) }
        ) {
            results.append($0)
        }
        let result = try #require(await results.wait(for: 1).first)
        #expect((try? result.get())??.status == .durable)
        #expect(try await node.value() == 1)
    }

    @Test func aSnapshotStaysConsistentWhileWritesGoOn() async throws {
        let a = try backend.node("a")
        let b = try backend.node("b")
        try await a.set(0)
        try await b.set(0)
        let writer = Task {
            for value in 1...200 {
                try await backend.access.performChanges(at: .now, waitingFor: .pending) { batch in
                    try batch.set(value, at: a)
                    try batch.set(value, at: b)
                }
            }
        }
        var checks = 0
        while checks < 200 {
            let (left, right) = try backend.access.readSnapshot { reader in
                (try reader.value(of: a), try reader.value(at: "/b"))
            }
            #expect(left == right)
            checks += 1
            await Task.yield()
        }
        try await writer.value
        let snapshot = try backend.access.readSnapshot { reader in
            (
                try reader.decodedValue(of: a, as: Int.self), try reader.childrenKeys(of: backend.root),
                try reader.exists(b)
            )
        }
        #expect(snapshot.0 == 200)
        #expect(snapshot.1 == ["a", "b"])
        #expect(snapshot.2)
        #expect(throws: WeftError.self) { try backend.access.readSnapshot { try $0.value(of: MemoryBackend().root) } }
    }
}
