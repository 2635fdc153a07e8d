import Foundation
import Testing
import WeftCore

@_spi(Engine) @testable import Weft

@Suite struct DataNodeTransactionTests {
    @Test func aTransactionCommitsTheClosuresValue() async throws {
        let backend = MemoryBackend()
        let counter = try backend.node("counter")
        let result = try await counter.runTransaction { .set(.int(($0.intValue ?? 0) + 1)) }
        #expect(result.isCommitted)
        #expect(result.value == 1)
        #expect(result.attempts == 1)
        #expect(result.receipt.map { $0.status >= .durable } == true)
        #expect(try await counter.value() == 1)
    }

    @Test func theClosureCanAbortOrClear() async throws {
        let backend = MemoryBackend()
        let seats = try backend.node("seats")
        try await seats.set(0)
        let aborted = try await seats.runTransaction { current in
            guard let left = current.intValue, left > 0 else { return .abort }
            return .set(.int(left - 1))
        }
        #expect(aborted.status == .aborted(.byClosure))
        #expect(aborted.value == 0)
        #expect(aborted.receipt == nil)
        let cleared = try await seats.runTransaction { _ in .clear }
        #expect(cleared.isCommitted)
        #expect(try await seats.value() == .null)
    }

    @Test func aTransactionThatLosesALocalRaceRunsAgainOnTheNewerValue() async throws {
        let backend = MemoryBackend()
        let counter = try backend.node("counter")
        try await counter.set(10)
        let seen = Collector<Value>()
        let result = try await counter.runTransaction { current in
            seen.append(current)
            if seen.count == 1 {
                // Another local writer wins the race between this read and the transaction's write.
                counter.increment(by: 5) { _ in }
            }
            return .set(.int((current.intValue ?? 0) + 1))
        }
        #expect(seen.values == [10, 15])
        #expect(result.attempts == 2)
        #expect(result.isCommitted)
        #expect(try await counter.value() == 16)
    }

    @Test func aTransactionRejectedByALateRemoteWriteRunsAgain() async throws {
        let clock = TestClock(millis: 1_000)
        let backend = MemoryBackend(durabilityDelay: nil, wallMillis: { clock.now })
        let counter = try backend.node("counter")
        try await counter.set(1, waitingFor: .pending)
        backend.makeDurable()
        clock.now = 2_000
        let seen = Collector<Value>()
        let task = Task {
            try await counter.runTransaction { current in
                seen.append(current)
                return .set(.int((current.intValue ?? 0) + 1))
            }
        }
        #expect(await eventually { seen.count == 1 })
        // A peer's write, stamped before the transaction and unseen by it, arrives before it is durable:
        // every replica rejects the transaction (stale read), so it runs again here.
        try backend.receiveRemote([Sample.remote(0xB0B, sequence: 1, millis: 1_500, path: "/counter", .set(100))])
        #expect(await eventually { seen.count == 2 })
        backend.makeDurable()
        let result = try await task.value
        #expect(seen.values == [1, 100])
        #expect(result.attempts == 2)
        #expect(result.isCommitted)
        #expect(try await counter.value() == 101)
    }

