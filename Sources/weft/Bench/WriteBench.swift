import Foundation
@_spi(Engine) import Weft
import WeftCore
import WeftStore

/// `weft bench write`: durable local writes through a replica with group commit, against plain SQLite
/// inserts of the same rows in the same run; one commit per op with `.full` durability next to the
/// fsync latency of the same disk; bytes per op on disk before and after compaction.
enum WriteBench {
    struct Options {
        var ops = 400_000
        var syncedOps = 300
        var seed: UInt64 = 1
    }

    /// The write of an app: scores of 10k users, 100 counters, and names of 50k items.
    static func appWrite(_ index: Int, using generator: inout SeededGenerator) -> (Path, OpKind) {
        switch generator.below(10) {
        case 0..<5:
            let user = generator.below(10_000)
            return (path(["users", "u\(user)", "score"]), .set(.int(Int64(index))))
        case 5..<8:
            return (path(["counters", "c\(generator.below(100))"]), .increment(by: .int(1), from: .int(0)))
        default:
            return (path(["items", "i\(generator.below(50_000))", "name"]), .set(.string("item \(index)")))
        }
    }

    static func path(_ keys: [String]) -> Path {
        guard let path = try? Path(keys: keys) else { preconditionFailure("bench keys are valid: \(keys)") }
        return path
    }

    static func run(_ options: Options, progress: BenchProgress) async throws -> [Measurement] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("weft-bench-write-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var measurements: [Measurement] = []
        for durability in [Durability.normal, .full] {
            measurements += try await groupCommit(options, durability: durability, in: directory, progress: progress)
        }
        measurements += try await commitPerOp(options, in: directory, progress: progress)
        return measurements
    }

    /// Durable writes with group commit, the plain-insert baseline, and bytes per op.
    private static func groupCommit(
        _ options: Options, durability: Durability, in directory: URL, progress: BenchProgress
    ) async throws -> [Measurement] {
        let name = "group commit (\(durability))"
        progress.step("\(name): \(options.ops) writes")
        var replicaOptions = ReplicaOptions()
        replicaOptions.durability = durability
        let path = directory.appendingPathComponent("weft-\(durability).sqlite").path
        let replica = try Replica.open(at: path, options: replicaOptions)
        try await replica.waitUntilLoaded()
        var generator = SeededGenerator(seed: options.seed)
        var last: WriteReceipt?
        let seconds = try await measureSecondsAsync {
            for index in 0..<options.ops {
                let (path, kind) = appWrite(index, using: &generator)
                last = try replica.submit(path: path, kind: kind, at: .now)
            }
            try await replica.flush()
        }
        let statistics = replica.statistics
        let perCommit = max(1, statistics.opsCommitted / max(1, statistics.commits))
        progress.step("  \(statistics.commits) commits, \(perCommit) ops each on average")

        progress.step("\(name): plain SQLite inserts of the same rows, \(perCommit) ops per transaction")
        let chunks = try baselineChunks(replica, seed: options.seed, count: options.ops, perCommit: perCommit)
        let baseline = try SQLiteBaseline(
            path: directory.appendingPathComponent("baseline-\(durability).sqlite").path,
            synchronousFull: durability == .full)
        let baselineSeconds = try baseline.insert(chunks)
        try baseline.close()

        let bytesBefore = try replica.bytesOnDisk()
        progress.step("\(name): compaction")
        replica.markStable(through: try requireStamp(last))
        let report = try await replica.compact()
        await replica.shutdown()
        let count = Double(options.ops)
        let rate = count / seconds
        let baselineRate = count / baselineSeconds
        return [
            Measurement(
                suite: "write", name: "durable ops/s, \(name)", value: rate, unit: "ops/s", baseline: baselineRate),
            Measurement(
                suite: "write", name: "plain SQLite inserts ops/s (\(durability))", value: baselineRate, unit: "ops/s"),
            Measurement(
                suite: "write", name: "slowdown vs plain inserts (\(durability))", value: baselineRate / rate, unit: "×"
            ),
            Measurement(suite: "write", name: "ops per commit (\(durability))", value: Double(perCommit), unit: "ops"),
            Measurement(
                suite: "write", name: "bytes per op before compaction (\(durability))",
                value: Double(bytesBefore) / count, unit: "B"),
            Measurement(
                suite: "write", name: "bytes per op after compaction (\(durability))",
                value: Double(report.bytesAfter) / count, unit: "B"),
        ]
    }

