import Foundation
import GRDB
import Testing
import WeftCore
import WeftStore

@_spi(Engine) @testable import Weft

/// Every file a replica refuses to open, with the error an app can match and a message it can show.
@Suite(.timeLimit(.minutes(5))) struct ReplicaOpenErrorTests {
    private func openError(_ path: String, options: ReplicaOptions = ReplicaOptions()) -> WeftError? {
        #expect(throws: WeftError.self) { try Replica.open(at: path, options: options) }
    }

    @Test func aFileThatIsNotADatabaseIsRefused() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("notes.txt").path
        try Data(String(repeating: "not a database\n", count: 400).utf8).write(to: URL(fileURLWithPath: path))
        let error = openError(path)
        #expect(error?.code == .notAWeftDatabase)
        #expect(
            error?.message
                == "\(path) is not a database file; give the path of a Weft database, or a new path to create one")
    }

    @Test func anotherApplicationsDatabaseIsRefusedAndLeftAlone() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("other.sqlite").path
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: "CREATE TABLE invoices (id INTEGER PRIMARY KEY)") }
        try queue.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let error = openError(path)
        #expect(error?.code == .notAWeftDatabase)
        #expect(error?.message.contains("is not a Weft database") == true)
        #expect(error?.message.contains("invoices") == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test func aHeaderThatAsksForReadOnlyAccessIsReportedAsDamagedNotAsAReadOnlyLocation() async throws {
        // SQLite opens a file read-only when the header's write version is above what it writes; the
        // location can be written, so the error must not send the user to check permissions.
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("weft.sqlite").path
        let replica = try Replica.open(at: path)
        try await #require(replica.root / "a").set(1)
        await replica.shutdown()
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try handle.seek(toOffset: 18)
        try handle.write(contentsOf: Data([3]))
        try handle.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: path))

        let error = openError(path)
        #expect(error?.code == .storage)
        #expect(error?.message.hasPrefix("\(path) is corrupt: its header asks for read-only access") == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test func aDatabaseFromANewerWeftIsRefused() async throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("weft.sqlite").path
        let replica = try Replica.open(at: path)
        try replica.submit(path: Sample.path("/a"), kind: .set(.int(1)))
        await replica.shutdown()
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in try db.execute(sql: "PRAGMA user_version = 99") }
        try queue.close()
        let error = openError(path)
        #expect(error?.code == .newerSchema)
        #expect(error?.message.contains("schema version 99") == true)
        #expect(error?.message.contains("upgrade Weft") == true)
    }

    @Test func aDatabaseOpenTwiceInOneProcessIsReported() async throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("weft.sqlite").path
        let replica = try Replica.open(at: path)
        let error = openError(path)
        #expect(error?.code == .databaseInUse)
        #expect(error?.message == "database \(path) is already open in this process; open it once and share it")
        await replica.shutdown()
        let again = try Replica.open(at: path)
        await again.shutdown()
    }

    /// A directory no file can be made in: a read-only one for a normal user; for root, whom permissions
    /// do not stop, `/sys`, which refuses new files to everyone.
    static let readOnlyDirectory: String? = {
        if getuid() != 0 {
            guard let directory = try? TemporaryDirectory.make() else { return nil }
            chmod(directory.path, 0o555)
            return directory.path
        }
        let probe = "/sys/weft-replica-probe"
        let descriptor = open(probe, O_RDWR | O_CREAT, 0o644)
        guard descriptor < 0 else {
            close(descriptor)
            unlink(probe)
            return nil
        }
        return errno == EACCES || errno == EROFS || errno == EPERM ? "/sys" : nil
    }()

    @Test(.enabled(if: readOnlyDirectory != nil, "no directory here refuses new files"))
    func aReadOnlyLocationIsReported() throws {
        let directory = try #require(Self.readOnlyDirectory)
        let path = directory + "/weft.sqlite"
        let error = openError(path)
        #expect(error?.code == .readOnly)
        #expect(error?.message.contains("read-only location") == true)
        if directory != "/sys" {
            chmod(directory, 0o755)
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    @Test func aMissingDirectoryIsAStorageError() {
        let error = openError("/nonexistent-weft-directory/deeper/weft.sqlite")
        #expect(error?.code == .storage)
        #expect(error?.message.contains("does not exist") == true)
    }

    @Test func aCopiedDatabaseIsRefusedOrGivenANewIdentity() async throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let original = directory.appendingPathComponent("weft.sqlite").path
        let copy = directory.appendingPathComponent("copy.sqlite").path
        let replica = try Replica.open(at: original)
        try replica.submit(path: Sample.path("/a"), kind: .set(.int(1)))
        let id = replica.replicaID
        await replica.shutdown()
        try FileManager.default.copyItem(atPath: original, toPath: copy)

        let error = openError(copy)
        #expect(error?.code == .copiedDatabase)
        #expect(error?.message.contains("copy of another replica's database") == true)
        #expect(error?.message.contains(".reidentify") == true)

        var options = ReplicaOptions()
        options.copiedDatabase = .reidentify
        let copied = try Replica.open(at: copy, options: options)
        #expect(copied.replicaID != id)
        #expect(copied.value(at: Sample.path("/a")) == .int(1))
        let write = try copied.submit(path: Sample.path("/b"), kind: .set(.int(2)))
        #expect(write.stamp.replica == copied.replicaID)
        #expect(copied.versionVector == VersionVector([id: 1, copied.replicaID: 1]))
        try await write.wait(for: .durable)
        await copied.shutdown()

        let originalAgain = try Replica.open(at: original)
        #expect(originalAgain.replicaID == id, "the original keeps its id")
        await originalAgain.shutdown()
    }

    @Test func aCopiedMemoryStoreIsRefusedToo() throws {
        let store = MemoryStore(replica: Sample.replica(42))
        let copy = store.copyFile()
        let error = #expect(throws: WeftError.self) { try Replica.open(store: copy) }
        #expect(error?.code == .copiedDatabase)
    }

    @Test func storeErrorsMapToCodesWithTheirMessages() {
        let cases: [(StoreError, WeftError.Code)] = [
            (.notADatabase(path: "/x"), .notAWeftDatabase),
            (.foreignDatabase(path: "/x", reason: "r"), .notAWeftDatabase),
            (.newerSchema(path: "/x", found: 3, supported: 1), .newerSchema),
            (.readOnlyLocation(path: "/x", reason: "r"), .readOnly), (.cannotOpen(path: "/x", reason: "r"), .storage),
            (.inUse(path: "/x", pid: 123), .databaseInUse), (.diskFull(path: "/x", operation: "o"), .diskFull),
            (.corrupt(path: "/x", reason: "r"), .storage), (.copiedDatabase(path: "/x", reason: "r"), .copiedDatabase),
            (.closed(path: "/x"), .shutDown), (.busy(path: "/x"), .databaseInUse),
            (.io(path: "/x", operation: "o", message: "m"), .storage),
        ]
        for (store, code) in cases {
            #expect(WeftError(store).code == code, "\(store)")
            #expect(WeftError(store).message == store.description || code == .databaseInUse)
        }
        #expect(
            WeftError(StoreError.inUse(path: "/x", pid: 123)).message
                == "database /x is in use by another process (pid 123); stop it, or open another file")
        #expect(WeftError.wrapping(CoreError.clockExhausted).code == .clockRefused)
    }
}