    @Test(arguments: ReplicaKind.allCases)
    func aTransactionDoesNotOverwriteACallWaitingForItsFunction(kind: ReplicaKind) async throws {
        // The call was counted as seen (it is in the version vector) though its effect was not in the
        // value read: once its function came, the transaction wrote over it, and +10 was lost everywhere.
        let fixture = try ReplicaFixture(kind)
        let replica = fixture.replica
        let node = try replica.root.at("n")
        fixture.clock.now = 1_000_000
        try await node.set(1)
        let call = FunctionCall(name: "addTen", version: 1, arguments: .null)
        let waiting = Sample.remote(0xB0B, sequence: 1, millis: 1_000_005, path: "/n", .call(call))
        #expect(try replica.applyRemote([waiting]).outcomes[waiting.stamp] == .waiting)
        fixture.clock.now = 1_000_010
        let result = try await node.runTransaction { .set(.int(($0.intValue ?? 0) + 1)) }
        #expect(result.isCommitted)
        let receipt = try #require(result.receipt)
        try replica.register(name: "addTen", version: 1) { value, _ in value.intValue.map { .int($0 + 10) } }
        // The call applies at its place, before the transaction, which had not seen it: rejected.
        #expect(try await node.value() == 11)
        guard case .rejected(.staleRead) = receipt.status else {
            Issue.record("the transaction's receipt is \(receipt.status)")
            return
        }
        await fixture.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func aCallWaitingElsewhereDoesNotMakeATransactionStale(kind: ReplicaKind) async throws {
        // The read record was cut before the peer's waiting call whatever its path, so the peer's later
        // write of /m counted as unseen: a transaction on /m failed all its attempts until the function came.
        let fixture = try ReplicaFixture(kind)
        let replica = fixture.replica
        let call = FunctionCall(name: "addTen", version: 1, arguments: .null)
        let waiting = Sample.remote(0xB0B, sequence: 1, millis: 1_000_005, path: "/n", .call(call))
        let later = Sample.remote(0xB0B, sequence: 2, millis: 1_000_006, path: "/m", .set(5))
        #expect(try replica.applyRemote([waiting, later]).outcomes[waiting.stamp] == .waiting)
        fixture.clock.now = 1_000_010
        let m = try replica.root.at("m")
        let result = try await m.runTransaction { .set(.int(($0.intValue ?? 0) + 1)) }
        #expect(result.isCommitted)
        #expect(result.attempts == 1)
        let receipt = try #require(result.receipt)
        try replica.register(name: "addTen", version: 1) { value, _ in .int((value.intValue ?? 0) + 10) }
        #expect(try await m.value() == 6)
        #expect(try await replica.root.at("n").value() == 10)
        #expect(receipt.status >= .durable)
        await fixture.finish()
    }

    @Test func aLocalSetOverridesARunningTransaction() async throws {
        let backend = MemoryBackend()
        let node = try backend.node("profile/name")
        try await node.set("old")
        let result = try await node.runTransaction { current in
            node.set("set by the app") { _ in }
            return .set(.string("transaction saw \(current.stringValue ?? "")"))
        }
        #expect(result.status == .aborted(.overridden))
        #expect(result.attempts == 1)
        #expect(try await node.value() == "set by the app")
    }

    @Test func aTransactionGivesUpAfterTheRetryLimit() async throws {
        let backend = MemoryBackend()
        let counter = try backend.node("counter")
        let runs = Collector<Int>()
        let result = try await counter.runTransaction(waitingFor: .pending) { current in
            runs.append(1)
            counter.increment { _ in }
            return .set(.int((current.intValue ?? 0) + 100))
        }
        #expect(result.status == .aborted(.retriesExhausted))
        #expect(result.attempts == WeftLimits.transactionRetriesMax)
        #expect(runs.count == WeftLimits.transactionRetriesMax)
        #expect(try await counter.value() == .int(Int64(WeftLimits.transactionRetriesMax)))
    }

    @Test func concurrentTransactionsNeverLoseAnUpdate() async throws {
        let backend = MemoryBackend()
        let counter = try backend.node("counter")
        let tasks = 8
        let perTask = 10
        let results = try await withThrowingTaskGroup(of: [TransactionResult].self) { group in
            for _ in 0..<tasks {
                group.addTask {
                    var results: [TransactionResult] = []
                    for _ in 0..<perTask {
                        results.append(
                            try await counter.runTransaction(waitingFor: .pending) {
                                .set(.int(($0.intValue ?? 0) + 1))
                            })
                    }
                    return results
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(results.allSatisfy { $0.isCommitted })
        #expect(try await counter.value() == .int(Int64(tasks * perTask)))
    }

    @Test func aBadResultOrAThrowingClosureWritesNothing() async throws {
        struct Refusal: Error {}
        let backend = MemoryBackend()
        let node = try backend.node("t")
        try await node.set("kept")
        #expect(await weftErrorCode { _ = try await node.runTransaction { _ in .set(["bad.key": 1]) } } == .invalidKey)
        await #expect(throws: Refusal.self) { _ = try await node.runTransaction { _ in throw Refusal() } }
        #expect(try await node.value() == "kept")
    }

    @Test func theCompletionFormReportsTheResult() async throws {
        let backend = MemoryBackend()
        let node = try backend.node("cb")
        let results = Collector<Result<TransactionResult, WeftError>>()
        node.runTransaction({ _ in .set("done") }, then: { results.append($0) })
        let result = try #require(await results.wait(for: 1).first)
        #expect((try? result.get())?.isCommitted == true)
        #expect(try await node.value() == "done")
    }

    @Test func registeredFunctionsKeepTheirInvariant() async throws {
        let backend = MemoryBackend()
        try backend.access.register(name: "withdraw", version: 1) { balance, amount in
            guard let cents = balance.intValue, let take = amount.intValue, take > 0, cents >= take else { return nil }
            return .int(cents - take)
        }
        let account = try backend.node("accounts/alice")
        try await account.set(1000)
        try await account.call("withdraw", arguments: 300)
        #expect(try await account.value() == 700)
        #expect(await weftErrorCode { try await account.call("withdraw", arguments: 800) } == .rejected)
        #expect(try await account.value() == 700)
        #expect(await weftErrorCode { try await account.call("deposit", arguments: 1) } == .unknownFunction)
        #expect(
            await weftErrorCode { try await account.call("withdraw", version: 2, arguments: 1) } == .unknownFunction)
        #expect(await weftErrorCode { try await account.call("") } == .invalidValue)
    }
}
