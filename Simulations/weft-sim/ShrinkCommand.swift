import ArgumentParser
import WeftSimulation

/// `weft-sim shrink --seed N`: reduces a failing run to a small schedule file.
struct ShrinkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shrink", abstract: "Reduce a failing seed to a small failing schedule written to a file.")

    @Option(name: .long, help: "The failing seed.")
    var seed: UInt64

    @OptionGroup var scenario: ScenarioFlags

    @Option(name: .long, help: "Where to write the schedule (default: weft-sim-seed-N.schedule.json).")
    var output: String?

    @Option(name: .long, help: "Most simulations to run while shrinking.")
    var runsMax: Int = SimulationLimits.shrinkRunsMax

    /// Where the schedule goes.
    var path: String { output ?? "weft-sim-seed-\(seed).schedule.json" }

    func validate() throws { try OutputFile.check(path) }

    func run() throws {
        let options = try scenario.options()
        let drawn = Scenario.draw(seed: seed, options: options)
        var shrinker: Shrinker
        do {
            shrinker = try Shrinker(scenario: drawn)
        } catch {
            Printing.errorLine("\(error)")
            throw ExitCode.failure
        }
        shrinker.runsMax = max(1, runsMax)
        let result = shrinker.shrink { step in print("  \(step)") }
        try ScheduleFile(result: result).write(to: path)
        let before = result.original
        let after = result.shrunk
        print("failure: \(result.failure)")
        print(
            "replicas \(before.replicaCount) → \(after.replicaCount) · "
                + "writes \(before.keptWrites?.count ?? before.opCount) → \(after.keptWrites?.count ?? after.opCount) · "
                + "episodes \(before.episodes.count) → \(after.episodes.count) · "
                + "fault phase \(before.ticksFault) → \(after.ticksFault) ticks · \(result.runs) runs")
        print("wrote \(path)")
        print("replay: weft-sim replay \(path) --print-ops")
    }
}
