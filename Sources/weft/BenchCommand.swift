import ArgumentParser
import Foundation

/// `weft bench SUITE`: prints figures and their ratio to a baseline measured in the same run.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure Weft's speed; every figure comes with a baseline measured in the same run."
    )

    enum Suite: String, ExpressibleByArgument, CaseIterable {
        case merge, all
    }

    @Argument(help: "Suite to run: \(Suite.allCases.map(\.rawValue).joined(separator: ", ")).")
    var suite: Suite = .all

    @Option(help: "Number of ops (merge).")
    var ops: Int = 1_000_000

    @Option(help: "Seed of the generated workload.")
    var seed: UInt64 = 1

    @Option(help: "merge: number of writing replicas whose streams are interleaved (1 = every op in order).")
    var replicas: Int = 8

    @Flag(help: "merge: shuffle every op (the worst case) instead of interleaving per-origin streams.")
    var fullShuffle = false

    @Flag(help: "Print one JSON array of measurements instead of a table.")
    var json = false

    func validate() throws {
        guard ops > 0 else { throw ValidationError("--ops must be positive") }
        guard replicas >= 1 else { throw ValidationError("--replicas must be at least 1") }
    }

    func run() throws {
        let progress = BenchProgress(quiet: false)
        var measurements: [Measurement] = []
        if suite == .merge || suite == .all {
            measurements += MergeBench.run(MergeBench.Options(ops: ops, replicas: replicas, seed: seed, fullShuffle: fullShuffle), progress: progress)
        }
        print(json ? try MeasurementPrinter.json(measurements) : MeasurementPrinter.table(measurements))
    }
}
