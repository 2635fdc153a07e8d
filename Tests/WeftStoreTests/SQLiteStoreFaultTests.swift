import Foundation
import GRDB
import Testing
import WeftCore
import WeftTestSupport

@testable import WeftStore

#if canImport(Glibc)
    import Glibc
#endif

/// Faults met while a database is in use: other processes, a full disk, damaged rows.
@Suite struct SQLiteStoreFaultTests {
    private static let flockTool = "/usr/bin/flock"
    private static let sqliteTool = "/usr/bin/sqlite3"

    /// True when some other open file description holds an exclusive flock on `path`.
    private static func isLocked(_ path: String) -> Bool {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { return errno == EWOULDBLOCK }
        flock(descriptor, LOCK_UN)
        return false
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: flockTool), "flock(1) is not installed"))
    func aLockHeldByAnotherProcessNamesItsPid() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("weft.sqlite").path
        let lockPath = path + ".lock"
        // The shell writes its pid, then becomes flock(1), which holds the lock for two seconds.
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/sh")
        child.arguments = ["-c", "echo $$ > \"$0\"; exec \(Self.flockTool) -o \"$0\" sleep 2", lockPath]
        try ChildProcess.start(child)
        let deadline = Date().addingTimeInterval(5)
        while !Self.isLocked(lockPath), Date() < deadline { usleep(10_000) }
        #expect(Self.isLocked(lockPath), "the child never took the lock")

        let error = #expect(throws: StoreError.self) { try SQLiteStore(path: path) }
        #expect(error == .inUse(path: path, pid: child.processIdentifier))
        #expect(error?.description.contains("in use by another process (pid \(child.processIdentifier))") == true)

        child.waitUntilExit()
        let store = try SQLiteStore(path: path)
        try store.close()
    }

    /// Runs `sql` on the database at `path` with the sqlite3 tool, which ignores the lock file; its exit status.
    private static func sqliteToolStatus(_ path: String, _ sql: String) throws -> Int32 {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: sqliteTool)
        child.arguments = [path, sql]
        child.standardError = Pipe()
        try ChildProcess.start(child)
        child.waitUntilExit()
        return child.terminationStatus
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: sqliteTool), "sqlite3 is not installed"))
    func anotherProcessIgnoringTheLockFileStillCannotWrite() throws {
        let fixture = try StoreFixture(.sqlite)
        try fixture.store.commit(Sample.treeBatch([("/a", .int(1))]))
        #expect(try Self.sqliteToolStatus(fixture.databasePath, "DELETE FROM node;") != 0)
        #expect(try fixture.store.readTree() == Sample.json(#"{"a":1}"#))
    }

    /// A file already in WAL mode was read once by GRDB's open before the store asked for exclusive
    /// locking: SQLite then kept a shared-memory index (a `-shm` file) and let other processes in (a
    /// second daemon opening the file through a symbolic link wrote beside the first).
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: sqliteTool), "sqlite3 is not installed"))
    func aReopenedDatabaseIsStillExclusiveAndHasNoSharedMemoryFile() throws {
        let fixture = try StoreFixture(.sqlite)
        try fixture.store.commit(Sample.treeBatch([("/a", .int(1))]))
        try fixture.reopen()
        // Before the store writes again: a reader let in now would share the file with it.
        #expect(try Self.sqliteToolStatus(fixture.databasePath, "SELECT count(*) FROM node;") != 0)
        try fixture.store.commit(Sample.treeBatch([("/b", .int(2))]))
        #expect(!FileManager.default.fileExists(atPath: fixture.databasePath + "-shm"))
        #expect(try Self.sqliteToolStatus(fixture.databasePath, "DELETE FROM node;") != 0)
        #expect(try fixture.store.readTree() == Sample.json(#"{"a":1,"b":2}"#))
        try fixture.reopen()
        #expect(try fixture.store.readTree() == Sample.json(#"{"a":1,"b":2}"#))
    }

    @Test func aFullDiskRollsTheCommitBackAndKeepsTheStoreUsable() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("weft.sqlite").path
        let store = try SQLiteStore(path: path, options: StoreOptions(pageCountMax: 40))
        defer { try? store.close() }
        let payload = Value.string(String(repeating: "z", count: 2_000))
        var sequence: UInt64 = 0
        var refused: StoreError?
        while refused == nil, sequence < 1_000 {
            sequence += 1
            var batch = Sample.batch([Sample.setOp(origin: 5, sequence: sequence, millis: sequence, value: payload)])
            batch.treeWrites = [.init(path: Sample.path("/last"), value: .int(Int64(sequence)))]
            do {
                try store.commit(batch)
            } catch let error as StoreError {
                refused = error
            }
        }
        #expect(refused == .diskFull(path: path, operation: "committing a batch"))
        #expect(try store.opCount() == Int(sequence) - 1)
        #expect(try store.readTree() == .object(["last": .int(Int64(sequence) - 1)]))
        #expect(try store.allOps().map(\.op.sequence) == Array(1..<sequence))

        // Compaction frees pages, and writing works again.
        var compact = StoreBatch()
        compact.frontier = Sample.stamp(sequence - 1, 5)
        try store.commit(compact)
        try store.commit(Sample.batch([Sample.setOp(origin: 5, sequence: sequence, millis: sequence, value: payload)]))
        #expect(try store.opCount() == 1)
    }

    /// SQLite goes on writing to a file that was deleted or replaced under it: commits returned as if
    /// durable, and a daemon stopped cleanly, with every write gone from the path it reopened.
    @Test(arguments: [false, true])
    func aCommitAfterTheFileWasDeletedOrReplacedFails(replaced: Bool) throws {
        let fixture = try StoreFixture(.sqlite)
        try fixture.store.commit(Sample.treeBatch([("/a", .int(1))]))
        let path = fixture.databasePath
        try FileManager.default.removeItem(atPath: path)
        if replaced { try Data(repeating: 0, count: 4_096).write(to: URL(fileURLWithPath: path)) }
        let error = #expect(throws: StoreError.self) { try fixture.store.commit(Sample.treeBatch([("/b", .int(2))])) }
        guard case .io(path, _, let message) = error else {
            Issue.record("expected an I/O error naming the file, got \(String(describing: error))")
            return
        }
        #expect(message.contains("deleted or replaced"))
    }

    /// A `-wal` file deleted under an open store (taken for a log to clean up) lost, at the next crash,
    /// every commit since the last checkpoint, those before the deletion included, all reported durable.
    /// Refused at once, the store's close still checkpoints the log it holds open into the database.
    @Test func aCommitAfterTheWriteAheadLogWasDeletedFailsAndTheCloseKeepsWhatWasCommitted() throws {
        let fixture = try StoreFixture(.sqlite)
        try fixture.store.commit(Sample.treeBatch([("/a", .int(1))]))
        try FileManager.default.removeItem(atPath: fixture.databasePath + "-wal")
        let error = #expect(throws: StoreError.self) { try fixture.store.commit(Sample.treeBatch([("/b", .int(2))])) }
        guard case .io(fixture.databasePath, _, let message) = error else {
            Issue.record("expected an I/O error naming the file, got \(String(describing: error))")
            return
        }
        #expect(message.contains("-wal"))
        try fixture.reopen()
        #expect(try fixture.store.readTree() == Sample.json(#"{"a":1}"#))
    }

    /// Closes the fixture's store, changes its file with `sql`, and reopens it.
    private func damage(_ fixture: StoreFixture, _ sql: String) throws {
        try fixture.store.close()
        let queue = try DatabaseQueue(path: fixture.databasePath)
        try queue.write { db in try db.execute(sql: sql) }
        try queue.close()
        try fixture.reopen()
    }

    @Test func aCorruptOpBlobIsReportedWithItsStampAndHarmsNothingElse() throws {
        let fixture = try StoreFixture(.sqlite)
        let ops = (1...3 as ClosedRange<UInt64>).map { Sample.setOp(origin: 9, sequence: $0, millis: $0) }
        try fixture.store.commit(Sample.batch(ops))
        let key = StampKey.bytes(ops[1].stamp).map { String(format: "%02x", $0) }.joined()
        try damage(fixture, "UPDATE op SET body = x'01ff00' WHERE stamp = x'\(key)'")

        let error = #expect(throws: StoreError.self) { try fixture.store.allOps() }
        guard case .corruptOp(let stamp, let reason) = error else {
            Issue.record("expected corruptOp, got \(String(describing: error))")
            return
        }
        #expect(stamp == ops[1].stamp)
        #expect(!reason.isEmpty)
        #expect(error?.description.contains(ops[1].stamp.text) == true)
        #expect(try fixture.store.ops(from: Sample.replica(9), after: 2, limit: 10).map(\.op) == [ops[2]])
        #expect(try fixture.store.opCount() == 3)
    }

    @Test func anOpBlobUnderAnotherStampIsCorrupt() throws {
        let fixture = try StoreFixture(.sqlite)
        let ops = (1...2 as ClosedRange<UInt64>).map { Sample.setOp(origin: 9, sequence: $0, millis: $0) }
        try fixture.store.commit(Sample.batch(ops))
        let key = StampKey.bytes(ops[0].stamp).map { String(format: "%02x", $0) }.joined()
        let other = OpCodec.encode(ops[1]).map { String(format: "%02x", $0) }.joined()
        try damage(fixture, "UPDATE op SET body = x'\(other)' WHERE stamp = x'\(key)'")
        #expect(throws: StoreError.corruptOp(stamp: ops[0].stamp, reason: "its body holds op \(ops[1].stamp.text)")) {
            try fixture.store.op(ops[0].stamp)
        }
    }

    @Test func anOpFiledUnderAnotherSequenceIsCorrupt() throws {
        // A damaged key would leave a gap in its origin's sequence, which no later op could fill.
        let fixture = try StoreFixture(.sqlite)
        let ops = (1...3 as ClosedRange<UInt64>).map { Sample.setOp(origin: 9, sequence: $0, millis: $0) }
        try fixture.store.commit(Sample.batch(ops))
        try damage(fixture, "UPDATE op SET sequence = 7 WHERE sequence = 2")
        let origin = ops[1].origin
        let reason = "its body says op 2 of replica \(origin), but it is filed as op 7 of replica \(origin)"
        #expect(throws: StoreError.corruptOp(stamp: ops[1].stamp, reason: reason)) { try fixture.store.allOps() }
        #expect(throws: StoreError.corruptOp(stamp: ops[1].stamp, reason: reason)) {
            try fixture.store.op(ops[1].stamp)
        }
        #expect(try fixture.store.ops(from: origin, after: 0, limit: 1).map(\.op) == [ops[0]])
    }

    @Test func treeRowsThatCannotFormATreeAreReportedAsCorrupt() throws {
        let fixture = try StoreFixture(.sqlite)
        try fixture.store.commit(Sample.treeBatch([("/a", .int(1)), ("/b", .int(2))]))
        // A leaf below the scalar /a.
        try damage(fixture, "INSERT INTO node (path, value) VALUES ('/a/x', x'0302')")
        #expect(throws: StoreError.self) { try fixture.store.readTree() }
        #expect(try fixture.store.readTree(at: Sample.path("/b")) == .int(2))
        // A value that is not an encoded scalar.
        try damage(fixture, "UPDATE node SET value = x'ff' WHERE path = '/b'")
        #expect(throws: StoreError.self) { try fixture.store.readTree(at: Sample.path("/b")) }
    }

    @Test(arguments: [Durability.normal, .full])
    func theConnectionUsesWALExclusivelyWithTheChosenDurability(durability: Durability) throws {
        let fixture = try StoreFixture(.sqlite, durability: durability)
        let store = try #require(fixture.store as? SQLiteStore)
        let (journal, synchronous, locking, application, page) = try store.withDatabase("reading pragmas") { db in
            (
                try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA synchronous"),
                try String.fetchOne(db, sql: "PRAGMA locking_mode"),
                try Int32.fetchOne(db, sql: "PRAGMA application_id"),
                try Int.fetchOne(db, sql: "PRAGMA page_size")
            )
        }
        #expect(page == StoreLimits.pageBytes)
        #expect(journal == "wal")
        #expect(synchronous == (durability == .full ? 2 : 1))
        #expect(locking == "exclusive")
        #expect(application == SQLiteSchema.applicationID)
    }
}
