import Foundation
import Testing
import WeftCore

@_spi(Engine) @testable import Weft

/// Receipt observers run on a queue, never on the thread that moves the status: that thread may hold the
/// replica's lock (sync acknowledging writes, a late op revising an outcome), and an observer that reads
/// or writes the replica from there used to wait for that lock for ever.
@Suite struct WriteReceiptObserverTests {
    @Test func anObserverThatWritesWhenItsWriteIsAcknowledgedDoesNotFreezeTheReplica() async throws {
        let fixture = try ReplicaFixture(.memory)
        let replica = fixture.replica
        let receipt = try await replica.root.at("message").set("hello")
        let sent = try replica.root.at("sent")
        let written = Collector<WriteStatus>()
        receipt.observe { status in
            guard status >= .acknowledged else { return }
            sent.set(true, waitingFor: .durable) { result in written.append((try? result.get().status) ?? .pending) }
        }
        let returned = Collector<Bool>()
        let vector = replica.versionVector
        Thread.detachNewThread {
            replica.markAcknowledged(through: vector)
            returned.append(true)
        }
        let finished = await eventually(timeoutSeconds: 10) { returned.count == 1 }
        #expect(finished, "acknowledging waited for the observer, which waited for the replica")
        guard finished else { return }
        #expect(await written.wait(for: 1) == [.durable])
        #expect(try replica.value(at: Path("/sent")) == .bool(true))
        await fixture.finish()
    }

    @Test func anObserverThatReadsWhenALateOpRejectsItsWriteDoesNotFreezeTheReplica() async throws {
        let fixture = try ReplicaFixture(.memory)
        let replica = fixture.replica
        let increment = try replica.submit(path: Sample.path("/d"), kind: .increment(by: .int(1), from: .int(0)))
        try await increment.wait(for: .durable)
        let seen = Collector<Value>()
        increment.observe { status in
            guard case .rejected = status else { return }
            seen.append(replica.readSnapshot { reader in (try? reader.value(at: "/d")) ?? .null })
        }
        // A set of text stamped before the increment: the increment now meets text and is rejected.
        let lateSet = Sample.remote(
            5, sequence: 1, millis: fixture.clock.now - 100, path: "/d", .set(.string("text")))
        let returned = Collector<Bool>()
        Thread.detachNewThread {
            _ = try? replica.applyRemote([lateSet])
            returned.append(true)
        }
        let finished = await eventually(timeoutSeconds: 10) { returned.count == 1 }
        #expect(finished, "applying the late op waited for the observer, which waited for the replica")
        guard finished else { return }
        #expect(await seen.wait(for: 1) == [.string("text")])
        await fixture.finish()
    }

    @Test func anObserverRunsOnTheQueueItNamesInTheOrderOfTheChanges() async throws {
        let book = ReceiptBook()
        let receipt = WriteReceipt(
            stamp: Stamp(millis: 1, counter: 0, replica: Sample.replica(1)), sequence: 1, book: book)
        let queue = DispatchQueue(label: "receipt observer test")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        let calls = Collector<(WriteStatus, Bool)>()
        receipt.observe(queue: queue) { status in calls.append((status, DispatchQueue.getSpecific(key: key) == true)) }
        book.markDurable(through: 1)
        book.advance(through: 1, to: .acknowledged)
        book.advance(through: 1, to: .stable)
        let received = await calls.wait(for: 3)
        #expect(received.map(\.0) == [.durable, .acknowledged, .stable])
        #expect(received.allSatisfy { $0.1 }, "every call ran on the queue the observer named")
        #expect(book.heldCount == 0)
    }
}
