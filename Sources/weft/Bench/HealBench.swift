import Foundation
import Logging
@_spi(Engine) import Weft
import WeftCore
import WeftSync

/// `weft bench heal`: replicas that wrote apart (shared counters incremented everywhere, sets and merges
/// on shared and own paths), then all connect to one hub and heal, in one process, over loopback TCP,
/// every replica a SQLite file.
///
/// The figure is the time from the first dial to equal digests everywhere; the baseline is the time one
/// replica takes to merge the same ops, durably, with no network (what each leaf does at the least).
/// Every counter is checked on every replica against the exact sum of the increments made.
enum HealBench {
    struct Options {
        var replicas = 10
        var opsPerReplica = 10_000
        var counters = 16
        var seed: UInt64 = 1
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Most time the heal may take before the benchmark gives up.
    static let healSecondsMax = 300.0

    static func run(_ options: Options, progress: BenchProgress) async throws -> [Measurement] {
        let folder = NSTemporaryDirectory() + "weft-bench-heal-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let total = options.replicas * options.opsPerReplica

        progress.step("heal: opening \(options.replicas) replicas and a hub under \(folder)")
        let hub = try Replica.open(at: folder + "/hub.sqlite")
        var leaves: [Replica] = []
        for index in 0..<options.replicas {
            leaves.append(try Replica.open(at: folder + "/leaf\(index).sqlite"))
        }
        for replica in [hub] + leaves { try await replica.waitUntilLoaded() }

        progress.step("heal: \(options.replicas) × \(options.opsPerReplica) ops written apart (counters, sets, merges)")
        var expected = [Int64](repeating: 0, count: options.counters)
        try write(options, replicas: leaves, expected: &expected)
        for leaf in leaves { try await leaf.flush() }

        progress.step("heal: baseline, the same \(total) ops merged into one replica with no network")
        let baselineSeconds = try await mergeLocally(leaves, into: folder + "/baseline.sqlite")

        progress.step("heal: \(options.replicas) replicas connect to the hub")
        let before = roads([hub] + leaves)
        let start = ContinuousClock.now
        let drivers = try await connect(leaves, to: hub)
        let everyone = [hub] + leaves
        let healSeconds = try await waitForEqualDigests(everyone, ops: total, since: start, progress: progress)
        let bytesSent = drivers.reduce(0) { $0 + $1.status.bytesSent }
        let after = roads(everyone)
        progress.step(
            "heal: roads on all replicas: \(after.inOrder - before.inOrder) in order, "
                + "\(after.counterShortcuts - before.counterShortcuts) counter shortcuts, "
                + "\(after.hiddenWrites - before.hiddenWrites) hidden, \(after.refolds - before.refolds) re-folds "
                + "replaying \(after.replayedOps - before.replayedOps) ops")

        progress.step("heal: checking \(options.counters) counters on \(everyone.count) replicas")
        let countersExact = try countersAreExact(on: everyone, expected: expected, progress: progress)
        for driver in drivers { await driver.shutdown() }
        for replica in everyone { await replica.shutdown() }
        return [
            Measurement(
                suite: "heal", name: "\(options.replicas) × \(options.opsPerReplica) ops healed through a hub",
                value: healSeconds, unit: "s", baseline: baselineSeconds),
            Measurement(
                suite: "heal", name: "bytes sent while healing, all replicas", value: Double(bytesSent), unit: "B"),
            Measurement(
                suite: "heal", name: "bytes sent per op delivered",
                value: Double(bytesSent) / Double(total * options.replicas),
                unit: "B/op"),
            Measurement(
                suite: "heal", name: "counters exact on every replica", value: countersExact ? 1 : 0, unit: "bool"),
        ]
    }

    /// Starts a hub driver listening on an ephemeral loopback port and one driver per leaf dialing it;
    /// returns them all, the hub's first.
    private static func connect(_ leaves: [Replica], to hub: Replica) async throws -> [SyncDriver] {
        let token = try AuthToken(string: "bench secret shared by the hub and its leaves")
        var quiet = Logger(label: "weft.bench.heal")
        quiet.logLevel = .error
        var hubBook = TokenBook()
        for index in leaves.indices { hubBook.set(token, for: "leaf\(index)") }
        let hubDriver = try SyncDriver(
            replica: hub,
            configuration: SyncConfiguration(replica: hub.replicaID, role: .hub, name: "hub", tokens: hubBook),
            logger: quiet)
        var drivers = [hubDriver]
        let port = try await hubDriver.listen(on: "127.0.0.1", port: 0)
        for (index, leaf) in leaves.enumerated() {
            let driver = try SyncDriver(
                replica: leaf,
                configuration: SyncConfiguration(
                    replica: leaf.replicaID, role: .peer, name: "leaf\(index)", tokens: TokenBook(["hub": token])),
                logger: quiet)
            drivers.append(driver)
            try await driver.addPeer(host: "127.0.0.1", port: port)
        }
        return drivers
    }

