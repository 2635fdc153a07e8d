import ArgumentParser
import Foundation
import WeftSimulation

/// `weft-sim run --seed N`: one run, its trace hash, and on failure the commands to replay and shrink it.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run", abstract: "Run one seed and print its trace hash.")

    @Option(name: .long, help: "The seed that decides the run.")
    var seed: UInt64

    @OptionGroup var scenario: ScenarioFlags

    @Flag(name: .long, help: "Run the seed twice here and once in a child process, and compare trace hashes.")
    var checkDeterminism = false

    @Flag(name: .long, help: "Print the coverage counters.")
    var coverage = false

    @Flag(name: .long, help: "Print the report as JSON.")
    var json = false

    @Flag(name: .long, help: "Print only the trace hash (used by --check-determinism).")
    var traceHashOnly = false

    func run() throws {
        let options = try scenario.options()
        let drawn = Scenario.draw(seed: seed, options: options)
        let report = Simulation(scenario: drawn).run()
        if traceHashOnly {
            print(report.traceHashText)
            return
        }
        if json {
            print(try Printing.json(report))
        } else {
            Printing.summary(of: report, scenario: drawn)
            if coverage { Printing.coverage(report.coverage) }
        }
        if checkDeterminism { try checkAgainstReruns(report, scenario: drawn, options: options) }
        if let failure = report.failure {
            Printing.failure(
                failure, replay: options.replayCommand(seed: seed), shrink: shrinkCommand(options), json: json)
            throw ExitCode.failure
        }
    }

    func shrinkCommand(_ options: ScenarioOptions) -> String {
        (["weft-sim", "shrink", "--seed", "\(seed)"] + options.commandLineArguments).joined(separator: " ")
    }

    /// Runs the scenario again in this process, then in a child process (whose hash seed differs,
    /// so an order that leaked from a hashed collection would show).
    func checkAgainstReruns(_ report: SimulationReport, scenario drawn: Scenario, options: ScenarioOptions) throws {
        let again = Simulation(scenario: drawn).run()
        try compare("second run in this process", again.traceHashText, with: report)
        let child = try Printing.childTraceHash(
            arguments: ["run", "--seed", "\(seed)", "--trace-hash-only"] + options.commandLineArguments)
        try compare("run in a child process", child, with: report)
    }

    func compare(_ run: String, _ traceHash: String, with report: SimulationReport) throws {
        let same = traceHash == report.traceHashText
        Printing.line("determinism: \(run) \(traceHash) — \(same ? "same" : "DIFFERS")", json: json)
        guard same else { throw ExitCode.failure }
    }
}
