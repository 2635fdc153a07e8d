#if canImport(Combine)
    import Combine
#else
    import OpenCombine
#endif
import Foundation
import Testing
import WeftCore

@_spi(Engine) @testable import Weft

@Suite struct TransactionHeldTests {
    let backend = MemoryBackend()

    @Test("a held transaction commits writes on several nodes, and a merged one, as one op")
    func commitsAsOneOp() async throws {
        let order = try backend.node("orders/1")
        let stats = try backend.node("stats/orders")
        let cart = try backend.node("carts/alice")
        try await cart.set(["item": "book"])
        let accounts = try backend.node("accounts")
        try await accounts.set(["alice": 100, "bob": 0])
        let events = Collector<DataEvent>()
        let token = accounts.subscribe { events.append($0) }
        await events.wait(for: 1)

        let transaction = backend.access.transaction()
        #expect(transaction.isEmpty)
        try transaction.set(["total": 42], at: order)
        try transaction.increment(by: -30, at: accounts.at("alice"))
        try transaction.clear(at: cart)
        let other = backend.access.transaction()
        try other.increment(by: 30, at: accounts.at("bob"))
        try other.increment(by: 1, at: stats)
        try other.merge(.raw, with: ["status": "paid"], at: order)
        try transaction.merge(other)
        #expect(!transaction.isEmpty)
        let before = backend.ops(from: backend.replica).count
        let receipt = try #require(try await transaction.commit())
        #expect(receipt.status >= .durable)
        let ops = backend.ops(from: backend.replica)
        #expect(ops.count == before + 1)
        guard case .batch(let writes) = ops.last?.kind else {
            Issue.record("the commit is not one batch op")
            return
        }
        #expect(writes.count == 6)
        #expect(ops.last?.stamp == receipt.stamp)
        #expect(
            try await backend.root.value() == [
                "orders": ["1": ["total": 42, "status": "paid"]], "stats": ["orders": 1],
                "accounts": ["alice": 70, "bob": 30],
            ])
        // The observer saw the transfer at once, never half done.
        let seen = await events.wait(for: 2)
        #expect(seen.count == 2)
        #expect(seen.last?.value == ["alice": 70, "bob": 30])
        withExtendedLifetime(token) {}
    }

    @Test("a transaction commits once: a second commit, a write or a merge after it throw")
    func commitsOnce() async throws {
        let node = try backend.node("n")
        let transaction = backend.access.transaction()
        try transaction.set(1, at: node)
        try await transaction.commit()
        #expect(await weftErrorCode { try await transaction.commit() } == .transactionCommitted)
        #expect(await weftErrorCode { try transaction.set(2, at: node) } == .transactionCommitted)
        let fresh = backend.access.transaction()
        try fresh.set(3, at: node)
        #expect(await weftErrorCode { try fresh.merge(transaction) } == .transactionCommitted)
        #expect(await weftErrorCode { try transaction.merge(fresh) } == .transactionCommitted)
        #expect(try await node.value() == 1)
    }

    @Test("an empty transaction writes nothing, and bad input records nothing")
    func emptyAndInvalid() async throws {
        let node = try backend.node("n")
        #expect(try await backend.access.transaction().commit() == nil)
        let transaction = backend.access.transaction()
        #expect(await weftErrorCode { try transaction.set(.raw, ["bad.key": 1], at: node) } == .invalidKey)
        #expect(await weftErrorCode { try transaction.set(1, at: MemoryBackend().root) } == .invalidPath)
        #expect(await weftErrorCode { try transaction.increment(by: .double(.infinity), at: node) } == .invalidValue)
        #expect(transaction.isEmpty)
        #expect(await weftErrorCode { try transaction.merge(MemoryBackend().access.transaction()) } == .invalidPath)
        #expect(await weftErrorCode { try transaction.merge(transaction) } == .invalidValue)
    }

    @Test("a rejected part fails the commit with rejected and writes nothing")
    func rejectedPart() async throws {
        let name = try backend.node("name")
        let other = try backend.node("other")
        try await name.set("alice")
        let transaction = backend.access.transaction()
        try transaction.set("written?", at: other)
        try transaction.increment(at: name)
        #expect(await weftErrorCode { try await transaction.commit() } == .rejected)
        #expect(try await other.value() == .null)
    }

    @Test("the completion and Combine forms commit, and a push creates a child")
    func otherForms() async throws {
        let chat = try backend.node("chat")
        let transaction = backend.access.transaction()
        let child = try transaction.push(Message(author: "a", text: "1"), under: chat)
        let results = Collector<Result<WriteReceipt?, WeftError>>()
        transaction.commit { results.append($0) }
        let result = try #require(await results.wait(for: 1).first)
        #expect((try? result.get())??.status ?? .pending >= .durable)
        #expect(try await chat.childrenKeys() == [child.key].compactMap { $0 })

        let combined = backend.access.transaction()
        try combined.set(Value.int(7), at: chat.at("count"))
        let futures = Collector<WriteReceipt?>()
        let cancellable = combined.forCombine.commit().sink(
            receiveCompletion: { _ in }, receiveValue: { futures.append($0) })
        #expect(await futures.wait(for: 1).count == 1)
        #expect(try await chat.at("count").value() == 7)
        withExtendedLifetime(cancellable) {}
    }

    @Test("core writes recorded directly take the API's checks")
    func coreWrites() async throws {
        let transaction = backend.access.transaction()
        try transaction.record(.set(try Path("/a"), 1))
        try transaction.record(.increment(try Path("/b"), by: 2, from: 0))
        try transaction.record(.merge(try Path("/c"), [MergeChild(relative: try Path("x/y"), value: "z")]))
        #expect(await weftErrorCode { try transaction.record(.increment(try Path("/d"), by: .double(.nan), from: 0)) } == .invalidValue)
        try await transaction.commit()
        #expect(try await backend.root.value() == ["a": 1, "b": 2, "c": ["x": ["y": "z"]]])
    }
}
