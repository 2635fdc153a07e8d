import ArgumentParser
import WeftSimulation

/// `weft-sim replay FILE`: runs a schedule file.
struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay", abstract: "Run a schedule file written by shrink.")

    @Argument(help: "The schedule file.")
    var file: String

    @Flag(name: .long, help: "Print every op written, one per line.")
    var printOps = false

    @Flag(name: .long, help: "Print the coverage counters.")
    var coverage = false

    @Flag(name: .long, help: "Print the report as JSON.")
    var json = false

    /// How the replayed run compares with what the file recorded: the failure (kind, then tick,
    /// replica and message) and the trace hash, when the file has them.
    static func comparison(of report: SimulationReport, with schedule: ScheduleFile) -> [String] {
        var lines: [String] = []
        if let recorded = schedule.failure {
            let verdict: String
            if report.failure == recorded {
                verdict = "replayed exactly"
            } else if let replayed = report.failure, replayed.kind == recorded.kind {
                verdict = "replayed as the same kind, but as \(replayed) (recorded \(recorded))"
            } else {
                verdict = "NOT replayed"
            }
            lines.append("recorded failure: \(recorded.kind.rawValue) — \(verdict)")
        }
        if let recorded = schedule.traceHash {
            let same = recorded == report.traceHashText
            lines.append(
                "recorded trace \(recorded) — \(same ? "same" : "DIFFERS: this run's is \(report.traceHashText)")")
        }
        return lines
    }

    func run() throws {
        // Not a ValidationError: the arguments were right, and usage would point at the wrong help.
        let schedule = try ScheduleFile.read(from: file)
        let simulation = Simulation(scenario: schedule.scenario)
        simulation.recordsOps = printOps
        let report = simulation.run()
        if json {
            print(try Printing.json(report))
        } else {
            Printing.summary(of: report, scenario: schedule.scenario)
            if coverage { Printing.coverage(report.coverage) }
            for episode in schedule.scenario.episodes {
                print("episode at tick \(episode.startTick) for \(episode.durationTicks) ticks: \(episode.fault)")
            }
        }
        if printOps {
            for written in simulation.writtenOps {
                Printing.line(OpText.line(written.op, tick: written.tick, replica: written.replica), json: json)
            }
        }
        for line in Self.comparison(of: report, with: schedule) { Printing.line(line, json: json) }
        if let failure = report.failure {
            Printing.line("FAIL \(failure)", json: json)
            throw ExitCode.failure
        }
    }
}
