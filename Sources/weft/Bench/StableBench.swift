import Foundation
import Logging
import Weft
import WeftCore
import WeftSync

/// The "write to stable" part of `weft bench sync`: a hub and two leaves, embedded in one process over
/// loopback TCP. A leaf writes, one write at a time, and each write's time to `.stable` (every member
/// holds it) is measured; so is, in the same run, a round trip to the hub (a client's `get`) and the
/// time of a leaf's write to `.durable` (one group commit). The goal: p99 to stable at most five round
/// trips plus one group commit.
enum StableBench {
    /// Writes measured (after warm-up writes that are not).
    static let samples = 300
    static let warmUpSamples = 20

    static func run(progress: BenchProgress) async throws -> [Measurement] {
        let folder = NSTemporaryDirectory() + "weft-bench-stable-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let secret = "bench secret shared by the hub and its leaves"
        var quiet = Logger(label: "weft.bench.stable")
        quiet.logLevel = .error

        let hub = try Replica.open(at: folder + "/hub.sqlite")
        var hubSync = ReplicaSyncOptions()
        hubSync.role = .hub
        hubSync.name = "hub"
        hubSync.logger = quiet
        try hub.configureSync(hubSync)
        let port = try await hub.listen(on: "127.0.0.1:0", token: secret)
        var leaves: [Replica] = []
        for name in ["north", "south"] {
            let leaf = try Replica.open(at: folder + "/\(name).sqlite")
            var sync = ReplicaSyncOptions()
            sync.name = name
            sync.logger = quiet
            try leaf.configureSync(sync)
            try await leaf.connect(to: "127.0.0.1:\(port)", token: secret, waitUntilConnected: .seconds(30))
            leaves.append(leaf)
        }
        let writer = leaves[0]
        let client = try await SyncClient.connect(
            host: "127.0.0.1", port: port, name: "bench", token: try AuthToken(string: secret), serverName: "hub")

        progress.step("sync: \(samples) round trips to the hub, leaf writes to durable and to stable")
        var roundTrips: [Double] = []
        var durable: [Double] = []
        var stable: [Double] = []
        for index in 0..<(warmUpSamples + samples) {
            let measured = index >= warmUpSamples
            let path = try Path("/bench/rtt")
            let tripStart = ContinuousClock.now
            _ = try await client.request(.get(path))
            if measured { roundTrips.append(milliseconds(since: tripStart)) }

            guard let node = writer.root.relativeNode(for: "bench/stable/\(index % 100)") else {
                throw SyncBench.Failure(description: "no node for bench/stable/\(index % 100)")
            }
            let durableStart = ContinuousClock.now
            try await node.set(index, waitingFor: .durable)
            if measured { durable.append(milliseconds(since: durableStart)) }

            let stableStart = ContinuousClock.now
            let receipt = try await node.set(index, waitingFor: .pending)
            guard try await receipt.wait(for: .stable, timeout: .seconds(30)) == .stable else {
                throw SyncBench.Failure(description: "a leaf write did not become stable within 30 s")
            }
            if measured { stable.append(milliseconds(since: stableStart)) }
        }
        await client.close()
        for leaf in leaves { await leaf.shutdown() }
        await hub.shutdown()

        let trip = Percentiles(roundTrips)
        let commit = Percentiles(durable)
        let toStable = Percentiles(stable)
        func figure(_ name: String, _ value: Double, baseline: Double? = nil) -> Measurement {
            Measurement(suite: "sync", name: name, value: value, unit: "ms", baseline: baseline)
        }
        // Baselines of the last two: the goal's budget measured in this run (a ratio ≤ 1 meets it).
        return [
            figure("round trip to the hub (client get), p50", trip.p50),
            figure("round trip to the hub (client get), p99", trip.p99),
            figure("leaf write to durable (one group commit), p50", commit.p50),
            figure("leaf write to durable (one group commit), p99", commit.p99),
            figure("leaf write to stable, p50 (vs 5 round trips + 1 commit)", toStable.p50,
                baseline: 5 * trip.p50 + commit.p50),
            figure("leaf write to stable, p99 (vs 5 round trips + 1 commit)", toStable.p99,
                baseline: 5 * trip.p99 + commit.p99),
        ]
    }

    private static func milliseconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = start.duration(to: .now)
        return Double(elapsed.components.seconds) * 1e3 + Double(elapsed.components.attoseconds) / 1e15
    }
}

/// The median and the 99th percentile of samples (nearest rank).
struct Percentiles {
    let p50: Double
    let p99: Double

    init(_ samples: [Double]) {
        let sorted = samples.sorted()
        func rank(_ fraction: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            let index = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
            return sorted[min(max(index, 0), sorted.count - 1)]
        }
        p50 = rank(0.5)
        p99 = rank(0.99)
    }
}
