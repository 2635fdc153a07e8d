import ArgumentParser
import Foundation

/// `weft bench SUITE`: prints figures and their ratio to a baseline measured in the same run.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure Weft's speed; every figure comes with a baseline measured in the same run."
    )

    enum Suite: String, ExpressibleByArgument, CaseIterable {
        case merge, write, open, sync, heal, query, http, models, all
    }

    @Argument(help: "Suite to run: \(Suite.allCases.map(\.rawValue).joined(separator: ", ")).")
    var suite: Suite = .all

    @Option(help: "Number of ops (merge, sync).")
    var ops: Int = 1_000_000

    @Option(help: "Number of durable writes with group commit (write).")
    var writeOps: Int = 400_000

    @Option(help: "Number of writes each waited for, one commit each, with full durability (write).")
    var syncedOps: Int = 300

    @Option(help: "Number of users of 10 fields in the database opened (open): 100000 makes 1.1M nodes.")
    var users: Int = 100_000

    @Option(help: "heal: number of replicas that write apart, then heal through a hub.")
    var healReplicas: Int = 10

    @Option(help: "heal: ops each replica writes apart.")
    var healOps: Int = 10_000

    @Option(help: "query: number of children (of 5 fields each) in the collection queried.")
    var children: Int = 1_000_000

    @Option(help: "http: durable writes made by 16 clients, through each protocol.")
    var httpWrites: Int = 16_000
    @Flag(help: ArgumentHelp("http: also measure REST through URLSession clients, to compare.", visibility: .hidden))
    var httpURLSession = false

    @Option(help: "models: number of objects written, read and saved typed and untyped.")
    var objects: Int = 10_000

    @Option(help: "Seed of the generated workload.")
    var seed: UInt64 = 1

    @Option(help: "merge: number of writing replicas whose streams are interleaved (1 = every op in order).")
    var replicas: Int = 8

    @Flag(help: "merge: shuffle every op (the worst case) instead of interleaving per-origin streams.")
    var fullShuffle = false

    @Flag(help: "merge: deliver every op in stamp order (none is late: the cost of the in-order road alone).")
    var stampOrder = false

    @Flag(
        help: """
            merge: the workload's small path space with hot keys (40 items, 6 counters, one account \
            group, half the traffic on the first two of each): late ops meet many later ones in their \
            region, the re-fold-heavy case.
            """)
    var hotKeys = false

    @Flag(help: "Print one JSON array of measurements instead of a table.")
    var json = false

    func validate() throws {
        guard ops > 0, writeOps > 0, syncedOps > 0 else { throw ValidationError("counts must be positive") }
        guard users >= 10 else { throw ValidationError("--users must be at least 10") }
        guard healReplicas >= 1, healOps >= 1 else { throw ValidationError("heal counts must be positive") }
        guard children >= 100 else { throw ValidationError("--children must be at least 100") }
        guard objects >= 100 else { throw ValidationError("--objects must be at least 100") }
        guard replicas >= 1 else { throw ValidationError("--replicas must be at least 1") }
        guard !(fullShuffle && stampOrder) else {
            throw ValidationError("--full-shuffle and --stamp-order are two arrival orders: choose one")
        }
    }

    func run() async throws {
        let progress = BenchProgress(quiet: false)
        var measurements: [Measurement] = []
        if suite == .merge || suite == .all {
            let order: MergeBench.Order = fullShuffle ? .fullShuffle : stampOrder ? .stampOrder : .interleaved
            let options = MergeBench.Options(ops: ops, replicas: replicas, seed: seed, order: order, hotKeys: hotKeys)
            measurements += MergeBench.run(options, progress: progress)
        }
        if suite == .write || suite == .all {
            let options = WriteBench.Options(ops: writeOps, syncedOps: syncedOps, seed: seed)
            measurements += try await WriteBench.run(options, progress: progress)
        }
        if suite == .open || suite == .all {
            measurements += try await OpenBench.run(OpenBench.Options(users: users), progress: progress)
        }
        if suite == .sync || suite == .all {
            measurements += try await SyncBench.run(ops: ops, progress: progress)
        }
        if suite == .heal || suite == .all {
            let options = HealBench.Options(replicas: healReplicas, opsPerReplica: healOps, seed: seed)
            measurements += try await HealBench.run(options, progress: progress)
        }
        if suite == .query || suite == .all {
            measurements += try await QueryBench.run(QueryBench.Options(children: children, seed: seed), progress: progress)
        }
        if suite == .http || suite == .all {
            var options = HTTPBench.Options(writes: httpWrites, reads: httpWrites * 2, latencySamples: 200)
            options.alsoURLSession = httpURLSession
            measurements += try await HTTPBench.run(options, progress: progress)
        }
        if suite == .models || suite == .all {
            measurements += try await ModelBench.run(objects: objects, progress: progress)
        }
        print(json ? try MeasurementPrinter.json(measurements) : MeasurementPrinter.table(measurements))
    }
}
