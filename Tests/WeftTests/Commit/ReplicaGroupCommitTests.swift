import Foundation
import Testing
import WeftCore
import WeftStore

@_spi(Engine) @testable import Weft

/// Group commit: batching, waiting for durability, backpressure and failed commits.
@Suite(.timeLimit(.minutes(5))) struct ReplicaGroupCommitTests {
    @Test(arguments: ReplicaKind.allCases)
    func manyWritesShareFewCommits(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind) { $0.groupCommitDelayMilliseconds = 5 }
        let replica = fixture.replica
        var last: WriteReceipt?
        for index in 0..<5_000 {
            last = try replica.submit(path: Sample.path("/users/u\(index % 100)/score"), kind: .set(.int(Int64(index))))
        }
        try await #require(last).wait(for: .durable)
        let statistics = replica.statistics
        #expect(statistics.opsCommitted == 5_000)
        // On a busy machine a writer is descheduled mid-run; batching still holds 20 writes per commit.
        #expect(statistics.commits <= 250, "\(statistics.commits) commits for 5000 writes")
        #expect(statistics.opsPerCommitMax <= StoreLimits.groupCommitOpsMax)
        await replica.shutdown()
        let store = try fixture.openStore()
        #expect(try store.opCount() == 5_000)
        #expect(try store.readTree(at: Sample.path("/users/u99/score")) == .int(4_999))
        #expect(try Sample.foldOfStore(store) == (try store.readTree()))
        try store.close()
        await fixture.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func aCommitHoldsAtMostTheConfiguredNumberOfOps(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind) {
            $0.groupCommitOpsMax = 10
            $0.groupCommitDelayMilliseconds = 20
        }
        let replica = fixture.replica
        for index in 0..<95 { try replica.submit(path: Sample.path("/n/k\(index)"), kind: .set(.int(1))) }
        try await replica.flush()
        #expect(replica.statistics.opsCommitted == 95)
        #expect(replica.statistics.opsPerCommitMax <= 10)
        #expect(replica.statistics.commits >= 10)
        await fixture.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func waitingForDurableReturnsOnlyOnceTheCommitIsDone(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        await fixture.replica.shutdown()
        let gate = GatedStore(try fixture.openStore())
        gate.commitGate.close()
        let replica = try Replica.open(store: gate, options: fixture.options)
        let receipt = try replica.submit(path: Sample.path("/a"), kind: .set(.int(1)))
        let waiter = Task { try await receipt.wait(for: .durable) }
        #expect(await eventually { gate.commitsReached == 1 })
        try await Task.sleep(nanoseconds: 20_000_000)
        #expect(receipt.status == .pending)
        gate.commitGate.open()
        #expect(try await waiter.value == .durable)
        await replica.shutdown()
        await fixture.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func writersWaitWhileThePendingLimitIsReached(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        await fixture.replica.shutdown()
        let gate = GatedStore(try fixture.openStore())
        gate.commitGate.close()
        var options = fixture.options
        options.groupCommitOpsMax = 16
        options.pendingOpsMax = 64
        options.groupCommitDelayMilliseconds = 0
        let replica = try Replica.open(store: gate, options: options)
        let written = Counter()
        let writer = Thread {
            for index in 0..<200 {
                _ = try? replica.submit(path: Sample.path("/k\(index)"), kind: .set(.int(Int64(index))))
                written.increment()
            }
        }
        writer.start()
        #expect(await eventually { written.value == 64 })
        try await Task.sleep(nanoseconds: 50_000_000)
        #expect(written.value == 64, "the writer waits at the pending limit")
        gate.commitGate.open()
        #expect(await eventually { written.value == 200 })
        try await replica.flush()
        #expect(replica.statistics.opsCommitted == 200)
        await replica.shutdown()
        await fixture.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func manyWritersWaitingForTheLoadStillKeepToThePendingLimit(kind: ReplicaKind) async throws {
        // Each writer checked the limit and went on to wait for the load: all twenty then passed it.
        let fixture = try ReplicaFixture(kind)
        try fixture.replica.submit(path: Sample.path("/seed"), kind: .set(.int(0)))
        await fixture.replica.shutdown()
        let gate = GatedStore(try fixture.openStore())
        var options = fixture.options
        options.groupCommitOpsMax = 1
        options.pendingOpsMax = 1
        options.groupCommitDelayMilliseconds = 0
        gate.loadGate.close()
        gate.commitGate.close()
        let replica = try Replica.open(store: gate, options: options)
        let accepted = Counter()
        for writer in 0..<20 {
            Thread {
                _ = try? replica.submit(path: Sample.path("/w\(writer)"), kind: .set(.int(1)))
                accepted.increment()
            }.start()
        }
        try await Task.sleep(nanoseconds: 100_000_000)
        gate.loadGate.open()
        try await replica.waitUntilLoaded()
        #expect(await eventually { accepted.value == 1 })
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(accepted.value == 1, "with commits held and a limit of one, one write is queued and the others wait")
        gate.commitGate.open()
        #expect(await eventually { accepted.value == 20 })
        try await replica.flush()
        #expect(replica.value(at: Sample.path("/w19")) == .int(1))
        await replica.shutdown()
        await fixture.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func aFullDiskFailsTheReceiptsAndLeavesTheStoredDataIntact(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind) { $0.databaseBytesMax = 1_000_000 }
        let replica = fixture.replica
        try replica.submit(path: Sample.path("/small"), kind: .set(.string("kept")))
        try await replica.flush()
        let payload = Value.string(String(repeating: "x", count: 200_000))
        var receipts: [WriteReceipt] = []
        for index in 0..<10 {
            // Group commit may hit the full disk before every write is submitted; from then on the
            // replica refuses writes with the same error, which is what this test is about too.
            do {
                receipts.append(try replica.submit(path: Sample.path("/big/b\(index)"), kind: .set(payload)))
            } catch let error as WeftError where error.code == .diskFull {
                break
            }
        }
        try #require(!receipts.isEmpty)
        let error = await #expect(throws: WeftError.self) { try await replica.flush() }
        #expect(error?.code == .diskFull)
        let failed = await #expect(throws: WeftError.self) {
            try await receipts[receipts.count - 1].wait(for: .durable)
        }
        #expect(failed?.code == .diskFull)
        let later = #expect(throws: WeftError.self) { try replica.submit(path: Sample.path("/x"), kind: .set(.int(1))) }
        #expect(later?.code == .diskFull)
        #expect(later?.message.contains("reopen") == true)

        try await fixture.reopen()
        let reopened = fixture.replica
        try await reopened.waitUntilLoaded()
        #expect(reopened.value(at: Sample.path("/small")) == .string("kept"))
        let durableBig = reopened.value(at: Sample.path("/big")).children.count
        #expect(durableBig == receipts.filter { $0.status == .durable }.count)
        try reopened.submit(path: Sample.path("/small"), kind: .set(.string("writable again")))
        try await reopened.flush()
        await fixture.finish()
    }
}

/// A counter shared between threads.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    func increment() { lock.withLock { count += 1 } }

    var value: Int { lock.withLock { count } }
}
