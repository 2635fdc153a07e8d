import Foundation
import Testing
import WeftCore

@_spi(Engine) @testable import Weft

/// `print(receipt)` showed `Weft.WriteReceipt`; receipts, statuses, transaction results, events and
/// sync statuses now describe themselves.
@Suite struct APIDescriptionTests {
    @Test func receiptsAndStatusesSayWhatTheyAre() async throws {
        let replica = try Replica.inMemory()
        let receipt = try await replica.root.child("a").set(1)
        #expect("\(receipt)" == "WriteReceipt(\(receipt.stamp), durable)")
        #expect("\(WriteStatus.stable)" == "stable")
        let rejected = WriteStatus.rejected(.staleRead(try Path("/a")))
        #expect("\(rejected)" == "rejected(transaction on /a read a stale value)")
        await replica.shutdown()
    }

    @Test func transactionResultsSayTheOutcomeTheValueAndTheAttempts() async throws {
        let replica = try Replica.inMemory()
        let seats = try replica.root.child("seats")
        try await seats.set(1)
        let committed = try await seats.runTransaction { .set(.int(($0.intValue ?? 0) - 1)) }
        #expect("\(committed)".hasPrefix("committed value: 0 after 1 attempt, receipt WriteReceipt("))
        let aborted = try await seats.runTransaction { _ in .abort }
        #expect("\(aborted)" == "aborted(byClosure) value: 0 after 1 attempt")
        await replica.shutdown()
    }

    @Test func eventsSayTheTypeTheNodeTheValueAndTheSource() async throws {
        let replica = try Replica.inMemory()
        let list = try replica.root.child("list")
        try await list.set(["a": 1, "b": 2])
        let events = Collector<String>()
        let token = list.subscribe(to: .childAddition) { events.append("\($0)") }
        #expect(
            await events.wait(for: 2) == [
                "childAddition /list/a 1 (initial)", "childAddition /list/b 2 after a (initial)",
            ])
        token.invalidate()
        await replica.shutdown()
    }

    @Test func syncStatusesListThePeers() {
        let peer = SyncPeerStatus(
            address: "127.0.0.1:7700", direction: .outbound, replica: nil, role: nil, isConnected: false,
            opsBehind: 3, sessionsEstablished: 0, lastError: "refused")
        #expect("\(peer)" == "outbound 127.0.0.1:7700 not connected, 3 ops behind, last error: refused")
        let status = SyncDriverStatus(listeningAddress: nil, peers: [peer])
        #expect("\(status)" == "listening on nothing, 0 of 1 peers connected\n  \(peer)")
        #expect("\(SubscriptionEnd.shutDown)" == "shutDown")
    }
}
