import Foundation
import GRDB
import Testing
import WeftCore

@testable import WeftStore

/// The touches of compacted ops: kept per (path, origin) with the greatest sequence, committed with
/// the compaction that folds them, and read back after a reopen. Run against both stores.
@Suite struct StoreCompactedTouchTests {
    private static func touch(_ path: String, _ origin: UInt64, _ sequence: UInt64) -> CompactedTouch {
        CompactedTouch(path: Sample.path(path), origin: Sample.replica(origin), sequence: sequence)
    }

    /// A compaction batch over ops 1…`count` of origin 4 that records `touches`.
    private static func compaction(of ops: [Op], through index: Int, touches: [CompactedTouch]) -> StoreBatch {
        var batch = StoreBatch()
        batch.frontier = ops[index].stamp
        batch.compactedTouches = touches
        return batch
    }

    @Test(arguments: StoreKind.allCases)
    func touchesRoundTripThroughAReopenSortedByPathThenOrigin(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        #expect(try fixture.store.compactedTouches().isEmpty)
        let ops = (1...6 as ClosedRange<UInt64>).map { Sample.setOp(origin: 4, sequence: $0, millis: 100 * $0) }
        try fixture.store.commit(Sample.batch(ops))
        let touches = [Self.touch("/b/c", 4, 3), Self.touch("/a", 9, 2), Self.touch("/a", 4, 1), Self.touch("/", 7, 5)]
        try fixture.store.commit(Self.compaction(of: ops, through: 2, touches: touches))
        let expected = [
            Self.touch("/", 7, 5), Self.touch("/a", 4, 1), Self.touch("/a", 9, 2), Self.touch("/b/c", 4, 3),
        ]
        #expect(try fixture.store.compactedTouches() == expected)
        try fixture.reopen()
        #expect(try fixture.store.compactedTouches() == expected)
        #expect(try fixture.store.opCount() == 3)
    }

    @Test(arguments: StoreKind.allCases)
    func aLaterCompactionKeepsTheGreaterSequenceOfEachPathAndOrigin(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        let ops = (1...6 as ClosedRange<UInt64>).map { Sample.setOp(origin: 4, sequence: $0, millis: 100 * $0) }
        try fixture.store.commit(Sample.batch(ops))
        try fixture.store.commit(
            Self.compaction(of: ops, through: 1, touches: [Self.touch("/a", 4, 2), Self.touch("/x", 5, 9)]))
        try fixture.store.commit(
            Self.compaction(of: ops, through: 3, touches: [Self.touch("/a", 4, 4), Self.touch("/x", 5, 3)]))
        // Sequences at and above 2^63 are stored as negative integers; unsigned order still holds.
        let huge = UInt64(Int64.max) + 2
        try fixture.store.commit(
            Self.compaction(of: ops, through: 4, touches: [Self.touch("/h", 4, huge), Self.touch("/x", 5, 10)]))
        try fixture.store.commit(Self.compaction(of: ops, through: 5, touches: [Self.touch("/h", 4, 7)]))
        try fixture.reopen()
        #expect(
            try fixture.store.compactedTouches() == [
                Self.touch("/a", 4, 4), Self.touch("/h", 4, huge), Self.touch("/x", 5, 10),
            ])
    }

    @Test func touchesArePartOfTheCompactionsCommitWhenTheMemoryDiskCrashes() throws {
        let store = MemoryStore(replica: Sample.replica(1), durability: .normal)
        let ops = (1...4 as ClosedRange<UInt64>).map { Sample.setOp(origin: 4, sequence: $0, millis: 100 * $0) }
        try store.commit(Sample.batch(ops))
        try store.checkpoint()
        try store.commit(Self.compaction(of: ops, through: 1, touches: [Self.touch("/a", 4, 2)]))
        try store.commit(Self.compaction(of: ops, through: 2, touches: [Self.touch("/a", 4, 3)]))

        // The disk kept the first compaction only: its frontier and its touches, not the second's.
        #expect(store.crash(keepingUnsyncedCommits: 1) == 1)
        #expect(store.logMarks.frontier == ops[1].stamp)
        #expect(try store.compactedTouches() == [Self.touch("/a", 4, 2)])
        #expect(try store.opCount() == 2)

        // Lost entirely: neither the frontier nor the touches.
        try store.commit(Self.compaction(of: ops, through: 3, touches: [Self.touch("/b", 4, 4)]))
        #expect(store.crash() == 1)
        #expect(store.logMarks.frontier == ops[1].stamp)
        #expect(try store.compactedTouches() == [Self.touch("/a", 4, 2)])
    }

    /// A touch row whose path is not a canonical path (written around the store) makes the read fail
    /// with `corrupt`, naming the text, whatever the rows before it shared with it.
    @Test(arguments: ["/a//b", "/a/", "a/b", "/a/../b", "/a.b"])
    func aDamagedTouchPathIsReportedAsCorrupt(text: String) throws {
        let fixture = try StoreFixture(.sqlite)
        let ops = (1...3 as ClosedRange<UInt64>).map { Sample.setOp(origin: 4, sequence: $0, millis: 100 * $0) }
        try fixture.store.commit(Sample.batch(ops))
        try fixture.store.commit(Self.compaction(of: ops, through: 1, touches: [Self.touch("/a", 4, 1)]))
        try fixture.store.close()
        let queue = try DatabaseQueue(path: fixture.databasePath)
        try queue.write { db in
            try db.execute(
                sql: "INSERT INTO compacted_touch (path, origin, sequence) VALUES (?, 4, 2)", arguments: [text])
        }
        try queue.close()
        try fixture.reopen()
        let error = #expect(throws: StoreError.self) { try fixture.store.compactedTouches() }
        guard case .corrupt(_, let reason) = error else {
            Issue.record("expected corrupt, got \(String(describing: error))")
            return
        }
        #expect(reason.contains(text.debugDescription), "\(reason)")
    }

    @Test func aRefusedCompactionStoresNoTouch() throws {
        let store = MemoryStore(replica: Sample.replica(1), durability: .full, bytesMax: 4_096)
        var batch = StoreBatch()
        batch.compactedTouches = [Self.touch("/a", 4, 2)]
        batch.treeWrites = [.init(path: Sample.path("/big"), value: .string(String(repeating: "x", count: 8_192)))]
        #expect(throws: StoreError.diskFull(path: "memory", operation: "committing a batch")) {
            try store.commit(batch)
        }
        #expect(try store.compactedTouches().isEmpty)
    }
}

