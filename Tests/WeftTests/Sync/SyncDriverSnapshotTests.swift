import Foundation
import Logging
import Testing
import WeftCore
import WeftSync

@_spi(Engine) @testable import Weft

/// A replica that joins after the hub compacted gets the hub's compacted base as a snapshot, installs
/// it, and then the tail: real SQLite replicas, real drivers, loopback TCP.
@Suite(.timeLimit(.minutes(5))) struct SyncDriverSnapshotTests {
    /// A hub and a leaf on real SQLite files, syncing over loopback once started, and a joiner (with
    /// its own wall clock when given) that dials the hub when asked.
    final class Star {
        let fixtures: [ReplicaFixture]
        let hubDriver: SyncDriver
        let leafDriver: SyncDriver
        private(set) var drivers: [SyncDriver]
        private(set) var port = 0
        var hub: Replica { fixtures[0].replica }
        var leaf: Replica { fixtures[1].replica }
        var joiner: Replica { fixtures[2].replica }

        init(joinerClock: (@Sendable () -> UInt64)? = nil, seed: UInt64 = 130) throws {
            var fixtures = try SyncDriverAcknowledgementTests.fixtures(2)
            fixtures.append(
                try ReplicaFixture(.sqlite, seed: seed) { options in
                    options.wallClockMillis = joinerClock ?? ReplicaOptions.systemClockMillis
                })
            self.fixtures = fixtures
            hubDriver = try SyncDriverAcknowledgementTests.driver(
                fixtures[0].replica, role: .hub, others: [fixtures[1].replica, fixtures[2].replica])
            leafDriver = try SyncDriverAcknowledgementTests.driver(
                fixtures[1].replica, role: .peer, others: [fixtures[0].replica])
            drivers = [leafDriver, hubDriver]
        }

        /// The hub listens and the leaf dials it.
        func start() async throws {
            port = try await hubDriver.listen(on: "127.0.0.1", port: 0)
            try await leafDriver.addPeer(host: "127.0.0.1", port: port)
        }

        /// Waits for `last` to be stable and the hub to hold `count` stable ops, then compacts the hub.
        func compactHub(after last: WriteReceipt?, count: Int) async throws -> CompactionReport {
            try await SyncDriverAcknowledgementTests.reach(try #require(last), .stable)
            // Stable at the hub once its own commit is durable, even when the leaf's last ack came first.
            try await SyncFixture.wait("\(count) ops stable at the hub") { hub.compactableOpCount() == count }
            return try await hub.compact(vacuum: false)
        }

        /// The joiner dials the hub; returns its driver.
        @discardableResult
        func join() async throws -> SyncDriver {
            let driver = try SyncDriverAcknowledgementTests.driver(joiner, role: .peer, others: [hub])
            drivers.insert(driver, at: 0)
            try await driver.addPeer(host: "127.0.0.1", port: port)
            return driver
        }

        /// Waits until all three hold the same state and the leaf holds `value` at `path`.
        func converge(at path: String, _ value: Value) async throws {
            try await SyncFixture.wait("the three replicas to converge") {
                hub.digest == joiner.digest && leaf.digest == joiner.digest
                    && leaf.value(at: Sample.path(path)) == value
            }
        }

        /// Runs `body`, then stops the drivers and the fixtures, whether it threw or not.
        func run(_ body: (Star) async throws -> Void) async throws {
            do {
                try await body(self)
            } catch {
                await SyncDriverAcknowledgementTests.stop(drivers, fixtures)
                throw error
            }
            await SyncDriverAcknowledgementTests.stop(drivers, fixtures)
        }
    }

    @Test func aLateJoinerInstallsTheHubsSnapshotAndEveryoneConverges() async throws {
        try await Star().run { star in
            let (hub, leaf, joiner) = (star.hub, star.leaf, star.joiner)
            try await star.start()
            var last: WriteReceipt?
            for index in 0..<40 {
                last = try leaf.submit(path: Sample.path("/items/i\(index % 7)"), kind: .set(.int(Int64(index))))
                try leaf.submit(path: Sample.path("/count"), kind: .increment(by: .int(1), from: .int(0)))
            }
            try hub.submit(path: Sample.path("/count"), kind: .increment(by: .int(100), from: .int(0)))
            let compaction = try await star.compactHub(after: last, count: 81)
            #expect(compaction.opsFolded == 81)
            #expect(hub.logStatus.opsInLog == 0)

            // The joiner wrote offline before it ever met the hub.
            try joiner.submit(path: Sample.path("/joiner"), kind: .set(.string("hello")))
            try joiner.submit(path: Sample.path("/count"), kind: .increment(by: .int(1_000), from: .int(0)))
            try await joiner.flush()
            let joinerDriver = try await star.join()
            try await star.converge(at: "/joiner", .string("hello"))
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
        }
    }

    /// A joiner whose clock runs 20 s behind wrote before the hub's compaction stamp: its writes are
    /// stamped again above it, the session restarts, and the writes reach everyone once.
    @Test func aJoinerWithOfflineWritesBelowTheHubsStampStampsThemAgain() async throws {
        try await Star(joinerClock: { ReplicaOptions.systemClockMillis() - 20_000 }).run { star in
            let (hub, leaf, joiner) = (star.hub, star.leaf, star.joiner)
            let offline = try joiner.submit(
                path: Sample.path("/count"), kind: .increment(by: .int(1_000), from: .int(0)))
            try joiner.submit(path: Sample.path("/joiner"), kind: .set(.string("offline")))
            try await joiner.flush()
            try await star.start()
            var last: WriteReceipt?
            for index in 0..<20 {
                last = try leaf.submit(
                    path: Sample.path("/count"), kind: .increment(by: .int(Int64(index)), from: .int(0)))
            }
            let frontier = try #require(try await star.compactHub(after: last, count: 20).frontier)
            #expect(offline.stamp < frontier)

            try await star.join()
            try await star.converge(at: "/joiner", .string("offline"))
            #expect(joiner.value(at: Sample.path("/count")) == .int(1_190), "each write counted once")
            let own = joiner.ops(from: joiner.replicaID, after: 0, limit: 10)
            #expect(own.map(\.sequence) == [1, 2])
            #expect(own.allSatisfy { $0.stamp > frontier })
            #expect(hub.ops(from: joiner.replicaID, after: 0, limit: 10) == own)
        }
    }

    /// Offline writes on both sides of the hub's compaction stamp: the hub refuses the first ones (below
    /// its frontier) and, until they come back stamped again, the later ones too, so that it never holds
    /// an op under the stamp the joiner replaces.
    @Test func writesOnBothSidesOfTheStampReachTheHubOnceStampedAgain() async throws {
        let lag = ClockLag(millis: 20_000)
        try await Star(joinerClock: { ReplicaOptions.systemClockMillis() - lag.millis }, seed: 131).run { star in
            let (hub, leaf, joiner) = (star.hub, star.leaf, star.joiner)
            for index in 0..<3 {
                try joiner.submit(
                    path: Sample.path("/count"), kind: .increment(by: .int(Int64(1_000 << index)), from: .int(0)))
            }
            try await star.start()
            var last: WriteReceipt?
            for _ in 0..<10 {
                last = try leaf.submit(path: Sample.path("/count"), kind: .increment(by: .int(1), from: .int(0)))
            }
            let frontier = try #require(try await star.compactHub(after: last, count: 10).frontier)
            lag.millis = 0
            try await Task.sleep(for: .milliseconds(5))
            let above = try joiner.submit(path: Sample.path("/joiner"), kind: .set(.string("after")))
            try joiner.submit(path: Sample.path("/count"), kind: .increment(by: .int(8_000), from: .int(0)))
            try await joiner.flush()
            #expect(above.stamp > frontier)

            try await star.join()
            try await star.converge(at: "/joiner", .string("after"))
            #expect(joiner.value(at: Sample.path("/count")) == .int(15_010), "each write counted once")
            let own = joiner.ops(from: joiner.replicaID, after: 0, limit: 10)
            #expect(own.map(\.sequence) == [1, 2, 3, 4, 5])
            #expect(hub.ops(from: joiner.replicaID, after: 0, limit: 10) == own)
            #expect(leaf.ops(from: joiner.replicaID, after: 0, limit: 10) == own)
        }
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
