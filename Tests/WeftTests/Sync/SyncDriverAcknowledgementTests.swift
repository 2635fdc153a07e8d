import Foundation
import Logging
import Testing
import WeftCore
import WeftSync

@_spi(Engine) @testable import Weft

/// Acks drive write receipts: `.acknowledged` once a hub or a peer holds a write durably, `.stable` once
/// every member does, and the stable frontier lets compaction fold the log. Real SQLite replicas, real
/// drivers, loopback TCP.
@Suite(.timeLimit(.minutes(5))) struct SyncDriverAcknowledgementTests {
    static let token = try! AuthToken(string: "acknowledgement tests shared secret")

    /// A driver over `replica` that trusts every replica in `others` with the shared token.
    static func driver(_ replica: Replica, role: SyncRole, others: [Replica]) throws -> SyncDriver {
        var book = TokenBook()
        for other in others { book.set(token, for: other.replicaID.description) }
        var configuration = SyncConfiguration(replica: replica.replicaID, role: role, tokens: book)
        configuration.pingIntervalMilliseconds = 200
        configuration.idleTimeoutMilliseconds = 5_000
        var logger = Logger(label: "weft.sync.test.acks")
        logger.logLevel = .critical
        return try SyncDriver(replica: replica, configuration: configuration, logger: logger)
    }

    static func fixtures(_ count: Int) throws -> [ReplicaFixture] {
        try (0..<count).map { index in
            try ReplicaFixture(.sqlite, seed: 100 + UInt64(index)) { options in
                options.wallClockMillis = ReplicaOptions.systemClockMillis
            }
        }
    }

    /// Shuts the drivers down, then the fixtures' replicas.
    static func stop(_ drivers: [SyncDriver], _ fixtures: [ReplicaFixture]) async {
        for driver in drivers { await driver.shutdown() }
        for fixture in fixtures { await fixture.finish() }
    }

    /// Waits for `receipt` to reach `status`, failing after `milliseconds`.
    static func reach(_ receipt: WriteReceipt, _ status: WriteStatus, within milliseconds: Int = 10_000)
        async throws
    {
        try await SyncFixture.wait("a write to become \(status)", within: milliseconds) {
            WriteReceipt.reached(receipt.status, status)
        }
        #expect(try await receipt.wait(for: status) == receipt.status)
    }

    @Test func aWriteBecomesAcknowledgedThenStableBetweenTwoReplicasAndTheLogCompacts() async throws {
        let fixtures = try Self.fixtures(2)
        let (hub, leaf) = (fixtures[0].replica, fixtures[1].replica)
        let hubDriver = try Self.driver(hub, role: .hub, others: [leaf])
        let leafDriver = try Self.driver(leaf, role: .peer, others: [hub])
        do {
            var receipts: [WriteReceipt] = []
            for index in 0..<50 {
                receipts.append(try leaf.submit(path: Sample.path("/leaf/\(index)"), kind: .set(.int(Int64(index)))))
            }
            let hubReceipt = try hub.submit(path: Sample.path("/hub"), kind: .increment(by: .int(2), from: .int(0)))
            #expect(receipts[49].status <= .durable)
            let port = try await hubDriver.listen(on: "127.0.0.1", port: 0)
            try await leafDriver.addPeer(host: "127.0.0.1", port: port)
            try await Self.reach(receipts[49], .acknowledged)
            try await Self.reach(receipts[49], .stable)
            try await Self.reach(receipts[0], .stable)
            try await Self.reach(hubReceipt, .stable)
            #expect(leaf.digest == hub.digest)
            // A leaf compacts no further than its hub: nothing until the hub compacted and said so.
            #expect(leaf.compactableOpCount() == 0)
            #expect(try await leaf.compact().opsFolded == 0)
            try await SyncFixture.wait("the hub to see every op stable") { hub.compactableOpCount() == 51 }
            #expect(try await hub.compact().opsFolded == 51)
            try await SyncFixture.wait("the leaf to learn the hub's compaction") { leaf.compactableOpCount() == 51 }
            let report = try await leaf.compact()
            #expect(report.opsFolded == 51)
            #expect(leaf.digest == hub.digest)
            // Writes made after compaction still flow and still get their statuses.
            let later = try hub.submit(path: Sample.path("/hub"), kind: .increment(by: .int(3), from: .int(0)))
            try await Self.reach(later, .stable)
            try await SyncFixture.wait("the later write to reach the leaf") { leaf.digest == hub.digest }
            #expect(leaf.value(at: Sample.path("/hub")) == .int(5))
        } catch {
            await leafDriver.shutdown()
            await hubDriver.shutdown()
            for fixture in fixtures { await fixture.finish() }
            throw error
        }
        await leafDriver.shutdown()
        await hubDriver.shutdown()
        for fixture in fixtures { await fixture.finish() }
    }

    @Test func aLeafWriteIsStableOnlyOnceTheOtherLeafHasItThroughTheHub() async throws {
        let fixtures = try Self.fixtures(3)
        let (hub, left, right) = (fixtures[0].replica, fixtures[1].replica, fixtures[2].replica)
        let hubDriver = try Self.driver(hub, role: .hub, others: [left, right])
        let leftDriver = try Self.driver(left, role: .peer, others: [hub])
        let rightDriver = try Self.driver(right, role: .peer, others: [hub])
        let drivers = [leftDriver, rightDriver, hubDriver]
        do {
            let port = try await hubDriver.listen(on: "127.0.0.1", port: 0)
            try await leftDriver.addPeer(host: "127.0.0.1", port: port)
            try await rightDriver.addPeer(host: "127.0.0.1", port: port)
            // Both leaves wrote once, so each is a member the other's writes wait for.
            let first = try right.submit(path: Sample.path("/right"), kind: .set(.int(1)))
            try await Self.reach(first, .stable)
            await rightDriver.shutdown()
            let receipt = try left.submit(path: Sample.path("/left"), kind: .set(.int(1)))
            try await Self.reach(receipt, .acknowledged)
            try await Task.sleep(for: .milliseconds(500))
            #expect(receipt.status == .acknowledged, "the right leaf is away: the write cannot be stable")
            let rightAgain = try Self.driver(right, role: .peer, others: [hub])
            do {
                try await rightAgain.addPeer(host: "127.0.0.1", port: port)
                try await Self.reach(receipt, .stable)
                #expect(right.value(at: Sample.path("/left")) == .int(1))
            } catch {
                await rightAgain.shutdown()
                throw error
            }
            await rightAgain.shutdown()
        } catch {
            await Self.stop(drivers, fixtures)
            throw error
        }
        await Self.stop(drivers, fixtures)
    }

    /// A member that holds no ops of its own is known after the hub restarts: the hub's membership is
    /// stored, so the hub's own write cannot become stable before that member acks it again (and the
    /// other leaf's announced frontier, which does not know that member, does not count).
    @Test func aRestartedHubStillWaitsForAMemberWithoutOps() async throws {
        let fixtures = try Self.fixtures(3)
        let (left, quiet) = (fixtures[1].replica, fixtures[2].replica)
        var hubDriver = try Self.driver(fixtures[0].replica, role: .hub, others: [left, quiet])
        var drivers: [SyncDriver] = [hubDriver]
        do {
            let port = try await hubDriver.listen(on: "127.0.0.1", port: 0)
            let leftDriver = try Self.driver(left, role: .peer, others: [fixtures[0].replica])
            let quietDriver = try Self.driver(quiet, role: .peer, others: [fixtures[0].replica])
            drivers += [leftDriver, quietDriver]
            try await leftDriver.addPeer(host: "127.0.0.1", port: port)
            try await quietDriver.addPeer(host: "127.0.0.1", port: port)
            let first = try left.submit(path: Sample.path("/left"), kind: .set(.int(1)))
            try await Self.reach(first, .stable)
            for driver in drivers { await driver.shutdown() }
            drivers = []

            try await fixtures[0].reopen()
            let hub = fixtures[0].replica
            hubDriver = try Self.driver(hub, role: .hub, others: [left, quiet])
            drivers = [hubDriver]
            let newPort = try await hubDriver.listen(on: "127.0.0.1", port: 0)
            let leftAgain = try Self.driver(left, role: .peer, others: [hub])
            drivers.append(leftAgain)
            try await leftAgain.addPeer(host: "127.0.0.1", port: newPort)
            let second = try hub.submit(path: Sample.path("/left"), kind: .set(.int(2)))
            try await Self.reach(second, .acknowledged)
            try await Task.sleep(for: .milliseconds(500))
            #expect(second.status == .acknowledged, "the quiet member is away: the write cannot be stable")
            let quietAgain = try Self.driver(quiet, role: .peer, others: [hub])
            drivers.append(quietAgain)
            try await quietAgain.addPeer(host: "127.0.0.1", port: newPort)
            try await Self.reach(second, .stable)
            #expect(quiet.value(at: Sample.path("/left")) == .int(2))
        } catch {
            await Self.stop(drivers, fixtures)
            throw error
        }
        await Self.stop(drivers, fixtures)
    }

    @Test func theStampFrontierStaysBelowTheFirstOpNotEveryMemberHolds() async throws {
        let fixture = try ReplicaFixture(.memory)
        let replica = fixture.replica
        for index in 0..<5 {
            _ = try replica.submit(path: Sample.path("/mine/\(index)"), kind: .set(.int(Int64(index))))
        }
        try await replica.flush()
        let other = Sample.replica(1)
        let mine = replica.ops(from: replica.replicaID, after: 0, limit: 10)
        try #require(mine.count == 5)
        // The other replica's first op falls between our 2nd and 3rd.
        let between = Stamp(time: mine[2].stamp.time, replica: other)
        try replica.applyRemote([Op(stamp: between, sequence: 1, path: Sample.path("/theirs"), kind: .set(.int(1)))])
        let me = replica.replicaID
        // Our ops stable through 4, theirs not at all: the frontier stays below their op.
        let frontier = try #require(
            replica.stampFrontier(covering: VersionVector([me: 4]), known: VersionVector([me: 5, other: 1])))
        #expect(frontier < between)
        #expect(frontier >= mine[1].stamp)
        // Fewer of ours stable: our last stable op bounds the frontier.
        #expect(
            replica.stampFrontier(covering: VersionVector([me: 2]), known: VersionVector([me: 5, other: 3]))
                == mine[1].stamp)
        // Everything held everywhere: the frontier is the greatest stamp, never beyond it.
        #expect(
            replica.stampFrontier(covering: VersionVector([me: 5, other: 1]), known: VersionVector([me: 5, other: 1]))
                == mine[4].stamp)
        await fixture.finish()
    }
}
