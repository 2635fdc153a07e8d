import Foundation
import Logging
import Testing
import WeftCore

@_spi(Engine) @testable import Weft

/// Probes of embedded sync with several SQLite replicas over 127.0.0.1.
/// A leaf that restarts and dials its hub again: it does not remember which member is its hub, and
/// counted the hub's first acknowledgement before it learned it. It then called stable what a member
/// lacked, and compacted past what its hub had.
@Suite(.timeLimit(.minutes(5)), .serialized) struct ReplicaSyncRestartTests {
    static let secret = "a long secret shared by the whole mesh"

    static func quiet(_ role: ReplicaSyncOptions.Role = .peer, name: String = "") -> ReplicaSyncOptions {
        var options = ReplicaSyncOptions()
        options.role = role
        options.name = name
        options.logger = Logger(label: "weft.sync.restart.test", factory: SwiftLogNoOpLogHandler.init)
        return options
    }

    /// A SQLite file in a fresh directory.
    static func file(_ name: String) throws -> String {
        try TemporaryDirectory.make().appendingPathComponent("\(name).sqlite").path
    }

    static func hub(_ path: String) async throws -> (Replica, Int) {
        let hub = try Replica.open(at: path)
        try hub.configureSync(quiet(.hub))
        let port = try await hub.listen(on: "127.0.0.1:0", token: secret)
        return (hub, port)
    }

    static func leaf(_ path: String, port: Int) async throws -> Replica {
        let leaf = try Replica.open(at: path)
        try leaf.configureSync(quiet())
        try await leaf.connect(to: "127.0.0.1:\(port)", token: secret)
        return leaf
    }

    static func receipt(_ replica: Replica, sequence: UInt64, stamp: Stamp) -> WriteReceipt {
        WriteReceipt(stamp: stamp, sequence: sequence, book: replica.receipts)
    }

    /// A leaf's write is acknowledged once the hub has it and stable only once every member has it: an
    /// offline member (here a quiet one, that never wrote) holds `.stable` back, also after the writer
    /// restarts and reconnects.
    @Test func anOfflineMemberHoldsStableBackAcrossTheWritersRestart() async throws {
        let (hub, port) = try await Self.hub(try Self.file("hub"))
        let aPath = try Self.file("a"), cPath = try Self.file("c")
        var a = try await Self.leaf(aPath, port: port)
        var c = try await Self.leaf(cPath, port: port)
        try await SyncFixture.wait("both leaves connected") {
            hub.syncStatus.connectedCount == 2 && a.syncStatus.connectedCount == 1 && c.syncStatus.connectedCount == 1
        }
        await c.shutdown()
        try await SyncFixture.wait("the hub sees c leave") { hub.syncStatus.connectedCount == 1 }

        let written = try a.submit(path: Sample.path("/x"), kind: .set(.int(1)))
        try await SyncFixture.wait("x acknowledged") { written.status >= WriteStatus.acknowledged }
        try await Task.sleep(for: .milliseconds(1_500))
        #expect(written.status == .acknowledged, "c lacks x: not stable")
        let (sequence, stamp) = (written.sequence, written.stamp)

        // The writer restarts and dials the hub again; c is still offline.
        await a.shutdown()
        a = try Replica.open(at: aPath)
        try a.configureSync(Self.quiet())
        try await a.connect(to: "127.0.0.1:\(port)", token: Self.secret)
        try await SyncFixture.wait("a connected again") { a.syncStatus.connectedCount == 1 }
        try await Task.sleep(for: .milliseconds(1_500))
        let again = Self.receipt(a, sequence: sequence, stamp: stamp)
        #expect(again.status == .acknowledged, "c still lacks x: it must not be stable")
        #expect(c.value(at: Sample.path("/x")) == .null)

        c = try Replica.open(at: cPath)
        try c.configureSync(Self.quiet())
        try await c.connect(to: "127.0.0.1:\(port)", token: Self.secret)
        try await SyncFixture.wait("c gets x") { c.value(at: Sample.path("/x")) == .int(1) }
        try await SyncFixture.wait("x stable once c has it") { again.status == WriteStatus.stable }
        for r in [a, c, hub] { await r.shutdown() }
    }

    /// A leaf compacts no further than its hub did ("no further than the replica's hubs compacted when
    /// it syncs with one"): here the hub never compacted, so a restarted leaf that dialled it again must
    /// fold nothing, and a joiner's older offline writes, which the hub accepts, must reach it.
    @Test func aRestartedLeafCompactsNoFurtherThanItsHub() async throws {
        let (hub, port) = try await Self.hub(try Self.file("hub"))
        let aPath = try Self.file("a")
        var a = try await Self.leaf(aPath, port: port)
        var last: WriteReceipt?
        for i in 0..<20 { last = try a.submit(path: Sample.path("/a/\(i)"), kind: .set(.int(Int64(i)))) }
        let receipt = try #require(last)
        try await SyncFixture.wait("a's writes stable") { receipt.status == WriteStatus.stable }
        await a.shutdown()
        a = try Replica.open(at: aPath)
        try a.configureSync(Self.quiet())
        try await a.connect(to: "127.0.0.1:\(port)", token: Self.secret)
        try await SyncFixture.wait("a connected again") { a.syncStatus.connectedCount == 1 }
        let report = try await a.compact(vacuum: false)
        #expect(report.opsFolded == 0, "the hub never compacted: a leaf may fold nothing")

        // A joiner that wrote offline a minute ago meets the group through the hub.
        var past = ReplicaOptions()
        past.wallClockMillis = { ReplicaOptions.systemClockMillis() - 60_000 }
        let joiner = try Replica.open(at: try Self.file("j"), options: past)
        try joiner.submit(path: Sample.path("/j"), kind: .set(.string("offline")))
        try joiner.configureSync(Self.quiet())
        try await joiner.connect(to: "127.0.0.1:\(port)", token: Self.secret)
        try await SyncFixture.wait("the hub holds the joiner's write") { hub.value(at: Sample.path("/j")) != .null }
        do {
            try await SyncFixture.wait("a converges with the hub", within: 5_000) { a.digest == hub.digest }
        } catch {
            Issue.record(
                "a diverged: /j on a = \(a.value(at: Sample.path("/j"))), on hub = \(hub.value(at: Sample.path("/j")))")
        }
        for r in [a, joiner, hub] { await r.shutdown() }
    }
}
