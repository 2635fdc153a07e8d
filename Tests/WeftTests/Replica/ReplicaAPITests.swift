import Foundation
import Testing
import WeftCore

@_spi(Engine) @testable import Weft

/// The API's key behaviours on the real `Replica`, in memory and on SQLite.
@Suite struct ReplicaAPITests {
    @Test(arguments: ReplicaKind.allCases)
    func writesAndReadsGoThroughTheReplica(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        let replica = fixture.replica
        let alice = try #require(replica.node(for: "/users/alice"))
        let receipt = try await alice.set(User(name: "Alice", age: 31))
        #expect(receipt.status >= .durable)
        try await alice.merge(.raw, with: ["address/city": "Lyon"])
        let message = try await replica.root.at("chat").push(Message(author: "alice", text: "hi"))
        #expect(try await alice.decodedValue(as: User.self) == User(name: "Alice", age: 31))
        #expect(try await alice.at("address/city").value() == "Lyon")
        #expect(try await message.at("text").value() == "hi")
        #expect(try await replica.root.childrenKeys() == ["chat", "users"])
        await fixture.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func writesSurviveAReopen(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        let chat = try fixture.replica.root.at("chat")
        let pushed = try await chat.push(Message(author: "alice", text: "hi"))
        try await fixture.reopen()
        let reopened = try fixture.replica.root.at("chat")
        #expect(try await reopened.childrenKeys() == [pushed.key].compactMap { $0 })
        await fixture.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func concurrentIncrementsFromManyTasksSumExactly(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        let counter = try fixture.replica.root.at("counter")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask { for _ in 0..<50 { try await counter.increment(waitingFor: .pending) } }
            }
            try await group.waitForAll()
        }
        #expect(try await counter.value() == 1_000)
        await fixture.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func aTransactionLosesARaceAndRetries(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        let counter = try fixture.replica.root.at("counter")
        try await counter.set(10)
        let seen = Collector<Value>()
        let result = try await counter.runTransaction { current in
            seen.append(current)
            if seen.count == 1 { counter.increment(by: 5) { _ in } }
            return .set(.int((current.intValue ?? 0) + 1))
        }
        #expect(seen.values == [10, 15])
        #expect(result.isCommitted)
        #expect(try await counter.value() == 16)
        await fixture.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func aTransactionRejectedByALateRemoteWriteRunsAgain(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        let replica = fixture.replica
        let counter = try replica.root.at("counter")
        fixture.clock.now = 1_000_000
        try await counter.set(1)
        fixture.clock.now = 2_000_000
        let seen = Collector<Value>()
        let task = Task {
            try await counter.runTransaction(waitingFor: .acknowledged) { current in
                seen.append(current)
                return .set(.int((current.intValue ?? 0) + 1))
            }
        }
        #expect(await eventually { seen.count == 1 })
        // A peer's write stamped between the set and the transaction, unseen by the transaction.
        try replica.applyRemote([Sample.remote(0xB0B, sequence: 1, millis: 1_500_000, path: "/counter", .set(100))])
        #expect(await eventually { seen.count == 2 })
        try await replica.flush()
        replica.markAcknowledged(through: replica.versionVector)
        let result = try await task.value
        #expect(seen.values == [1, 100])
        #expect(result.isCommitted)
        #expect(try await counter.value() == 101)
        await fixture.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func anObserverOfNameIsNotCalledForAChangeOfAge(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        let replica = fixture.replica
        let alice = try replica.root.at("users/alice")
        try await alice.set(User(name: "Alice", age: 31))
        let changes = Collector<NodeChange>()
        let token = try alice.observe(keyPaths: ["name"]) { changes.append($0) }
        try await alice.at("age").set(32)
        try await Task.sleep(nanoseconds: 30_000_000)
        await drain(replica.callbackQueue)
        #expect(changes.count == 0)
        try await alice.at("name").set("Alicia")
        let expected = NodeChange.change(alice, [PropertyChange(name: "name", oldValue: "Alice", newValue: "Alicia")])
        #expect(await changes.wait(for: 1) == [expected])
        token.invalidate()
        await fixture.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func aSubscriberSeesABatchAtomically(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        let replica = fixture.replica
        let accounts = try replica.root.at("accounts")
        try await accounts.set(["alice": 100, "bob": 0])
        let events = Collector<DataEvent>()
        let token = accounts.subscribe { events.append($0) }
        await events.wait(for: 1)
        for _ in 0..<20 {
            try await replica.performChanges(waitingFor: .pending) { batch in
                try batch.increment(by: -5, at: accounts.at("alice"))
                try batch.increment(by: 5, at: accounts.at("bob"))
            }
        }
        #expect(await eventually { events.values.last?.value == ["alice": 0, "bob": 100] })
        #expect(events.values.allSatisfy { ($0.value["alice"].intValue ?? 0) + ($0.value["bob"].intValue ?? 0) == 100 })
        let snapshot = try replica.readSnapshot { reader in try reader.value(of: accounts) }
        #expect(snapshot == ["alice": 0, "bob": 100])
        token.invalidate()
        await fixture.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func childEventsFollowPushesInOrder(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        let chat = try fixture.replica.root.at("chat")
        let added = Collector<DataEvent>()
        let token = chat.subscribe(to: .childAddition) { added.append($0) }
        var keys: [String] = []
        for index in 0..<5 { keys.append(try await chat.push(Message(author: "a", text: "\(index)")).key ?? "") }
        let events = await added.wait(for: 5)
        #expect(events.map { $0.node.key ?? "" } == keys)
        #expect(events.map(\.previousSiblingKey) == [nil] + keys.dropLast().map { Optional($0) })
        token.invalidate()
        await fixture.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func writesAfterShutdownFailAndFeedsEnd(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        let replica = fixture.replica
        let node = try replica.root.at("n")
        try await node.set(1)
        let iterated = Collector<DataEvent>()
        let iteration = Task { for await event in node.events() { iterated.append(event) } }
        let publisher = Recorder(node.eventPublisher())
        await publisher.wait(for: 1)
        await iterated.wait(for: 1)
        await replica.shutdown()
        #expect(await weftErrorCode { try await node.set(2) } == .shutDown)
        #expect(await weftErrorCode { try await node.increment() } == .shutDown)
        #expect(try await node.value() == 1)
        await iteration.value
        #expect(iterated.count == 1)
        #expect(await eventually { publisher.isFinished })
        let done = Collector<Bool>()
        replica.shutdown { done.append(true) }
        #expect(await done.wait(for: 1) == [true])
        await fixture.finish()
    }

    @Test func registeredFunctionsAreCalledOnTheReplica() async throws {
        let fixture = try ReplicaFixture(.memory)
        let replica = fixture.replica
        try replica.register(name: "withdraw", version: 1) { balance, amount in
            guard let cents = balance.intValue, let take = amount.intValue, cents >= take else { return nil }
            return .int(cents - take)
        }
        let account = try replica.root.at("account")
        try await account.set(1000)
        try await account.call("withdraw", arguments: 300)
        #expect(try await account.value() == 700)
        #expect(await weftErrorCode { try await account.call("withdraw", arguments: 800) } == .rejected)
        #expect(await weftErrorCode { try await account.call("deposit", arguments: 1) } == .unknownFunction)
        await fixture.finish()
    }

    @Test func aFunctionNameNoCallCanCarryIsRefusedAtRegistration() async throws {
        // Registration took any name, and the refusal came only at the first call.
        let fixture = try ReplicaFixture(.memory)
        let replica = fixture.replica
        let tooLong = String(repeating: "f", count: CoreLimits.functionNameBytesMax + 1)
        for name in ["", tooLong] {
            let code = await weftErrorCode { try replica.register(name: name, version: 1) { value, _ in value } }
            #expect(code == .invalidValue)
            #expect(!replica.isRegistered(name: name, version: 1))
        }
        await fixture.finish()
    }

    @Test func aFunctionReturningAnInfiniteNumberIsRejectedAndTheFileStillOpens() async throws {
        // The infinite number went into the tree and the file: the replica then could not load it.
        let fixture = try ReplicaFixture(.sqlite)
        try fixture.replica.register(name: "explode", version: 1) { _, _ in .double(.infinity) }
        let node = try fixture.replica.root.at("n")
        try await node.set(1)
        #expect(await weftErrorCode { try await node.call("explode") } == .rejected)
        #expect(try await node.value() == 1)
        try await fixture.reopen()
        try await fixture.replica.waitUntilLoaded()
        #expect(fixture.replica.value(at: Sample.path("/n")) == .int(1))
        await fixture.finish()
    }

    @Test func theReplicaCodersAndCallbackQueueAreConfigurable() async throws {
        let fixture = try ReplicaFixture(.memory) { options in options.encoder.keyEncodingStrategy = .convertToSnakeCase
        }
        let replica = fixture.replica
        struct Profile: Codable, Equatable { var displayName: String }
        let node = try replica.root.at("profile")
        try await node.set(Profile(displayName: "Al"))
        #expect(try await node.value() == ["display_name": "Al"])
        replica.jsonDecoder.keyDecodingStrategy = .convertFromSnakeCase
        #expect(try await node.decodedValue(as: Profile.self) == Profile(displayName: "Al"))
        let queue = DispatchQueue(label: "custom callbacks")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        replica.callbackQueue = queue
        let onQueue = Collector<Bool>()
        node.value { _ in onQueue.append(DispatchQueue.getSpecific(key: key) == true) }
        #expect(await onQueue.wait(for: 1) == [true])
        await fixture.finish()
    }
}
