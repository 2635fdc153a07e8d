import Foundation
import Testing
import WeftCore
import WeftSync

@_spi(Engine) @testable import Weft

/// Waiting for sync and reading what it does: `waitUntilSynced(timeout:)`, `connect(…waitUntilConnected:)`
/// (with a wrong token, and with nobody listening), the receipt of an increment, and the activity level
/// in `syncStatus`.
@Suite(.timeLimit(.minutes(5)), .serialized) struct ReplicaSyncWaitTests {
    private static let secret = "a long secret shared by both replicas"
    private static let waitLimit = Duration.seconds(20)

    private static func node(_ replica: Replica, _ path: String) throws -> DataNode {
        try #require(replica.root.relativeNode(for: path))
    }

    @Test func waitUntilSyncedReturnsOnceBothSidesHoldEveryWrite() async throws {
        let hub = try Replica.inMemory()
        let phone = try Replica.inMemory()
        #expect(phone.syncStatus.activity == .stopped)
        await #expect(throws: WeftError.self) { try await phone.waitUntilSynced(timeout: .milliseconds(10)) }
        let port = try await hub.listen(on: "127.0.0.1:0", token: Self.secret)
        try await phone.connect(to: "127.0.0.1:\(port)", token: Self.secret, waitUntilConnected: Self.waitLimit)
        #expect(phone.syncStatus.connectedCount == 1)
        for index in 0..<50 {
            try await Self.node(phone, "phone/\(index)").set(index, waitingFor: .pending)
            try await Self.node(hub, "hub/\(index)").set(index, waitingFor: .pending)
        }
        try await phone.waitUntilSynced(timeout: Self.waitLimit)
        // The phone's own writes are acknowledged, and it holds what the hub acknowledged holding.
        #expect(phone.versionVector[phone.replicaID] == 50)
        #expect(try await Self.node(hub, "phone/49").value() == .int(49))
        #expect(try await Self.node(phone, "hub/49").value() == .int(49))
        try await hub.waitUntilSynced(timeout: Self.waitLimit)
        #expect(hub.digest == phone.digest)
        try await SyncFixture.wait("the status to show the phone idle") { phone.syncStatus.activity == .idle }

        await hub.shutdown()
        try await SyncFixture.wait("the phone to see the hub gone") { phone.syncStatus.activity == .offline }
        try await Self.node(phone, "later").set(1, waitingFor: .pending)
        let error = await #expect(throws: WeftError.self) {
            try await phone.waitUntilSynced(timeout: .milliseconds(100))
        }
        #expect(error?.code == .timeout)
        await phone.shutdown()
    }

    @Test func connectingWithAWrongTokenThrowsWhyAndStopsDialling() async throws {
        let hub = try Replica.inMemory()
        let phone = try Replica.inMemory()
        let port = try await hub.listen(on: "127.0.0.1:0", token: Self.secret)
        let address = "127.0.0.1:\(port)"
        let refused = await #expect(throws: WeftError.self) {
            try await phone.connect(
                to: address, token: "not the secret the hub holds", waitUntilConnected: Self.waitLimit)
        }
        #expect(refused?.code == .authentication)
        #expect(refused?.message.contains("authenticationFailed") == true)
        #expect(phone.syncStatus.peers.isEmpty, "the refused peer is no longer dialled")
        // The right token, on the same address, then connects.
        try await phone.connect(to: address, token: Self.secret, waitUntilConnected: Self.waitLimit)
        #expect(phone.syncStatus.connectedCount == 1)
        await phone.shutdown()
        await hub.shutdown()
    }

    @Test func connectingToNobodyTimesOutAndKeepsDialling() async throws {
        // A port that was listened on and is closed now: nobody answers there.
        let gone = try Replica.inMemory()
        let port = try await gone.listen(on: "127.0.0.1:0")
        await gone.shutdown()
        let phone = try Replica.inMemory()
        let late = await #expect(throws: WeftError.self) {
            try await phone.connect(to: "127.0.0.1:\(port)", token: Self.secret, waitUntilConnected: .milliseconds(300))
        }
        #expect(late?.code == .timeout)
        #expect(phone.syncStatus.peers.count == 1)
        #expect(phone.syncStatus.activity == .offline || phone.syncStatus.activity == .connecting)
        await phone.shutdown()
    }

    @Test func anIncrementGivesItsNumberAndAReceiptThatBecomesStable() async throws {
        let hub = try Replica.inMemory()
        let phone = try Replica.inMemory()
        let port = try await hub.listen(on: "127.0.0.1:0", token: Self.secret)
        try await phone.connect(to: "127.0.0.1:\(port)", token: Self.secret, waitUntilConnected: Self.waitLimit)
        let likes = try Self.node(phone, "likes")
        let first = try await likes.increment(by: 2)
        #expect(first.value == 2)
        #expect(try await first.receipt.wait(for: .stable, timeout: Self.waitLimit) == .stable)
        let received = Collector<Result<IncrementResult, WeftError>>()
        let returned = likes.increment(by: 3) { received.append($0) }
        #expect(returned?.value == 5)
        let delivered = try #require(try await received.wait(for: 1).first?.get())
        #expect(delivered.value == 5)
        #expect(delivered.receipt.stamp == returned?.receipt.stamp)
        #expect(try await delivered.receipt.wait(for: .stable, timeout: Self.waitLimit) == .stable)
        await phone.shutdown()
        await hub.shutdown()
    }
}
