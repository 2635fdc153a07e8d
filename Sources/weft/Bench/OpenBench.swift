import Foundation
@_spi(Engine) import Weft
import WeftCore
import WeftStore

/// `weft bench open`: a database of a million nodes, built once and cached in the temporary folder
/// (keyed by a format version), opened to the first read of a deep path and loaded whole; the
/// baselines are the store alone doing the same reads.
enum OpenBench {
    struct Options {
        var users = 100_000
        var fieldsPerUser = 10
    }

    /// Bump when the cached database must be built again (its schema or its content changed).
    static let formatVersion = 1

    static func run(_ options: Options, progress: BenchProgress) async throws -> [Measurement] {
        let path = try await cachedDatabase(options, progress: progress)
        let deep = try Path("/users/u\(options.users / 2 + 7)/f\(options.fieldsPerUser - 1)")
        let expected = Value.int(Int64((options.users / 2 + 7) * options.fieldsPerUser + options.fieldsPerUser - 1))

        progress.step("baseline: the store alone opens the file and reads \(deep), then the whole tree")
        var storeRead = Value.null
        let storeFirstRead = try measureSeconds {
            let store = try SQLiteStore(path: path)
            storeRead = try store.readTree(at: deep)
            try store.close()
        }
        var leaves = 0
        let storeFullRead = try measureSeconds {
            let store = try SQLiteStore(path: path)
            leaves = try store.readTree().nodeCount
            try store.close()
        }

        progress.step("replica: open, first read of \(deep), full load")
        var replicaRead = Value.null
        let start = ContinuousClock.now
        let replica = try Replica.open(at: path)
        replicaRead = replica.value(at: deep)
        let firstRead = seconds(since: start)
        let loadedEarly = replica.isLoaded
        try await replica.waitUntilLoaded()
        let fullLoad = seconds(since: start)
        let nodes = replica.snapshot().nodeCount
        await replica.shutdown()
        guard replicaRead == expected, storeRead == expected, nodes == leaves else {
            throw BenchError(
                "read \(replicaRead) and \(storeRead), loaded \(nodes) nodes of \(leaves); expected \(expected)")
        }
        progress.step("  \(nodes) nodes; the first read came \(loadedEarly ? "after" : "before") the load ended")
        return [
            Measurement(
                suite: "open", name: "open to first read of a deep path", value: firstRead * 1_000, unit: "ms",
                baseline: storeFirstRead * 1_000),
            Measurement(
                suite: "open", name: "open to full load", value: fullLoad * 1_000, unit: "ms",
                baseline: storeFullRead * 1_000),
            Measurement(suite: "open", name: "nodes loaded", value: Double(nodes), unit: "nodes"),
        ]
    }

    private static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// The cached database, built when missing: `users` objects of `fieldsPerUser` integer leaves, written
    /// by a replica, then compacted so that the file holds the tree and no log.
    private static func cachedDatabase(_ options: Options, progress: BenchProgress) async throws -> String {
        let nodes = options.users * (options.fieldsPerUser + 1) + 1
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("weft-bench-open-v\(formatVersion)-\(options.users)x\(options.fieldsPerUser)")
        let path = directory.appendingPathComponent("weft.sqlite").path
        let complete = directory.appendingPathComponent("complete")
        if FileManager.default.fileExists(atPath: complete.path) {
            progress.step("using the cached database of \(nodes) nodes in \(directory.path)")
            return path
        }
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        progress.step("building a database of \(nodes) nodes in \(directory.path) (once)")
        let replica = try Replica.open(at: path)
        var last: WriteReceipt?
        for user in 0..<options.users {
            let children = try (0..<options.fieldsPerUser).map { field in
                MergeChild(relative: try Path("f\(field)"), value: .int(Int64(user * options.fieldsPerUser + field)))
            }
            last = try replica.submit(path: try Path("/users/u\(user)"), kind: .merge(children), at: .now)
            if user % (options.users / 10) == 0 { progress.step("  \(user)/\(options.users) users") }
        }
        try await replica.flush()
        replica.markStable(through: try requireStamp(last))
        try await replica.compact()
        await replica.shutdown()
        guard FileManager.default.createFile(atPath: complete.path, contents: Data()) else {
            throw BenchError("cannot mark the cached database complete at \(complete.path)")
        }
        return path
    }
}
