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

    func run() throws {
        let schedule: ScheduleFile
        do {
            schedule = try ScheduleFile.read(from: file)
        } catch {
            throw ValidationError("\(error)")
        }
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
        if let recorded = schedule.failure {
            let same = report.failure?.kind == recorded.kind
            Printing.line(
                "recorded failure: \(recorded.kind.rawValue) — \(same ? "replayed" : "NOT replayed")", json: json)
        }
        if let failure = report.failure {
            Printing.line("FAIL \(failure)", json: json)
            throw ExitCode.failure
        }
    }
}
