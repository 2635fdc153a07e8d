import Foundation
import Testing
import WeftCore

@_spi(Engine) @testable import Weft

/// Transactions and batches that read: one guarded batch op, applied only if nothing changed under what
/// they read; rejected here or on another replica when something did.
@Suite struct TransactionReadTests {
    let backend = MemoryBackend()

    @Test("a held transaction that read is rejected, writing nothing, when a read path changed before commit")
    func rejectedWhenAReadPathChangedLocally() async throws {
        let stock = try backend.node("stock/a")
        let orders = try backend.node("orders")
        try await stock.set(["count": 3])
        let transaction = backend.access.transaction()
        let seen = try transaction.read(stock)
        #expect(seen == ["count": 3])
        try transaction.set(Value.int(2), at: stock.at("count"))
        try transaction.push(["item": "a"], under: orders)
        // Another write under what it read, after the read.
        try await stock.at("reserved").set(true)
        #expect(await weftErrorCode { try await transaction.commit() } == .rejected)
        #expect(try await stock.value() == ["count": 3, "reserved": true])
        #expect(try await orders.value() == .null)
    }

    @Test("a held transaction that read applies when only unrelated paths changed, as one guarded op")
    func acceptedWhenAnUnrelatedPathChanged() async throws {
        let stock = try backend.node("stock/a")
        let other = try backend.node("stock/b")
        try await stock.set(3)
        let transaction = backend.access.transaction()
        guard case .int(let left) = try transaction.read(stock) else {
            Issue.record("the stock is not a number")
            return
        }
        #expect(try transaction.read(stock, as: Int.self) == 3)
        try transaction.set(Value.int(left - 1), at: stock)
        try await other.set(9)
        let receipt = try #require(try await transaction.commit())
        #expect(receipt.status >= .durable)
        #expect(try await stock.value() == 2)
        guard case .guardedBatch(_, let reads, let writes) = backend.ops(from: backend.replica).last?.kind else {
            Issue.record("the commit is not one guarded batch")
            return
        }
        #expect(reads == [try Path("/stock/a")])
        #expect(writes == [.set(try Path("/stock/a"), 2)])
    }

    @Test("every read of a transaction comes from one state, and merging two that read two states fails")
    func readsComeFromOneState() async throws {
        let a = try backend.node("a")
        try await a.set(1)
        let transaction = backend.access.transaction()
        #expect(try transaction.read(a) == 1)
        try await a.set(2)
        #expect(try transaction.read(a) == 1)
        #expect(try transaction.recordRead(try Path("/a")) == 1)
        let later = backend.access.transaction()
        #expect(try later.read(a) == 2)
        #expect(await weftErrorCode { try transaction.merge(later) } == .invalidValue)
        let writer = backend.access.transaction()
        try writer.set(3, at: a)
        try transaction.merge(writer)
        #expect(await weftErrorCode { try await transaction.commit() } == .rejected)
        #expect(try await a.value() == 2)
        #expect(await weftErrorCode { _ = try transaction.read(a) } == .transactionCommitted)
    }

    @Test("a transaction applied here is rejected on both replicas when a remote write it had not seen came first")
    func rejectedByARemoteWrite() async throws {
        let hub = MemoryBackend(replica: 0xA, wallMillis: { 1_000 })
        let phone = MemoryBackend(replica: 0xB, wallMillis: { 2_000 })
        try await hub.node("c").set(5)
        try phone.receiveRemote(hub.ops(from: hub.replica))
        // The hub writes under /c; the phone has not seen it when it reads and commits.
        try await hub.node("c").set(6)
        let transaction = phone.access.transaction()
        #expect(try transaction.read(phone.node("c")) == 5)
        try transaction.set(Value.int(50), at: phone.node("c"))
        try transaction.set("phone", at: phone.node("log"))
        let receipt = try #require(try await transaction.commit(waitingFor: .durable))
        #expect(try await phone.node("log").value() == "phone")
        // They exchange their ops: the hub's write is stamped before the phone's op, which had not seen it.
        try phone.receiveRemote(hub.ops(from: hub.replica))
        try hub.receiveRemote(phone.ops(from: phone.replica))
        #expect(await eventually { if case .rejected(.staleRead) = receipt.status { true } else { false } })
        for side in [hub, phone] {
            #expect(try await side.root.value() == ["c": 6])
        }
    }

    @Test("performChanges with reads runs the closure again when a read path changed, then applies")
    func performChangesRetries() async throws {
        let counter = try backend.node("n")
        try await counter.set(0)
        let attempts = Collector<Int>()
        let receipt = try await backend.access.performChanges(at: .now, waitingFor: .durable) { batch in
            guard case .int(let value) = try batch.read(counter) else { return batch.abort() }
            attempts.append(Int(value))
            if attempts.count == 1 {
                // Someone else writes the counter between this attempt's read and its commit.
                _ = try backend.submit(path: try Path("/n"), kind: .set(.int(100)), at: .now)
            }
            try batch.set(Value.int(value + 1), at: counter)
        }
        #expect(receipt != nil)
        #expect(attempts.values == [0, 100])
        #expect(try await counter.value() == 101)
    }

    @Test("performChanges with reads gives up with retriesExhausted when every attempt is stale")
    func performChangesGivesUp() async throws {
        let counter = try backend.node("n")
        let attempts = Collector<Int>()
        let code = await weftErrorCode {
            try await backend.access.performChanges(at: .now, waitingFor: .durable) { batch in
                _ = try batch.read(counter)
                attempts.append(1)
                _ = try backend.submit(path: try Path("/n"), kind: .set(.int(Int64(attempts.count))), at: .now)
                try batch.set("mine", at: counter)
            }
        }
        #expect(code == .retriesExhausted)
        #expect(attempts.count == WeftLimits.transactionRetriesMax)
        #expect(try await counter.value() == .int(Int64(WeftLimits.transactionRetriesMax)))
    }
}
