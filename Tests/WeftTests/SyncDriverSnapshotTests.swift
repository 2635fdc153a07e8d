import Foundation
import Logging
import Testing
import WeftCore
import WeftSync

@testable import Weft

/// A replica that joins after the hub compacted gets the hub's compacted base as a snapshot, installs
/// it, and then the tail: real SQLite replicas, real drivers, loopback TCP.
@Suite(.timeLimit(.minutes(1))) struct SyncDriverSnapshotTests {
    @Test func aLateJoinerInstallsTheHubsSnapshotAndEveryoneConverges() async throws {
        let fixtures = try SyncDriverAcknowledgementTests.fixtures(3)
        let (hub, leaf, joiner) = (fixtures[0].replica, fixtures[1].replica, fixtures[2].replica)
        let hubDriver = try SyncDriverAcknowledgementTests.driver(hub, role: .hub, others: [leaf, joiner])
        let leafDriver = try SyncDriverAcknowledgementTests.driver(leaf, role: .peer, others: [hub])
        var drivers = [leafDriver, hubDriver]
        do {
            let port = try await hubDriver.listen(on: "127.0.0.1", port: 0)
            try await leafDriver.addPeer(host: "127.0.0.1", port: port)
            var last: WriteReceipt?
            for index in 0..<40 {
                last = try leaf.submit(path: Sample.path("/items/i\(index % 7)"), kind: .set(.int(Int64(index))))
                try leaf.submit(path: Sample.path("/count"), kind: .increment(by: .int(1), from: .int(0)))
            }
            try hub.submit(path: Sample.path("/count"), kind: .increment(by: .int(100), from: .int(0)))
            try await SyncDriverAcknowledgementTests.reach(try #require(last), .stable)
            try await SyncFixture.wait("the hub to see its own write stable") { hub.compactableOpCount() == 81 }
            let compaction = try await hub.compact(vacuum: false)
            #expect(compaction.opsFolded == 81)
            #expect(hub.logStatus.opsInLog == 0)

            // The joiner wrote offline before it ever met the hub.
            try joiner.submit(path: Sample.path("/joiner"), kind: .set(.string("hello")))
            try joiner.submit(path: Sample.path("/count"), kind: .increment(by: .int(1_000), from: .int(0)))
            try await joiner.flush()
            let joinerDriver = try SyncDriverAcknowledgementTests.driver(joiner, role: .peer, others: [hub])
            drivers.insert(joinerDriver, at: 0)
            try await joinerDriver.addPeer(host: "127.0.0.1", port: port)
            try await SyncFixture.wait("the three replicas to converge") {
                hub.digest == joiner.digest && leaf.digest == joiner.digest
                    && leaf.value(at: Sample.path("/joiner")) == .string("hello")
            }
            #expect(joiner.value(at: Sample.path("/count")) == .int(1_140))
            #expect(joiner.value(at: Sample.path("/items/i6")) == .int(34))
            #expect(joiner.logStatus.opsInLog == 2, "the compacted ops came as a snapshot, not one by one")
            #expect(joiner.compactionVector == hub.compactionVector)
            #expect(joinerDriver.status.peers.allSatisfy { $0.lastError == nil })

            // Writes after the snapshot flow both ways as usual.
            try leaf.submit(path: Sample.path("/count"), kind: .increment(by: .int(5), from: .int(0)))
            try await SyncFixture.wait("a later write to reach the joiner") {
                joiner.value(at: Sample.path("/count")) == .int(1_145)
            }
        } catch {
            await SyncDriverAcknowledgementTests.stop(drivers, fixtures)
            throw error
        }
        await SyncDriverAcknowledgementTests.stop(drivers, fixtures)
    }

    /// A joiner whose clock runs 20 s behind wrote before the hub's compaction stamp: its writes are
    /// stamped again above it, the session restarts, and the writes reach everyone once.
    @Test func aJoinerWithOfflineWritesBelowTheHubsStampStampsThemAgain() async throws {
        var fixtures = try SyncDriverAcknowledgementTests.fixtures(2)
        fixtures.append(
            try ReplicaFixture(.sqlite, seed: 130) { options in
                options.wallClockMillis = { ReplicaOptions.systemClockMillis() - 20_000 }
            })
        let (hub, leaf, joiner) = (fixtures[0].replica, fixtures[1].replica, fixtures[2].replica)
        let hubDriver = try SyncDriverAcknowledgementTests.driver(hub, role: .hub, others: [leaf, joiner])
        let leafDriver = try SyncDriverAcknowledgementTests.driver(leaf, role: .peer, others: [hub])
        var drivers = [leafDriver, hubDriver]
        do {
            let offline = try joiner.submit(
                path: Sample.path("/count"), kind: .increment(by: .int(1_000), from: .int(0)))
            try joiner.submit(path: Sample.path("/joiner"), kind: .set(.string("offline")))
            try await joiner.flush()
            let port = try await hubDriver.listen(on: "127.0.0.1", port: 0)
            try await leafDriver.addPeer(host: "127.0.0.1", port: port)
            var last: WriteReceipt?
            for index in 0..<20 {
                last = try leaf.submit(
                    path: Sample.path("/count"), kind: .increment(by: .int(Int64(index)), from: .int(0)))
            }
            try await SyncDriverAcknowledgementTests.reach(try #require(last), .stable)
            // Stable at the hub once its own commit is durable, even when the leaf's last ack came first.
            try await SyncFixture.wait("the leaf's writes to be stable at the hub") { hub.compactableOpCount() == 20 }
            let frontier = try #require(try await hub.compact(vacuum: false).frontier)
            #expect(offline.stamp < frontier)

            let joinerDriver = try SyncDriverAcknowledgementTests.driver(joiner, role: .peer, others: [hub])
            drivers.insert(joinerDriver, at: 0)
            try await joinerDriver.addPeer(host: "127.0.0.1", port: port)
            try await SyncFixture.wait("the three replicas to converge") {
                hub.digest == joiner.digest && leaf.digest == joiner.digest
                    && leaf.value(at: Sample.path("/joiner")) == .string("offline")
            }
            #expect(joiner.value(at: Sample.path("/count")) == .int(1_190), "each write counted once")
            let own = joiner.ops(from: joiner.replicaID, after: 0, limit: 10)
            #expect(own.map(\.sequence) == [1, 2])
            #expect(own.allSatisfy { $0.stamp > frontier })
            #expect(hub.ops(from: joiner.replicaID, after: 0, limit: 10) == own)
        } catch {
            await SyncDriverAcknowledgementTests.stop(drivers, fixtures)
            throw error
        }
        await SyncDriverAcknowledgementTests.stop(drivers, fixtures)
    }

    /// Offline writes on both sides of the hub's compaction stamp: the hub refuses the first ones (below
    /// its frontier) and, until they come back stamped again, the later ones too, so that it never holds
    /// an op under the stamp the joiner replaces.
    @Test func writesOnBothSidesOfTheStampReachTheHubOnceStampedAgain() async throws {
        let lag = ClockLag(millis: 20_000)
        var fixtures = try SyncDriverAcknowledgementTests.fixtures(2)
        fixtures.append(
            try ReplicaFixture(.sqlite, seed: 131) { options in
                options.wallClockMillis = { ReplicaOptions.systemClockMillis() - lag.millis }
            })
        let (hub, leaf, joiner) = (fixtures[0].replica, fixtures[1].replica, fixtures[2].replica)
        let hubDriver = try SyncDriverAcknowledgementTests.driver(hub, role: .hub, others: [leaf, joiner])
        let leafDriver = try SyncDriverAcknowledgementTests.driver(leaf, role: .peer, others: [hub])
        var drivers = [leafDriver, hubDriver]
        do {
            for index in 0..<3 {
                try joiner.submit(
                    path: Sample.path("/count"), kind: .increment(by: .int(Int64(1_000 << index)), from: .int(0)))
            }
            let port = try await hubDriver.listen(on: "127.0.0.1", port: 0)
            try await leafDriver.addPeer(host: "127.0.0.1", port: port)
            var last: WriteReceipt?
            for _ in 0..<10 {
                last = try leaf.submit(path: Sample.path("/count"), kind: .increment(by: .int(1), from: .int(0)))
            }
            try await SyncDriverAcknowledgementTests.reach(try #require(last), .stable)
            try await SyncFixture.wait("the leaf's writes to be stable at the hub") { hub.compactableOpCount() == 10 }
            let frontier = try #require(try await hub.compact(vacuum: false).frontier)
            lag.millis = 0
            try await Task.sleep(for: .milliseconds(5))
            let above = try joiner.submit(path: Sample.path("/joiner"), kind: .set(.string("after")))
            try joiner.submit(path: Sample.path("/count"), kind: .increment(by: .int(8_000), from: .int(0)))
            try await joiner.flush()
            #expect(above.stamp > frontier)

            let joinerDriver = try SyncDriverAcknowledgementTests.driver(joiner, role: .peer, others: [hub])
            drivers.insert(joinerDriver, at: 0)
            try await joinerDriver.addPeer(host: "127.0.0.1", port: port)
            try await SyncFixture.wait("the three replicas to converge") {
                hub.digest == joiner.digest && leaf.digest == joiner.digest
                    && leaf.value(at: Sample.path("/joiner")) == .string("after")
            }
            #expect(joiner.value(at: Sample.path("/count")) == .int(15_010), "each write counted once")
            let own = joiner.ops(from: joiner.replicaID, after: 0, limit: 10)
            #expect(own.map(\.sequence) == [1, 2, 3, 4, 5])
            #expect(hub.ops(from: joiner.replicaID, after: 0, limit: 10) == own)
            #expect(leaf.ops(from: joiner.replicaID, after: 0, limit: 10) == own)
        } catch {
            await SyncDriverAcknowledgementTests.stop(drivers, fixtures)
            throw error
        }
        await SyncDriverAcknowledgementTests.stop(drivers, fixtures)
    }
}

/// How far a test replica's wall clock runs behind, changed while it runs.
private final class ClockLag: @unchecked Sendable {
    // Sendable: `value` is guarded by `lock`.
    private let lock = NSLock()
    private var value: UInt64

    init(millis: UInt64) { value = millis }

    var millis: UInt64 {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}