    /// The op rows and leaf rows of the run, cut into transactions of `perCommit` ops; leaf rows are
    /// written once per transaction, with their last value, as group commit writes them.
    private static func baselineChunks(_ replica: Replica, seed: UInt64, count: Int, perCommit: Int) throws
        -> [SQLiteBaseline.Chunk]
    {
        var ops: [Op] = []
        while ops.count < count {
            let page = replica.ops(from: replica.replicaID, after: UInt64(ops.count), limit: StoreLimits.opsPerQueryMax)
            guard !page.isEmpty else { break }
            ops += page
        }
        var counters: [Path: Int64] = [:]
        var chunks: [SQLiteBaseline.Chunk] = []
        var start = 0
        while start < ops.count {
            var chunk = SQLiteBaseline.Chunk()
            var leaves: [String: [UInt8]] = [:]
            var order: [String] = []
            for op in ops[start..<min(ops.count, start + perCommit)] {
                let body = OpCodec.encode(op)
                chunk.ops.append((Array(body[1..<17]), op.origin.rawValue, op.sequence, body))
                let value: Value
                switch op.kind {
                case .set(let newValue): value = newValue
                case .increment:
                    counters[op.path, default: 0] += 1
                    value = .int(counters[op.path, default: 0])
                default: continue
                }
                let text = op.path.description
                if leaves.updateValue(OpCodec.encode(value), forKey: text) == nil { order.append(text) }
            }
            chunk.leaves = order.compactMap { text in leaves[text].map { (text, $0) } }
            chunks.append(chunk)
            start += perCommit
        }
        return chunks
    }

    /// One commit per op with `.full` durability, next to the fsync latency of the same directory.
    private static func commitPerOp(_ options: Options, in directory: URL, progress: BenchProgress) async throws
        -> [Measurement]
    {
        progress.step("one commit per op (full): \(options.syncedOps) writes, each waited for")
        var replicaOptions = ReplicaOptions()
        replicaOptions.durability = .full
        replicaOptions.groupCommitDelayMilliseconds = 0
        let replica = try Replica.open(
            at: directory.appendingPathComponent("weft-synced.sqlite").path, options: replicaOptions)
        try await replica.waitUntilLoaded()
        var generator = SeededGenerator(seed: options.seed)
        let seconds = try await measureSecondsAsync {
            for index in 0..<options.syncedOps {
                let (path, kind) = appWrite(index, using: &generator)
                try await replica.submit(path: path, kind: kind, at: .now).wait(for: .durable)
            }
        }
        let commits = replica.statistics.commits
        await replica.shutdown()

        progress.step("fsync latency: \(options.syncedOps) writes of 4 KiB, each fsynced")
        let fsyncSeconds = try fsyncLatency(
            directory.appendingPathComponent("fsync-probe").path, count: options.syncedOps)
        let count = Double(options.syncedOps)
        return [
            Measurement(
                suite: "write", name: "commits/s, one per op (full)", value: count / seconds, unit: "commits/s",
                baseline: count / fsyncSeconds),
            Measurement(
                suite: "write", name: "latency per durable op (full)", value: seconds / count * 1_000, unit: "ms",
                baseline: fsyncSeconds / count * 1_000),
            Measurement(suite: "write", name: "commits for one-per-op writes", value: Double(commits), unit: "commits"),
        ]
    }

    /// Seconds taken by `count` writes of 4 KiB at the end of a file, each followed by fsync.
    private static func fsyncLatency(_ path: String, count: Int) throws -> Double {
        let descriptor = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o644)
        guard descriptor >= 0 else { throw BenchError("cannot create \(path): errno \(errno)") }
        defer {
            close(descriptor)
            unlink(path)
        }
        let block = [UInt8](repeating: 0x5A, count: 4_096)
        return try measureSeconds {
            for _ in 0..<count {
                let written = block.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                guard written == block.count, fsync(descriptor) == 0 else { throw BenchError("write or fsync failed") }
            }
        }
    }
}

/// A benchmark that could not run.
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The stamp of a receipt the bench made.
func requireStamp(_ receipt: WriteReceipt?) throws -> Stamp {
    guard let receipt else { throw BenchError("the bench wrote nothing") }
    return receipt.stamp
}

/// Seconds taken by an async `body`.
func measureSecondsAsync(_ body: () async throws -> Void) async rethrows -> Double {
    let start = ContinuousClock.now
    try await body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}