    /// True when every counter on every replica equals the exact sum of its increments; prints each
    /// that does not.
    private static func countersAreExact(on replicas: [Replica], expected: [Int64], progress: BenchProgress) throws
        -> Bool
    {
        var countersExact = true
        for replica in replicas {
            for (counter, sum) in expected.enumerated() {
                let value = replica.value(at: try counterPath(counter))
                if value != .int(sum) {
                    countersExact = false
                    progress.step("heal: counter \(counter) is \(value.jsonString()), expected \(sum)")
                }
            }
        }
        return countersExact
    }

    /// The replicas' writes made apart, round robin (as replicas cut off from each other write at the same
    /// time, so their stamps interleave): 40% increments of the shared counters, 40% sets (half on shared
    /// paths, so replicas conflict), 20% merges of shared objects.
    private static func write(_ options: Options, replicas: [Replica], expected: inout [Int64]) throws {
        var rng = SeededGenerator(seed: options.seed)
        for number in 0..<options.opsPerReplica {
            for (index, replica) in replicas.enumerated() {
                try write(
                    number, replica: replica, index: index, counters: options.counters, rng: &rng, expected: &expected)
            }
        }
    }

    private static func write(
        _ number: Int, replica: Replica, index: Int, counters: Int, rng: inout SeededGenerator, expected: inout [Int64]
    ) throws {
        switch rng.below(10) {
        case 0..<4:
            let counter = Int(rng.below(UInt64(counters)))
            let step = Int64(rng.below(9)) + 1
            expected[counter] += step
            _ = try replica.submit(path: try counterPath(counter), kind: .increment(by: .int(step), from: .int(0)))
        case 4..<6:
            let item = rng.below(2_000)
            _ = try replica.submit(path: try Path("/shared/items/\(item)"), kind: .set(.int(Int64(number))))
        case 6..<8:
            _ = try replica.submit(
                path: try Path("/leaves/leaf\(index)/\(number % 1_000)"), kind: .set(.string("v\(number)")))
        default:
            let group = rng.below(100)
            let children = [
                MergeChild(relative: try Path("by"), value: .int(Int64(index))),
                MergeChild(relative: try Path("at/\(index)"), value: .int(Int64(number))),
            ]
            _ = try replica.submit(path: try Path("/shared/groups/\(group)"), kind: .merge(children))
        }
    }

    static func counterPath(_ counter: Int) throws -> Path { try Path("/counters/c\(counter)") }

    /// The merge engines' roads, summed over `replicas`.
    private static func roads(_ replicas: [Replica]) -> MergeStatistics {
        var sum = MergeStatistics()
        for replica in replicas {
            let statistics = replica.mergeStatistics
            sum.inOrder += statistics.inOrder
            sum.counterShortcuts += statistics.counterShortcuts
            sum.hiddenWrites += statistics.hiddenWrites
            sum.refolds += statistics.refolds
            sum.replayedOps += statistics.replayedOps
        }
        return sum
    }

    /// Seconds a fresh replica takes to merge every leaf's ops (read from the leaves first) and make them
    /// durable: the heal's lower bound per replica.
    private static func mergeLocally(_ leaves: [Replica], into path: String) async throws -> Double {
        var ops: [Op] = []
        for leaf in leaves {
            var after: UInt64 = 0
            while true {
                let page = leaf.ops(from: leaf.replicaID, after: after, limit: 4_096)
                guard let last = page.last else { break }
                ops += page
                after = last.sequence
            }
        }
        let target = try Replica.open(at: path)
        try await target.waitUntilLoaded()
        let start = ContinuousClock.now
        var index = 0
        while index < ops.count {
            let end = min(ops.count, index + SyncLimits.batchOpsMax)
            try target.applyRemote(Array(ops[index..<end]))
            index = end
        }
        try await target.flush()
        let elapsed = seconds(since: start)
        await target.shutdown()
        return elapsed
    }

    /// Waits until every replica holds every op durably and all digests are equal; returns the seconds
    /// since `start`.
    private static func waitForEqualDigests(
        _ replicas: [Replica], ops: Int, since start: ContinuousClock.Instant, progress: BenchProgress
    ) async throws -> Double {
        let deadline = start + .seconds(healSecondsMax)
        while true {
            let complete = replicas.allSatisfy { replica in
                let vector = replica.durableVersionVector
                return vector.total >= UInt64(ops)
            }
            if complete {
                // The digests of all replicas, computed at once on every core.
                let digests = await withTaskGroup(of: StateDigest.self) { group in
                    for replica in replicas { group.addTask { replica.digest } }
                    return await group.reduce(into: Set<StateDigest>()) { $0.insert($1) }
                }
                if digests.count == 1 { return seconds(since: start) }
            }
            guard ContinuousClock.now < deadline else {
                throw Failure(description: "the replicas did not heal within \(Int(healSecondsMax)) s")
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    private static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = start.duration(to: .now)
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}
