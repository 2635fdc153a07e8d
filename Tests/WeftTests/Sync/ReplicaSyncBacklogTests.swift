#if canImport(Combine)
    import Combine
#else
    import OpenCombine
#endif
import Foundation
import Logging
import Testing
import WeftCore

@_spi(Engine) @testable import Weft

/// The backlog a replica's sync status shows for a peer it dials (`opsBehind`) while that peer is out
/// of reach: it showed the last connected session's count (or 0 for a peer never reached), so writes
/// made offline, exactly those waiting to sync, did not show.
@Suite(.timeLimit(.minutes(5)), .serialized) struct ReplicaSyncBacklogTests {
    static let secret = "a long secret shared by both replicas"

    static func quiet() -> ReplicaSyncOptions {
        var options = ReplicaSyncOptions()
        options.logger = Logger(label: "weft.sync.backlog.test", factory: SwiftLogNoOpLogHandler.init)
        return options
    }

    static func file(_ name: String) throws -> String {
        try TemporaryDirectory.make().appendingPathComponent("\(name).sqlite").path
    }

    @Test func writesMadeWhileTheHubIsAwayShowAsTheBacklogUntilItIsBack() async throws {
        let hubPath = try Self.file("hub")
        var hub = try Replica.open(at: hubPath)
        try hub.configureSync(Self.quiet())
        let port = try await hub.listen(on: "127.0.0.1:0", token: Self.secret)
        let phone = try Replica.open(at: try Self.file("phone"))
        try phone.configureSync(Self.quiet())
        try await phone.connect(to: "127.0.0.1:\(port)", token: Self.secret)
        try phone.submit(path: Sample.path("/before"), kind: .set(.int(0)))
        try hub.submit(path: Sample.path("/hub"), kind: .set(.int(0)))
        try await SyncFixture.wait("both caught up") {
            phone.syncStatus.peers.first?.opsBehind == 0 && hub.value(at: Sample.path("/before")) == .int(0)
                && phone.value(at: Sample.path("/hub")) == .int(0)
        }

        await hub.shutdown()
        try await SyncFixture.wait("the phone to see the hub go") { phone.syncStatus.connectedCount == 0 }
        for index in 0..<20 {
            try phone.submit(path: Sample.path("/offline/\(index)"), kind: .set(.int(Int64(index))))
        }
        try await SyncFixture.wait("the offline writes in the backlog") {
            phone.syncStatus.peers.first?.opsBehind == 20
        }

        hub = try Replica.open(at: hubPath)
        try hub.configureSync(Self.quiet())
        try await hub.listen(on: "127.0.0.1:\(port)", token: Self.secret)
        try await SyncFixture.wait("the backlog sent", within: 20_000) {
            phone.syncStatus.connectedCount == 1 && phone.syncStatus.peers.first?.opsBehind == 0
                && hub.value(at: Sample.path("/offline/19")) == .int(19)
        }
        await phone.shutdown()
        await hub.shutdown()
    }

    /// While connected, the count moved only when the peer sent something (an ack, a ping): writes made
    /// to a peer that reads slowly, or not at all, did not show. The hub is held here: its loop blocks
    /// in a status subscriber, so it acknowledges nothing.
    @Test func writesAPeerHasNotAcknowledgedShowWhileItIsConnected() async throws {
        let hub = try Replica.inMemory()
        try hub.configureSync(Self.quiet())
        let port = try await hub.listen(on: "127.0.0.1:0", token: Self.secret)
        let phone = try Replica.inMemory()
        try phone.configureSync(Self.quiet())
        try await phone.connect(to: "127.0.0.1:\(port)", token: Self.secret)
        try await SyncFixture.wait("connected") {
            phone.syncStatus.connectedCount == 1 && phone.syncStatus.peers.first?.opsBehind == 0
        }

        let gate = ReplicaSyncTests.LoopGate()
        // The link's own publisher, which delivers on the loop (the public one hops to a queue).
        let cancellable = hub.syncLink.publisher.sink { _ in gate.holdIfArmed() }
        gate.arm()
        try hub.submit(path: Sample.path("/hub"), kind: .set(.int(1)))
        try await SyncFixture.wait("the hub's loop held") { gate.isHolding }
        for index in 0..<20 { try phone.submit(path: Sample.path("/w/\(index)"), kind: .set(.int(Int64(index)))) }
        // The hub's own write, which it has not acknowledged either, counts too (21).
        let counted = await eventually(timeoutSeconds: 5) { (phone.syncStatus.peers.first?.opsBehind ?? 0) >= 20 }
        #expect(counted, "opsBehind is \(phone.syncStatus.peers.first?.opsBehind ?? 0)")
        #expect(phone.syncStatus.connectedCount == 1)

        gate.release()
        try await SyncFixture.wait("the writes acknowledged") { phone.syncStatus.peers.first?.opsBehind == 0 }
        cancellable.cancel()
        await phone.shutdown()
        await hub.shutdown()
    }

    @Test func aHubNeverReachedIsBehindByTheWritesNobodyAcknowledged() async throws {
        let hub = try Replica.inMemory()
        try hub.configureSync(Self.quiet())
        let port = try await hub.listen(on: "127.0.0.1:0", token: Self.secret)
        let phone = try Replica.inMemory()
        try phone.configureSync(Self.quiet())
        for index in 0..<5 { try phone.submit(path: Sample.path("/w/\(index)"), kind: .set(.int(Int64(index)))) }
        try await phone.connect(to: "127.0.0.1:\(port)", token: "another secret of enough length")
        try await SyncFixture.wait("the refusal") { phone.syncStatus.peers.first?.lastError != nil }
        try await SyncFixture.wait("the five writes in the backlog") {
            phone.syncStatus.peers.first?.opsBehind == 5
        }
        #expect(phone.syncStatus.connectedCount == 0)
        await phone.shutdown()
        await hub.shutdown()
    }
}
