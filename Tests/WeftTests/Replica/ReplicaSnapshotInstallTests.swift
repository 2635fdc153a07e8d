import Foundation
import Testing
@testable import WeftCore
import WeftStore
import WeftSync

@_spi(Engine) @testable import Weft

/// A replica that joins after another compacted installs that replica's snapshot: its state becomes
/// the snapshot's base with its own ops replayed on top, and the tail of the log then brings both to
/// the fold of every op.
@Suite(.timeLimit(.minutes(5))) struct ReplicaSnapshotInstallTests {
    /// A source replica that merged 300 workload ops and made 12 of its own, compacted up to the middle
    /// of what it knows, then merged 100 more: every op it knows, and the compaction's frontier.
    static func compactedSource(_ kind: ReplicaKind) async throws -> (ReplicaFixture, [Op], Stamp) {
        let source = try ReplicaFixture(kind, seed: 11)
        var workload = Workload(seed: 5, replicas: 3)
        var all: [Op] = []
        for _ in 0..<6 {
            let ops = (0..<50).map { _ in workload.next() }
            all += ops
            try source.replica.applyRemote(ops)
        }
        source.clock.now = 1_700_000_000_200
        for index in 0..<12 {
            try source.replica.submit(
                path: Sample.path("/counters/c\(index % 3)"), kind: .increment(by: .int(2), from: .int(0)))
        }
        try await source.replica.flush()
        all += source.replica.ops(from: source.replica.replicaID, after: 0, limit: 100)
        let stamps = all.map(\.stamp).sorted()
        source.replica.markStable(through: stamps[stamps.count / 2])
        let compaction = try await source.replica.compact(vacuum: false)
        let frontier = try #require(compaction.frontier)
        #expect(compaction.opsFolded > 100)
        let tail = (0..<100).map { _ in workload.next() }
        all += tail
        try source.replica.applyRemote(tail)
        #expect(source.replica.snapshot() == ReferenceFold.fold(all, registry: Workload.registry).state)
        return (source, all, frontier)
    }

    /// Sends each replica what the other lacks, as sync would after the snapshot.
    static func exchangeTails(_ source: Replica, _ joiner: Replica) throws {
        for (origin, sequence) in source.versionVector.entries where sequence > joiner.versionVector[origin] {
            try joiner.applyRemote(source.ops(from: origin, after: joiner.versionVector[origin], limit: 10_000))
        }
        try source.applyRemote(joiner.ops(from: joiner.replicaID, after: 0, limit: 10_000))
    }

    /// At random: a source merging two writers' streams and writing, a joiner writing offline; the
    /// source compacts up to what both writers sent, the joiner installs its snapshot (its own ops below
    /// the snapshot's stamp are stamped again), then both write, exchange and reopen. Both end on the
    /// fold of every op, in memory and loaded from their files.
    @Test(arguments: Array(1...24) as [UInt64])
    func aJoinerAndItsSourceLandOnTheFoldWhateverTheyDidAroundTheInstall(seed: UInt64) async throws {
        let source = try ReplicaFixture(.sqlite, seed: seed + 2000)
        let joiner = try ReplicaFixture(.sqlite, seed: seed + 3000)
        var generator = SeededGenerator(seed: seed)
        var traffic = ReplicaTraffic(
            localSeed: seed &+ 6, localWriters: 2, remoteSeed: seed &+ 5, remoteWriters: 2, items: 10, counters: 3,
            startMillis: source.clock.now)
        var fed: [Op] = []
        var last: [ReplicaID: Stamp] = [:]
        var sourceOwn = ReplicaFoldPropertyTests.OwnOps()
        func write(_ fixture: ReplicaFixture, as writer: Int) throws {
            try traffic.write(to: fixture.replica, as: writer)
        }
        func feed() throws {
            let writer = Int(generator.below(2))
            let ops = traffic.remoteOps(from: writer, count: Int(generator.below(10)) + 1)
            traffic.keepAhead(source.clock)
            joiner.clock.now = source.clock.now
            try source.replica.applyRemote(ops)
            fed += ops
            last[ops[0].origin] = ops.last?.stamp
        }
        func reopen(_ fixture: ReplicaFixture) async throws {
            try await fixture.reopen()
            try await fixture.replica.waitUntilLoaded()
        }
        func exchange() async throws {
            try await source.replica.flush()
            try await joiner.replica.flush()
            try Self.exchangeTails(source.replica, joiner.replica)
        }

        while last.count < 2 || generator.chance(0.97) {
            switch generator.below(10) {
            case 0..<5: try feed()
            case 5..<7: try write(source, as: 0)
            case 7..<9: try write(joiner, as: 1)
            default:
                source.clock.advance(by: generator.below(30))
                joiner.clock.now = source.clock.now
            }
        }
        try await sourceOwn.collect(from: source.replica)
        source.replica.markStable(through: try #require(last.values.min()))
        _ = try await source.replica.compact(vacuum: false)
        if generator.chance(0.5) { try await reopen(source) }
        #expect(try joiner.replica.installSnapshot(try source.replica.syncSnapshot()).installed)
        if generator.chance(0.5) { try await reopen(joiner) }
        for _ in 0..<generator.int(in: 5...40) {
            switch generator.below(10) {
            case 0..<3: try feed()
            case 3..<5: try write(source, as: 0)
            case 5..<7: try write(joiner, as: 1)
            case 7..<9: try await exchange()
            default: try await reopen(generator.chance(0.5) ? joiner : source)
            }
        }
        try await exchange()
        try await exchange()
        try await sourceOwn.collect(from: source.replica)
        let joinerOwn = joiner.replica.ops(from: joiner.replica.replicaID, after: 0, limit: 10_000)
        let expected = ReferenceFold.fold(fed + sourceOwn.ops + joinerOwn, registry: Workload.registry).state
        #expect(source.replica.versionVector == joiner.replica.versionVector, "seed \(seed)")
        #expect(source.replica.snapshot() == expected, "seed \(seed): the source")
        #expect(joiner.replica.snapshot() == expected, "seed \(seed): the joiner")
        try await reopen(source)
        try await reopen(joiner)
        #expect(source.replica.snapshot() == expected, "seed \(seed): the source, loaded")
        #expect(joiner.replica.snapshot() == expected, "seed \(seed): the joiner, loaded")
        await source.finish()
        await joiner.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func aJoinerKeepsItsWritesAboveTheSnapshotAndLandsOnTheFold(kind: ReplicaKind) async throws {
        let (source, all, frontier) = try await Self.compactedSource(kind)
        let joiner = try ReplicaFixture(kind, seed: 12)
        joiner.clock.now = 1_700_000_030_000
        try joiner.replica.submit(path: Sample.path("/joiner"), kind: .set(.string("here")))
        let increment = try joiner.replica.submit(
            path: Sample.path("/counters/c0"), kind: .increment(by: .int(5), from: .int(0)))
        try await joiner.replica.flush()

        let snapshot = try source.replica.syncSnapshot()
        #expect(snapshot.stampFrontier == frontier)
        #expect(!snapshot.touches.isEmpty)
        let report = try joiner.replica.installSnapshot(snapshot)
        #expect(report == SnapshotInstallReport(opsFolded: 0, opsKept: 2, opsRestamped: 0, installed: true))
        #expect(joiner.replica.versionVector.covers(snapshot.frontier))
        #expect(joiner.replica.value(at: Sample.path("/joiner")) == .string("here"))
        try await increment.wait(for: .durable)

        try Self.exchangeTails(source.replica, joiner.replica)
        let joinerOps = joiner.replica.ops(from: joiner.replica.replicaID, after: 0, limit: 10)
        let expected = ReferenceFold.fold(all + joinerOps, registry: Workload.registry).state
        #expect(joiner.replica.snapshot() == expected)
        #expect(source.replica.snapshot() == expected)
        #expect(joiner.replica.versionVector == source.replica.versionVector)
        // A second install of the same snapshot finds every op already held.
        #expect(try joiner.replica.installSnapshot(snapshot).installed == false)

        try await joiner.replica.flush()
        try await joiner.reopen()
        #expect(joiner.replica.snapshot() == expected, "the installed base, frontier and log are stored")
        #expect(joiner.replica.versionVector == source.replica.versionVector)
        let later = try joiner.replica.submit(path: Sample.path("/joiner"), kind: .set(.int(2)))
        #expect(later.stamp > frontier)
        await joiner.replica.shutdown()
        let store = try joiner.openStore()
        #expect(try Sample.foldOfStore(store) == (try store.readTree()), "the stored tree is the fold of base and log")
        try store.close()
        await joiner.finish()
        await source.finish()
    }

    /// Own writes stamped below the sender's compaction stamp, which no replica acknowledged, are
    /// stamped again above it, with their sequences; the write after them too, to keep the order.
    @Test(arguments: ReplicaKind.allCases)
    func ownWritesBelowTheSendersStampAreStampedAgain(kind: ReplicaKind) async throws {
        let (source, all, frontier) = try await Self.compactedSource(kind)
        let joiner = try ReplicaFixture(kind, seed: 13)
        joiner.clock.now = frontier.millis - 40
        var receipts: [WriteReceipt] = []
        for index in 0..<4 {
            receipts.append(
                try joiner.replica.submit(
                    path: Sample.path("/joiner/count"), kind: .increment(by: .int(Int64(index + 1)), from: .int(0))))
        }
        joiner.clock.now = frontier.millis + 30_000
        receipts.append(try joiner.replica.submit(path: Sample.path("/joiner/late"), kind: .set(.bool(true))))
        try await joiner.replica.flush()
        #expect(receipts[0].stamp < frontier)

        let report = try joiner.replica.installSnapshot(try source.replica.syncSnapshot())
        #expect(report.installed)
        #expect(report.opsRestamped == 5)
        let own = joiner.replica.ops(from: joiner.replica.replicaID, after: 0, limit: 10)
        #expect(own.map(\.sequence) == [1, 2, 3, 4, 5])
        #expect(own.allSatisfy { $0.stamp > frontier })
        #expect(zip(own, own.dropFirst()).allSatisfy { $0.stamp < $1.stamp })
        if kind == .memory {
            // Durable before the install returns: no session can send a new stamp a crash would undo.
            let stored = try joiner.openStore().allOps().map(\.op).filter { $0.origin == joiner.replica.replicaID }
            #expect(stored.sorted { $0.sequence < $1.sequence } == own)
        }
        for receipt in receipts {
            let status = try await receipt.wait(for: .durable)
            #expect(status == .durable, "\(status)")
        }

        try Self.exchangeTails(source.replica, joiner.replica)
        let expected = ReferenceFold.fold(all + own, registry: Workload.registry).state
        #expect(joiner.replica.snapshot() == expected)
        #expect(source.replica.snapshot() == expected)
        #expect(joiner.replica.digest == source.replica.digest)
        #expect(joiner.replica.value(at: Sample.path("/joiner/count")) == .int(10))

        try await joiner.replica.flush()
        try await joiner.reopen()
        #expect(joiner.replica.snapshot() == expected)
        #expect(
            joiner.replica.ops(from: joiner.replica.replicaID, after: 0, limit: 10) == own, "the new stamps are stored")
        await joiner.finish()
        await source.finish()
    }

    @Test func anotherReplicasOpBelowTheSendersStampRefusesTheInstall() async throws {
        let (source, _, frontier) = try await Self.compactedSource(.memory)
        let joiner = try ReplicaFixture(.memory, seed: 14)
        let stranger = Sample.remote(
            9, sequence: 1, millis: frontier.millis - 10, path: "/counters/c2", .increment(by: .int(1), from: .int(0)))
        try joiner.replica.applyRemote([stranger])
        let before = joiner.replica.digest
        let snapshot = try source.replica.syncSnapshot()
        let error = #expect(throws: WeftError.self) { try joiner.replica.installSnapshot(snapshot) }
        #expect(error?.code == .sync)
        #expect(error?.message.contains("cannot take its place in stamp order") == true)
        #expect(joiner.replica.digest == before)
        #expect(joiner.replica.versionVector == VersionVector([stranger.origin: 1]))
        await joiner.finish()
        await source.finish()
    }

    @Test func anAcknowledgedOwnWriteBelowTheSendersStampRefusesTheInstall() async throws {
        let (source, _, frontier) = try await Self.compactedSource(.sqlite)
        let joiner = try ReplicaFixture(.sqlite, seed: 15)
        joiner.clock.now = frontier.millis - 40
        let receipt = try joiner.replica.submit(path: Sample.path("/joiner"), kind: .set(.int(1)))
        try await receipt.wait(for: .durable)
        joiner.replica.markAcknowledged(through: VersionVector([joiner.replica.replicaID: 1]))
        let snapshot = try source.replica.syncSnapshot()
        let error = #expect(throws: WeftError.self) { try joiner.replica.installSnapshot(snapshot) }
        #expect(error?.code == .sync)
        #expect(joiner.replica.value(at: Sample.path("/joiner")) == .int(1))
        #expect(joiner.replica.ops(from: joiner.replica.replicaID, after: 0, limit: 10).map(\.stamp) == [receipt.stamp])
        await joiner.finish()
        await source.finish()
    }

    /// Listeners hear the install as one change at the root, from the old state to the new.
    @Test func listenersHearTheInstall() async throws {
        let (source, _, _) = try await Self.compactedSource(.memory)
        let joiner = try ReplicaFixture(.memory, seed: 16)
        let heard = HeardChanges()
        let token = joiner.replica.addChangeListener { batch in heard.add(batch.changes) }
        let snapshot = try source.replica.syncSnapshot()
        try joiner.replica.installSnapshot(snapshot)
        #expect(await eventually { !heard.changes.isEmpty })
        #expect(heard.changes == [Change(path: .root, old: .null, new: snapshot.value)])
        token.cancel()
        await joiner.finish()
        await source.finish()
    }
}

/// Changes a listener heard, from any thread.
private final class HeardChanges: @unchecked Sendable {
    // Sendable: `heard` is guarded by `lock`.
    private let lock = NSLock()
    private var heard: [Change] = []

    func add(_ changes: [Change]) { lock.withLock { heard += changes } }
    var changes: [Change] { lock.withLock { heard } }
}
