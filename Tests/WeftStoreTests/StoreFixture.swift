import Foundation
import Testing
import WeftCore

@testable import WeftStore

/// The two stores every shared test body runs against.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case memory
    case sqlite

    var testDescription: String { rawValue }
}

/// A store of either kind in a fresh place, with a way to close and reopen it.
final class StoreFixture {
    let kind: StoreKind
    let directory: URL
    let replica: ReplicaID
    let durability: Durability
    private(set) var store: any Store

    var databasePath: String { directory.appendingPathComponent("weft.sqlite").path }

    init(_ kind: StoreKind, replica: UInt64 = 0xA11CE, durability: Durability = .normal) throws {
        self.kind = kind
        self.replica = try #require(ReplicaID(rawValue: replica))
        self.durability = durability
        directory = try TemporaryDirectory.make()
        switch kind {
        case .memory:
            store = MemoryStore(replica: self.replica, durability: durability)
        case .sqlite:
            let options = StoreOptions(durability: durability, replicaForNewDatabase: self.replica)
            store = try SQLiteStore(path: directory.appendingPathComponent("weft.sqlite").path, options: options)
        }
    }

    /// Closes the store and opens it again from what it stored.
    func reopen() throws {
        try store.close()
        switch kind {
        case .memory:
            let memory = try #require(store as? MemoryStore)
            memory.reopen()
        case .sqlite:
            store = try SQLiteStore(path: databasePath, options: StoreOptions(durability: durability))
        }
    }

    deinit {
        try? store.close()
        try? FileManager.default.removeItem(at: directory)
    }
}

enum TemporaryDirectory {
    /// A new empty directory under the system's temporary directory.
    static func make() throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("weft-store-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

/// Builders of test data.
enum Sample {
    static func replica(_ raw: UInt64) -> ReplicaID {
        guard let id = ReplicaID(rawValue: raw) else { preconditionFailure("test replica ids are not zero") }
        return id
    }

    static func path(_ text: String) -> Path {
        guard let path = try? Path(text) else { preconditionFailure("test paths are valid: \(text)") }
        return path
    }

    static func stamp(_ millis: UInt64, _ replica: UInt64, counter: UInt16 = 0) -> Stamp {
        Stamp(millis: millis, counter: counter, replica: self.replica(replica))
    }

    /// A set op of `origin`, stamped at `millis`.
    static func setOp(origin: UInt64, sequence: UInt64, millis: UInt64, path: String = "/a", value: Value = .int(1))
        -> Op
    {
        Op(stamp: stamp(millis, origin), sequence: sequence, path: self.path(path), kind: .set(value))
    }

    static func json(_ text: String) -> Value {
        guard let value = try? Value(json: text) else { preconditionFailure("test JSON is valid: \(text)") }
        return value
    }

    /// A batch holding only `ops`, as ours (with `status`) or another replica's (nil).
    static func batch(_ ops: [Op], status: OpStatus? = nil) -> StoreBatch {
        var batch = StoreBatch()
        batch.ops = ops.map { OpRecord($0, status: status) }
        return batch
    }

    static func treeBatch(_ writes: [(String, Value)]) -> StoreBatch {
        var batch = StoreBatch()
        batch.treeWrites = writes.map { StoreBatch.TreeWrite(path: path($0.0), value: $0.1) }
        return batch
    }
}
