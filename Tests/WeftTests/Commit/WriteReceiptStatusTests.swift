import Foundation
import Testing
import WeftCore

@_spi(Engine) @testable import Weft

@Suite struct WriteReceiptStatusTests {
    @Test func asyncWritesWaitUntilDurableByDefault() async throws {
        let backend = MemoryBackend(durabilityDelay: .milliseconds(20))
        let node = try backend.node("a")
        let receipt = try await node.set(1)
        #expect(receipt.status == .durable)
        let second = try await node.set(2)
        #expect(second.stamp > receipt.stamp)
    }

    @Test func waitingForPendingReturnsAtOnce() async throws {
        let backend = MemoryBackend(durabilityDelay: nil)
        let node = try backend.node("a")
        let receipt = try await node.set(1, waitingFor: .pending)
        #expect(receipt.status == .pending)
        let statuses = Collector<WriteStatus>()
        receipt.observe { statuses.append($0) }
        backend.makeDurable()
        #expect(await statuses.wait(for: 1) == [.durable])
    }

    @Test func aWriteCanWaitUntilAcknowledgedOrStable() async throws {
        let backend = MemoryBackend()
        let node = try backend.node("a")
        let done = Collector<WriteStatus>()
        let task = Task {
            let receipt = try await node.set(1, waitingFor: .acknowledged)
            done.append(receipt.status)
        }
        #expect(await eventually { backend.lastLocalStamp != nil })
        let stamp = try #require(backend.lastLocalStamp)
        try await Task.sleep(nanoseconds: 20_000_000)
        #expect(done.count == 0)
        backend.advance(stamp, to: .acknowledged)
        try await task.value
        #expect(done.values == [.acknowledged])
    }

    @Test func aWriteRejectedLaterAtMergeReportsTheRejection() async throws {
        let backend = MemoryBackend(durabilityDelay: nil)
        let likes = try backend.node("likes")
        let task = Task { try await likes.increment(waitingFor: .durable) }
        #expect(await eventually { backend.lastLocalStamp != nil })
        // A peer had set the node to a string before the increment, in stamp order.
        try backend.receiveRemote([Sample.remote(0xB0B, sequence: 1, millis: 1, path: "/likes", .set("many"))])
        do {
            _ = try await task.value
            Issue.record("the increment should be rejected")
        } catch let error as WeftError {
            #expect(error.code == .rejected)
            #expect(error.path == "/likes")
        }
        #expect(try await likes.value() == "many")
    }

    @Test func aWriteFailsOnceTheReplicaFailsBeforeItGetsThere() async throws {
        let backend = MemoryBackend(durabilityDelay: nil)
        let receipt = try await backend.node("a").set(1, waitingFor: .pending)
        let task = Task { try await receipt.wait(for: .stable) }
        try await Task.sleep(nanoseconds: 5_000_000)
        receipt.fail(WeftError(.storage, "disk gone"))
        #expect(await weftErrorCode { _ = try await task.value } == .storage)
    }
}