/// A database made by the previous schema version opens, migrates, and keeps what it held.
@Suite struct SQLiteStoreMigrationTests {
    /// Turns a current database back into the v1 schema: v2 added the table of touches, v3 keyed the
    /// op log by origin and sequence instead of by stamp, v4 added the query index tables, v5 the subscriptions.
    private static func downgradeToVersion1(_ path: String) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in
            try db.execute(
                sql: """
                    CREATE TABLE op_v1 (
                        stamp BLOB NOT NULL PRIMARY KEY,
                        origin INTEGER NOT NULL,
                        sequence INTEGER NOT NULL,
                        status INTEGER,
                        body BLOB NOT NULL
                    ) WITHOUT ROWID;
                    INSERT INTO op_v1 SELECT stamp, origin, sequence, status, body FROM op;
                    DROP TABLE op;
                    ALTER TABLE op_v1 RENAME TO op;
                    CREATE UNIQUE INDEX op_by_origin ON op (origin, sequence);
                    DROP TABLE compacted_touch;
                    DROP TABLE query_index;
                    DROP TABLE query_index_entry;
                    DROP TABLE subscription;
                    DELETE FROM grdb_migrations WHERE identifier IN ('v2', 'v3', 'v4', 'v5');
                    PRAGMA user_version = 1;
                    """)
        }
        try queue.close()
    }

    @Test func aVersion1DatabaseMigratesAndKeepsItsData() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("weft.sqlite").path
        let replica = Sample.replica(0xB0B)
        let ops = (1...5 as ClosedRange<UInt64>).map { Sample.setOp(origin: 0xB0B, sequence: $0, millis: 100 * $0) }
        let peer = Sample.replica(0xCAFE)
        do {
            let store = try SQLiteStore(path: path, options: StoreOptions(replicaForNewDatabase: replica))
            var batch = Sample.batch(ops, status: .durable)
            batch.treeWrites = [.init(path: Sample.path("/a"), value: Sample.json(#"{"b":1,"c":"two"}"#))]
            batch.peerVectors = [peer: VersionVector([peer: 7])]
            batch.members = [replica, peer]
            batch.clockTime = 500 << 16
            try store.commit(batch)
            var compaction = StoreBatch()
            compaction.frontier = ops[1].stamp
            try store.commit(compaction)
            try store.close()
        }
        try Self.downgradeToVersion1(path)
        let version = try DatabaseQueue(path: path).read { db in try Int.fetchOne(db, sql: "PRAGMA user_version") }
        #expect(version == 1)

        let store = try SQLiteStore(path: path)
        defer { try? store.close() }
        #expect(store.identity.replica == replica)
        #expect(store.identity.schemaVersion == SQLiteSchema.version)
        #expect(store.identity.clockTime == 500 << 16)
        #expect(store.logMarks.frontier == ops[1].stamp)
        #expect(try store.allOps().map(\.op) == Array(ops[2...]))
        #expect(try store.ops(from: replica, after: 3, limit: 10).map(\.op) == Array(ops[3...]))
        #expect(try store.readTree() == Sample.json(#"{"a":{"b":1,"c":"two"}}"#))
        #expect(try store.peerVectors() == [peer: VersionVector([peer: 7])])
        #expect(try store.members() == [replica, peer].sorted())
        // The ops v1 compacted left no touches; new compactions record theirs.
        #expect(try store.compactedTouches().isEmpty)
        var compaction = StoreBatch()
        compaction.frontier = ops[3].stamp
        compaction.compactedTouches = [CompactedTouch(path: Sample.path("/a"), origin: replica, sequence: 4)]
        try store.commit(compaction)
        #expect(try store.compactedTouches() == compaction.compactedTouches)
    }
}
