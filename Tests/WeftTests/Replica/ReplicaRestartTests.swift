import Foundation
import GRDB
import Testing
import WeftCore
import WeftStore

@_spi(Engine) @testable import Weft

/// Restarting a replica: state, clock, sequences, and the lazy load of a reopened file.
@Suite(.timeLimit(.minutes(5))) struct ReplicaRestartTests {
    @Test(arguments: ReplicaKind.allCases)
    func aReopenedReplicaHasTheSameStateVersionVectorAndDigest(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        var workload = Workload(seed: 3, replicas: 3)
        var remote: [Op] = []
        for round in 0..<20 {
            for index in 0..<10 {
                try fixture.replica.submit(
                    path: Sample.path("/mine/r\(round % 4)/k\(index % 3)"), kind: .increment(by: .int(1), from: .int(0))
                )
            }
            remote += (0..<10).map { _ in workload.next() }
            fixture.clock.advance(by: 3)
        }
        var generator = SeededGenerator(seed: 99)
        remote.shuffle(using: &generator)
        try fixture.replica.applyRemote(remote)
        let before = (state: fixture.replica.snapshot(), vector: fixture.replica.versionVector)
        let id = fixture.replica.replicaID

        try await fixture.reopen()
        let replica = fixture.replica
        #expect(replica.replicaID == id)
        #expect(replica.snapshot() == before.state)
        #expect(replica.versionVector == before.vector)
        #expect(replica.durableVersionVector == before.vector)
        #expect(replica.digest == StateDigest(of: before.state))

        let next = try replica.submit(path: Sample.path("/mine/after"), kind: .set(.bool(true)))
        #expect(replica.versionVector[id] == 201)
        try await next.wait(for: .durable)
        #expect(replica.ops(from: id, after: 200, limit: 5).map(\.stamp) == [next.stamp])
        await fixture.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func theClockStaysMonotonicAfterARestartWithTheWallClockSetBack(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        fixture.clock.now = 1_800_000_000_000
        let late = try fixture.replica.submit(path: Sample.path("/a"), kind: .set(.int(1)))
        let remote = Sample.remote(9, sequence: 1, millis: 1_800_000_030_000, path: "/b", .set(.int(2)))
        try fixture.replica.applyRemote([remote])

        fixture.clock.now = 1_700_000_000_000
        try await fixture.reopen()
        let after = try fixture.replica.submit(path: Sample.path("/a"), kind: .set(.int(3)))
        #expect(after.stamp > late.stamp)
        #expect(after.stamp > remote.stamp, "the clock remembers the greatest stamp seen, not only made")
        let key = try fixture.replica.reservePushKey()
        try await fixture.reopen()
        let pushed = try fixture.replica.submitPush(parent: Sample.path("/chat"), value: .int(1))
        #expect(pushed.key > key, "a reserved push key is remembered across a restart")
        #expect(fixture.replica.value(at: Sample.path("/a")) == .int(3))
        await fixture.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func readsBeforeTheLoadEndComeFromTheFileAndWritesWaitForIt(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        for user in 0..<50 {
            try fixture.replica.submit(
                path: Sample.path("/users/u\(user)"), kind: .set(Sample.json(#"{"name":"n\#(user)","score":\#(user)}"#))
            )
        }
        await fixture.replica.shutdown()
        let gate = GatedStore(try fixture.openStore())
        gate.loadGate.close()
        let replica = try Replica.open(store: gate, options: fixture.options)
        #expect(!replica.isLoaded)
        #expect(replica.value(at: Sample.path("/users/u7/score")) == .int(7))
        #expect(replica.value(at: Sample.path("/users/u49")) == Sample.json(#"{"name":"n49","score":49}"#))
        #expect(!replica.isLoaded)

        let written = Counter()
        let writer = Thread {
            _ = try? replica.submit(path: Sample.path("/users/u7/score"), kind: .set(.int(700)))
            written.increment()
        }
        writer.start()
        try await Task.sleep(nanoseconds: 30_000_000)
        #expect(written.value == 0, "a write waits for the load")
        gate.loadGate.open()
        try await replica.waitUntilLoaded()
        #expect(await eventually { written.value == 1 })
        #expect(replica.value(at: Sample.path("/users/u7/score")) == .int(700))
        #expect(replica.value(at: Sample.path("/users")).children.count == 50)
        await replica.shutdown()
        await fixture.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func aReopenedReplicasReceiptsKeepTheirAcknowledgedAndStableStatuses(kind: ReplicaKind) async throws {
        // The file kept both frontiers, but the receipts of a reopened replica said `.durable`.
        let fixture = try ReplicaFixture(kind)
        let first = try fixture.replica.submit(path: Sample.path("/a"), kind: .set(.int(1)))
        let second = try fixture.replica.submit(path: Sample.path("/b"), kind: .set(.int(2)))
        let third = try fixture.replica.submit(path: Sample.path("/c"), kind: .set(.int(3)))
        try await fixture.replica.flush()
        fixture.replica.markStable(through: first.stamp)
        fixture.replica.markAcknowledged(through: VersionVector([fixture.replica.replicaID: second.sequence]))
        try await fixture.replica.flush()
        try await fixture.reopen()
        try await fixture.replica.waitUntilLoaded()
        let book = fixture.replica.receipts
        let statuses = [first, second, third].map {
            WriteReceipt(stamp: $0.stamp, sequence: $0.sequence, book: book).status
        }
        #expect(statuses == [.stable, .acknowledged, .durable])
        await fixture.finish()
    }

    /// Opens the fixture's stored data with the load held at its gate, subscribes to the value at `path`
    /// while reads come from the file, then lets the load end; returns the replica and the events.
    static func subscribeDuringTheLoad(
        _ fixture: ReplicaFixture, at path: String
    ) async throws -> (Replica, Collector<DataEvent>, ObservationToken) {
        let gate = GatedStore(try fixture.openStore())
        gate.loadGate.close()
        let replica = try Replica.open(store: gate, options: fixture.options)
        let events = Collector<DataEvent>()
        let token = try #require(replica.node(for: path)).subscribe { events.append($0) }
        await events.wait(for: 1)
        #expect(!replica.isLoaded)
        gate.loadGate.open()
        try await replica.waitUntilLoaded()
        return (replica, events, token)
    }

    @Test(arguments: ReplicaKind.allCases)
    func aSubscriberStartedDuringTheLoadHearsOfACallTheLoadApplied(kind: ReplicaKind) async throws {
        // Found by folding the events of subscribers started while a replica loaded: a call stored while
        // it waited for its function applied in the load once the options registered the function, and
        // subscribers, which had read the file, never heard of it (the file kept the old value too).
        let fixture = try ReplicaFixture(kind) { $0.functions = FunctionRegistry() }
        try fixture.replica.submit(path: Sample.path("/accounts/a"), kind: .set(.int(10)))
        let transfer = FunctionCall(name: "transfer", version: 1, arguments: ["from": "a", "to": "b", "amount": 3])
        try fixture.replica.applyRemote([
            Sample.remote(5, sequence: 1, millis: fixture.clock.now + 1, path: "/accounts", .call(transfer))
        ])
        await fixture.replica.shutdown()
        fixture.options.functions = Workload.registry
        let (replica, events, token) = try await Self.subscribeDuringTheLoad(fixture, at: "/accounts")
        #expect(replica.value(at: Sample.path("/accounts")) == ["a": 7, "b": 3])
        #expect(await events.wait(for: 2).map(\.value) == [["a": 10], ["a": 7, "b": 3]])
        token.invalidate()
        await replica.shutdown()
        let store = try fixture.openStore()
        #expect(try store.readTree(at: Sample.path("/accounts")) == ["a": 7, "b": 3])
        try store.close()
        await fixture.finish()
    }

    @Test func aSubscriberStartedDuringTheLoadHearsOfACallWaitingAgainForItsFunction() async throws {
        // The reverse: a function registered at run time only is unknown to the load, the call waits,
        // and the value read from the file no longer holds.
        let fixture = try ReplicaFixture(.sqlite) { $0.functions = FunctionRegistry() }
        try fixture.replica.register(name: "transfer", version: 1, Workload.transfer)
        try fixture.replica.submit(path: Sample.path("/accounts/a"), kind: .set(.int(10)))
        let transfer = FunctionCall(name: "transfer", version: 1, arguments: ["from": "a", "to": "b", "amount": 3])
        try fixture.replica.applyRemote([
            Sample.remote(5, sequence: 1, millis: fixture.clock.now + 1, path: "/accounts", .call(transfer))
        ])
        await fixture.replica.shutdown()
        let (replica, events, token) = try await Self.subscribeDuringTheLoad(fixture, at: "/accounts")
        #expect(replica.value(at: Sample.path("/accounts")) == ["a": 10])
        #expect(await events.wait(for: 2).map(\.value) == [["a": 7, "b": 3], ["a": 10]])
        try replica.register(name: "transfer", version: 1, Workload.transfer)
        #expect(await events.wait(for: 3).map(\.value).last == ["a": 7, "b": 3])
        token.invalidate()
        await replica.shutdown()
        await fixture.finish()
    }

    @Test func aLargeFileLoadsInSlicesThatAReadCanPass() async throws {
        let fixture = try ReplicaFixture(.sqlite)
        let leaves = 3 * WeftLimits.loadSliceRowsMax
        for group in 0..<(leaves / 1_000) {
            let children = (0..<1_000).map {
                MergeChild(relative: Sample.path("f\($0)"), value: .int(Int64(group * 1_000 + $0)))
            }
            try fixture.replica.submit(path: Sample.path("/g/g\(group)"), kind: .merge(children))
        }
        // Our own ops are listed once durable: without the flush, the group commit may not have made
        // any durable yet, and the list is empty.
        try await fixture.replica.flush()
        let state = fixture.replica.snapshot()
        // Compacted, the file holds the tree and no log: the load reads the tree, in slices.
        fixture.replica.markStable(
            through: try #require(
                fixture.replica.ops(from: fixture.replica.replicaID, after: 0, limit: 100).last?.stamp))
        try await fixture.replica.compact()
        try await fixture.reopen()
        let replica = fixture.replica
        #expect(replica.value(at: Sample.path("/g/g3/f5")) == .int(3_005))
        try await replica.waitUntilLoaded()
        #expect(replica.snapshot() == state)
        await fixture.finish()
    }

    @Test func readersThatNeverStopDoNotHoldTheLoadBack() async throws {
        // Between slices the load let reads through while any was waiting: eight threads reading all
        // the time kept it from ever finishing, and the writes and the shutdown that wait for it.
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("weft.sqlite").path
        let store = try SQLiteStore(path: path)
        var groups: [Key: Value] = [:]
        for group in 0..<(20 * WeftLimits.loadSliceRowsMax / 1_000) {
            var children: [Key: Value] = [:]
            for leaf in 0..<1_000 { children[try Key(validating: "f\(leaf)")] = .int(Int64(group * 1_000 + leaf)) }
            groups[try Key(validating: "g\(group)")] = .object(children)
        }
        var batch = StoreBatch()
        batch.treeWrites = [.init(path: Sample.path("/big"), value: .object(groups))]
        try store.commit(batch)
        try store.close()

        let replica = try Replica.open(at: path)
        let stop = Counter()
        let reads = Counter()
        for reader in 0..<8 {
            Thread {
                while stop.value == 0 && !replica.isLoaded {
                    _ = replica.value(at: Sample.path("/big/g\(reader)/f1"))
                    reads.increment()
                }
            }.start()
        }
        let written = Counter()
        Thread {
            _ = try? replica.submit(path: Sample.path("/written"), kind: .set(.int(1)))
            written.increment()
        }.start()
        let loaded = await eventually(timeoutSeconds: 30) { replica.isLoaded }
        stop.increment()
        #expect(loaded, "the load did not end while readers kept reading (\(reads.value) reads)")
        #expect(await eventually { written.value == 1 }, "a write made during the load waits for it")
        #expect(replica.value(at: Sample.path("/big/g7/f9")) == .int(7_009))
        await replica.shutdown()
    }

    @Test func aGapInTheReplicasOwnOpsFailsTheLoadInsteadOfLeavingWritesShortOfDurable() async throws {
        // Found by damaging files at random: with its op 2 gone, the replica reopened, and every new write
        // waited for durability for ever (the durable frontier cannot pass a gap).
        let fixture = try ReplicaFixture(.sqlite)
        for value in 1...3 {
            try fixture.replica.submit(path: Sample.path("/a"), kind: .set(.int(Int64(value))))
        }
        try await fixture.replica.flush()
        let id = fixture.replica.replicaID
        await fixture.replica.shutdown()
        let queue = try DatabaseQueue(path: fixture.databasePath)
        try await queue.write { db in
            try db.execute(
                sql: "DELETE FROM op WHERE origin = ? AND sequence = 2", arguments: [Int64(bitPattern: id.rawValue)])
        }
        try queue.close()

        try await fixture.reopen()
        let error = await #expect(throws: WeftError.self) { try await fixture.replica.waitUntilLoaded() }
        #expect(error?.code == .storage)
        #expect(
            error?.message
                == "\(fixture.databasePath) is corrupt: its log holds this replica's ops up to 3, but op 2 is missing or "
                + "damaged; restore the file from a backup as a new file (see \"Identity\" in Docs/STORAGE.md), or move "
                + "it aside and start on a new one, which peers fill with what they hold")
        let write = #expect(throws: WeftError.self) {
            try fixture.replica.submit(path: Sample.path("/a"), kind: .set(.int(4)))
        }
        #expect(write?.code == .storage)
        await fixture.replica.shutdown()
        let store = try fixture.openStore()
        #expect(try store.allOps().map(\.op.sequence) == [1, 3], "the failed load changed nothing")
        try store.close()
        await fixture.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func aDamagedLogFailsTheLoadWithAClearError(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        try fixture.replica.submit(path: Sample.path("/a"), kind: .set(.int(1)))
        await fixture.replica.shutdown()
        let store = try fixture.openStore()
        let failing = FailingStore(store)
        let replica = try Replica.open(store: failing, options: fixture.options)
        let error = await #expect(throws: WeftError.self) { try await replica.waitUntilLoaded() }
        #expect(error?.code == .storage)
        #expect(error?.message.contains("is corrupt") == true)
        let write = #expect(throws: WeftError.self) { try replica.submit(path: Sample.path("/a"), kind: .set(.int(2))) }
        #expect(write?.code == .storage)
        await replica.shutdown()
        await fixture.finish()
    }
}

/// A store whose log reads fail as a damaged op would.
final class FailingStore: Store, @unchecked Sendable {
    let gated: GatedStore

    init(_ inner: any Store) { gated = GatedStore(inner) }

    var durability: Durability { gated.durability }
    var identity: StoreIdentity { gated.identity }
    var logMarks: LogMarks { gated.logMarks }
    func commit(_ batch: StoreBatch) throws { try gated.commit(batch) }
    func readTreeSlice(_ reader: inout TreeSliceReader, rowsMax: Int) throws {
        try gated.readTreeSlice(&reader, rowsMax: rowsMax)
    }
    func ops(from origin: ReplicaID, after sequence: UInt64, limit: Int) throws -> [StoredOp] {
        throw StoreError.corruptOp(stamp: nil, reason: "its key is not a 16-byte stamp")
    }
    func ops(after position: LogPosition?, limit: Int) throws -> [StoredOp] {
        throw StoreError.corruptOp(stamp: nil, reason: "its key is not a 16-byte stamp")
    }
    func allOps() throws -> [StoredOp] { try ops(after: nil, limit: 1) }
    func op(_ stamp: Stamp) throws -> StoredOp? { try gated.op(stamp) }
    func opCount() throws -> Int { try gated.opCount() }
    func readTree(at path: Path) throws -> Value { try gated.readTree(at: path) }
    func treeLeafCount() throws -> Int { try gated.treeLeafCount() }
    func readBase(at path: Path) throws -> Value { try gated.readBase(at: path) }
    func baseOverrides() throws -> [BaseOverride] { try gated.baseOverrides() }
    func peerVectors() throws -> [ReplicaID: VersionVector] { try gated.peerVectors() }
    func members() throws -> [ReplicaID] { try gated.members() }
    func compactedTouches() throws -> [CompactedTouch] { try gated.compactedTouches() }
    func queryIndexes() throws -> [StoredQueryIndex] { try gated.queryIndexes() }
    func queryIndexEntries(of id: Int64) throws -> [QueryIndexEntry] { try gated.queryIndexEntries(of: id) }
    func requireOriginal() throws { try gated.requireOriginal() }
    func reidentify(newID: ReplicaID) throws { try gated.reidentify(newID: newID) }
    func checkpoint() throws { try gated.checkpoint() }
    func vacuum() throws { try gated.vacuum() }
    func bytesOnDisk() throws -> Int { try gated.bytesOnDisk() }
    func close() throws { try gated.close() }
}
