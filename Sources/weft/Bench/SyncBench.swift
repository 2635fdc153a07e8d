import Foundation
import Logging
@_spi(Engine) import Weft
import WeftCore
import WeftSync

/// `weft bench sync`: two SQLite replicas in one process, over loopback TCP. One holds `ops` local writes;
/// the other dials it and the figure is how fast they become durable on the far side. The baseline is the
/// rate of the same writes made durable locally, measured in the same run. ``StableBench`` adds the time of
/// a leaf's write to stable in a hub and two leaves.
enum SyncBench {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func run(ops: Int, progress: BenchProgress) async throws -> [Measurement] {
        let folder = NSTemporaryDirectory() + "weft-bench-sync-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let source = try Replica.open(at: folder + "/source.sqlite")
        let sink = try Replica.open(at: folder + "/sink.sqlite")
        try await source.waitUntilLoaded()
        try await sink.waitUntilLoaded()

        progress.step("sync: \(ops) durable local writes")
        let writeStart = ContinuousClock.now
        for index in 0..<ops {
            _ = try source.submit(
                path: try Path("/bench/\(index % 1_000)/\(index)"), kind: .set(.int(Int64(index))))
        }
        try await source.flush()
        let writeSeconds = seconds(since: writeStart)

        let token = try AuthToken(string: "bench secret shared by source and sink")
        var quiet = Logger(label: "weft.bench.sync")
        quiet.logLevel = .error
        let sourceDriver = try SyncDriver(
            replica: source,
            configuration: SyncConfiguration(
                replica: source.replicaID, role: .hub, name: "source", tokens: TokenBook(["sink": token])),
            logger: quiet)
        let sinkDriver = try SyncDriver(
            replica: sink,
            configuration: SyncConfiguration(
                replica: sink.replicaID, role: .peer, name: "sink", tokens: TokenBook(["source": token])),
            logger: quiet)

        progress.step("sync: \(ops) ops from one replica to another over loopback")
        let syncStart = ContinuousClock.now
        let port = try await sourceDriver.listen(on: "127.0.0.1", port: 0)
        try await sinkDriver.addPeer(host: "127.0.0.1", port: port)
        let deadline = ContinuousClock.now + .seconds(600)
        while sink.durableVersionVector[source.replicaID] < UInt64(ops) {
            guard ContinuousClock.now < deadline else {
                throw Failure(description: "sync did not finish within 600 s")
            }
            try await Task.sleep(for: .milliseconds(1))
        }
        let syncSeconds = seconds(since: syncStart)
        let equal = sink.digest == source.digest

        await sinkDriver.shutdown()
        await sourceDriver.shutdown()
        await sink.shutdown()
        await source.shutdown()
        let count = Double(ops)
        let toStable = try await StableBench.run(progress: progress)
        return toStable + [
            Measurement(
                suite: "sync", name: "replica → replica over loopback, durable", value: count / syncSeconds,
                unit: "ops/s", baseline: count / writeSeconds),
            Measurement(
                suite: "sync", name: "digests equal after sync", value: equal ? 1 : 0, unit: "bool"),
        ]
    }

    private static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = start.duration(to: .now)
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}
