import Foundation
import Testing
import WeftCore
import WeftStore

@_spi(Engine) @testable import Weft

/// The two kinds of replica every shared test body runs against.
enum ReplicaKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case memory
    case sqlite

    var testDescription: String { rawValue }
}

/// A wall clock that tests set by hand.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var millis: UInt64

    init(millis: UInt64 = 1_700_000_000_000) { self.millis = millis }

    var now: UInt64 {
        get { lock.withLock { millis } }
        set { lock.withLock { millis = newValue } }
    }

    func advance(by step: UInt64) { lock.withLock { millis += step } }
}

/// Random bits from a seed, for replica ids that tests can predict.
final class TestRandom: @unchecked Sendable {
    private let lock = NSLock()
    private var generator: SeededGenerator

    init(seed: UInt64) { generator = SeededGenerator(seed: seed) }

    func next() -> UInt64 { lock.withLock { generator.next() } }
}

/// A replica of either kind in a fresh place, with a test clock, and a way to shut it down and open
/// it again from what it stored. Call ``finish()`` at the end of a test.
final class ReplicaFixture: @unchecked Sendable {
    let kind: ReplicaKind
    let directory: URL
    let clock: TestClock
    var options: ReplicaOptions
    private(set) var replica: Replica
    /// The store of a memory replica, kept across reopenings (the simulated file).
    private(set) var memoryStore: MemoryStore?

    var databasePath: String { directory.appendingPathComponent("weft.sqlite").path }

    init(_ kind: ReplicaKind, seed: UInt64 = 7, configure: (inout ReplicaOptions) -> Void = { _ in }) throws {
        self.kind = kind
        directory = try TemporaryDirectory.make()
        let clock = TestClock()
        self.clock = clock
        let random = TestRandom(seed: seed)
        var options = ReplicaOptions()
        options.wallClockMillis = { clock.now }
        options.randomBits = { random.next() }
        options.functions = Workload.registry
        configure(&options)
        self.options = options
        switch kind {
        case .memory:
            let store = MemoryStore(
                replica: Replica.newReplicaID(options), durability: options.durability,
                bytesMax: options.databaseBytesMax)
            memoryStore = store
            replica = try Replica.open(store: store, options: options)
        case .sqlite:
            replica = try Replica.open(at: directory.appendingPathComponent("weft.sqlite").path, options: options)
        }
    }

    /// Shuts the replica down and opens it again from what it stored.
    func reopen() async throws {
        await replica.shutdown()
        replica = try open()
    }

    /// A new replica over what the fixture's replica stored (after its shutdown).
    func open() throws -> Replica {
        switch kind {
        case .memory:
            let store = try #require(memoryStore)
            store.reopen()
            return try Replica.open(store: store, options: options)
        case .sqlite:
            return try Replica.open(at: databasePath, options: options)
        }
    }

    /// Opens the stored data as a bare store, after the replica's shutdown; the caller closes it.
    func openStore() throws -> any Store {
        switch kind {
        case .memory:
            let store = try #require(memoryStore)
            store.reopen()
            return store
        case .sqlite:
            return try SQLiteStore(path: databasePath)
        }
    }

    /// Shuts the replica down and removes its files.
    func finish() async {
        await replica.shutdown()
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }
}

enum TemporaryDirectory {
    /// A new empty directory under the system's temporary directory.
    static func make() throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("weft-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

/// Builders of test data.
enum Sample {
    static func path(_ text: String) -> Path {
        guard let path = try? Path(text) else { preconditionFailure("test paths are valid: \(text)") }
        return path
    }

    static func json(_ text: String) -> Value {
        guard let value = try? Value(json: text) else { preconditionFailure("test JSON is valid: \(text)") }
        return value
    }

    static func replica(_ raw: UInt64) -> ReplicaID {
        guard let id = ReplicaID(rawValue: raw) else { preconditionFailure("test replica ids are not zero") }
        return id
    }

    /// An op of another replica.
    static func remote(
        _ origin: UInt64, sequence: UInt64, millis: UInt64, path: String, _ kind: OpKind, counter: UInt16 = 0
    ) -> Op {
        Op(
            stamp: Stamp(millis: millis, counter: counter, replica: replica(origin)), sequence: sequence,
            path: self.path(path), kind: kind)
    }

    /// The fold of a stored log on its stored base: what the stored tree must be.
    static func foldOfStore(_ store: any Store) throws -> Value {
        let ops = try store.allOps().map(\.op)
        return ReferenceFold.fold(ops, base: try store.readBase(at: .root), registry: Workload.registry).state
    }
}

// `eventually(timeoutSeconds:_:)` lives in TestSupport.swift (one definition for the whole target).
