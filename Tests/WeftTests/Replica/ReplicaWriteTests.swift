import Foundation
import Testing
import WeftCore
import WeftStore

@_spi(Engine) @testable import Weft

/// Local writes, run against an in-memory and an SQLite replica.
@Suite(.timeLimit(.minutes(5))) struct ReplicaWriteTests {
    @Test(arguments: ReplicaKind.allCases)
    func aWriteIsVisibleAtOnceAndDurableAfterItsGroupCommit(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        let replica = fixture.replica
        let receipt = try replica.submit(path: Sample.path("/users/alice/score"), kind: .set(.int(42)))
        #expect(replica.value(at: Sample.path("/users/alice")) == Sample.json(#"{"score":42}"#))
        #expect(try await receipt.wait(for: .durable) == .durable)
        #expect(receipt.status == .durable)
        #expect(replica.durableVersionVector[replica.replicaID] == 1)
        await replica.shutdown()

        let store = try fixture.openStore()
        #expect(try store.readTree() == Sample.json(#"{"users":{"alice":{"score":42}}}"#))
        let stored = try store.ops(from: replica.replicaID, after: 0, limit: 10)
        #expect(stored.map(\.op.stamp) == [receipt.stamp])
        #expect(stored.map(\.status) == [.durable])
        try store.close()
        await fixture.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func everyKindOfWriteLandsWhereTheReferenceFoldOfTheStoredLogLands(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        let replica = fixture.replica
        try replica.submit(path: Sample.path("/items/a"), kind: .set(Sample.json(#"{"name":"a","tags":[1,2]}"#)))
        try replica.submit(
            path: Sample.path("/items/a"),
            kind: .merge([
                MergeChild(relative: Sample.path("name"), value: .string("b")),
                MergeChild(relative: Sample.path("deep/x"), value: .bool(true)),
            ]))
        try replica.submit(path: Sample.path("/counters/c"), kind: .increment(by: .int(5), from: .int(10)))
        try replica.submit(path: Sample.path("/counters/c"), kind: .increment(by: .double(0.5), from: .int(0)))
        try replica.submit(
            path: Sample.path("/"),
            kind: .batch([
                .set(Sample.path("/items/b"), .string("new")),
                .increment(Sample.path("/counters/d"), by: .int(1), from: .int(0)),
            ]))
        try replica.submit(path: Sample.path("/accounts/a0"), kind: .set(.int(100)))
        try replica.submit(
            path: Sample.path("/accounts"),
            kind: .call(
                FunctionCall(
                    name: "transfer", version: 1,
                    arguments: Sample.json(#"{"from":"a0","to":"a1","amount":30}"#))))
        try replica.submit(
            path: Sample.path("/items/b"), kind: .transaction(read: replica.versionVector, result: .string("tx")))
        let (key, _) = try replica.submitPush(parent: Sample.path("/chat"), value: .string("hello"))
        try replica.submit(path: Sample.path("/items/a/tags"), kind: .set(.null))
        try await replica.flush()

        #expect(replica.value(at: Sample.path("/counters/c")) == .double(15.5))
        #expect(replica.value(at: Sample.path("/accounts")) == Sample.json(#"{"a0":70,"a1":30}"#))
        #expect(replica.value(at: Sample.path("/items/b")) == .string("tx"))
        #expect(replica.value(at: Sample.path("/chat/\(key)")) == .string("hello"))
        #expect(replica.value(at: Sample.path("/items/a")) == Sample.json(#"{"name":"b","deep":{"x":true}}"#))
        let state = replica.snapshot()
        await replica.shutdown()

        let store = try fixture.openStore()
        #expect(try store.readTree() == state)
        #expect(try Sample.foldOfStore(store) == state)
        #expect(try store.opCount() == 10)
        try store.close()
        await fixture.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func anIncrementOfAStringIsRejectedAndSoIsItsReceipt(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        let replica = fixture.replica
        try replica.submit(path: Sample.path("/name"), kind: .set(.string("alice")))
        let receipt = try replica.submit(path: Sample.path("/name"), kind: .increment(by: .int(1), from: .int(0)))
        #expect(receipt.status == .rejected(.notANumber(Sample.path("/name"))))
        #expect(try await receipt.wait(for: .durable) == .rejected(.notANumber(Sample.path("/name"))))
        try await replica.flush()
        #expect(receipt.status == .rejected(.notANumber(Sample.path("/name"))), "rejected is final")
        await replica.shutdown()
        let store = try fixture.openStore()
        #expect(try store.op(receipt.stamp)?.status == .rejected)
        try store.close()
        await fixture.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func listenersHearEveryLocalChangeInOrderAsPending(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        let replica = fixture.replica
        let heard = Heard()
        let token = replica.addChangeListener { batch in heard.add(batch) }
        for index in 0..<300 {
            try replica.submit(path: Sample.path("/log/n\(index % 7)"), kind: .set(.int(Int64(index))))
        }
        await replica.shutdown()
        let batches = heard.batches
        #expect(batches.allSatisfy { $0.isLocalPending })
        let values = batches.flatMap(\.changes).map(\.new)
        #expect(values == (0..<300).map { Value.int(Int64($0)) })
        token.cancel()
        await fixture.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func explicitTimesNeverMoveTheClockBackAndTimesFarAheadAreRefused(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        let replica = fixture.replica
        let now = fixture.clock.now
        let first = try replica.submit(path: Sample.path("/a"), kind: .set(.int(1)), at: .millis(now + 5_000))
        #expect(first.stamp.millis == now + 5_000)
        let second = try replica.submit(path: Sample.path("/a"), kind: .set(.int(2)), at: .millis(now - 60_000))
        #expect(second.stamp > first.stamp)
        let third = try replica.submit(path: Sample.path("/a"), kind: .set(.int(3)))
        #expect(third.stamp > second.stamp)

        let error = #expect(throws: WeftError.self) {
            try replica.submit(path: Sample.path("/a"), kind: .set(.int(4)), at: .millis(now + 3_600_000))
        }
        #expect(error?.code == .clockRefused)
        #expect(error?.message.contains("ahead of the wall clock") == true)
        #expect(replica.value(at: Sample.path("/a")) == .int(3))
        await fixture.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func pushKeysSortInTheOrderTheyWereMade(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        let replica = fixture.replica
        var keys: [String] = []
        for index in 0..<20 {
            if index % 3 == 0 {
                keys.append(try replica.reservePushKey())
            } else {
                keys.append(try replica.submitPush(parent: Sample.path("/chat"), value: .int(Int64(index))).key)
            }
            if index == 10 { fixture.clock.now -= 10_000 }
        }
        #expect(keys == keys.sorted())
        #expect(Set(keys).count == keys.count)
        #expect(keys.allSatisfy { $0.utf8.count == PushID.length })
        await fixture.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func writesAfterShutdownThrowShutDownAndReadsStillAnswer(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        let replica = fixture.replica
        let receipt = try replica.submit(path: Sample.path("/a"), kind: .set(.int(1)))
        await replica.shutdown()
        #expect(replica.isShutDown)
        #expect(receipt.status == .durable, "shutdown commits what is pending")
        let error = #expect(throws: WeftError.self) { try replica.submit(path: Sample.path("/a"), kind: .set(.int(2))) }
        #expect(error?.code == .shutDown)
        #expect(throws: WeftError.self) { try replica.reservePushKey() }
        #expect(replica.value(at: Sample.path("/a")) == .int(1))
        await replica.shutdown()
        await fixture.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func writesWaitingForAStatusThatCanNoLongerComeEndAtShutdown(kind: ReplicaKind) async throws {
        // They waited for ever: nothing failed a wait for an acknowledgement or for stability once the
        // replica that could receive them had shut down.
        let fixture = try ReplicaFixture(kind)
        let node = try #require(fixture.replica.node(for: "/a"))
        let ended = Collector<WeftError?>()
        Task {
            do { try await node.set(1, waitingFor: .acknowledged) } catch { ended.append(error as? WeftError) }
        }
        let receipt = try await node.set(2, waitingFor: .durable)
        Task {
            do { try await receipt.wait(for: .stable) } catch { ended.append(error as? WeftError) }
        }
        let statuses = Collector<WriteStatus>()
        receipt.observe { statuses.append($0) }
        #expect(await eventually { fixture.replica.receipts.heldCount == 3 })

        await fixture.replica.shutdown()
        #expect(try await receipt.wait(for: .durable) == .durable, "a status reached still answers")
        // A wait begun after the shutdown ends at once too.
        Task {
            do { try await receipt.wait(for: .acknowledged) } catch { ended.append(error as? WeftError) }
        }
        let errors = await ended.wait(for: 3, timeoutSeconds: 10)
        #expect(errors.count == 3 && errors.allSatisfy { $0?.code == .shutDown }, "\(errors)")
        #expect(fixture.replica.receipts.heldCount == 0, "no waiter or observer is left behind")
        #expect(statuses.count == 0)
        await fixture.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func anOpTooLargeToEncodeIsRefusedBeforeItApplies(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        let replica = fixture.replica
        let big = String(repeating: "x", count: CoreLimits.stringBytesMax)
        let children = (0..<2).map { MergeChild(relative: Sample.path("s\($0)"), value: .string(big)) }
        let error = #expect(throws: WeftError.self) {
            try replica.submit(path: Sample.path("/big"), kind: .merge(children))
        }
        #expect(error?.code == .valueTooLarge)
        #expect(replica.value(at: Sample.path("/big")) == .null)
        let next = try replica.submit(path: Sample.path("/a"), kind: .set(.int(1)))
        try await replica.flush()
        #expect(replica.durableVersionVector[replica.replicaID] == 1, "the refused op took no sequence")
        #expect(next.status == .durable)
        await fixture.finish()
    }
}

/// Change batches heard by a listener.
final class Heard: @unchecked Sendable {
    private let lock = NSLock()
    private var heard: [ChangeBatch] = []

    func add(_ batch: ChangeBatch) { lock.withLock { heard.append(batch) } }

    var batches: [ChangeBatch] { lock.withLock { heard } }
}
