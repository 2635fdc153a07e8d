import ArgumentParser
import Foundation
import WeftSimulation

/// `weft-sim swarm --seeds K`: many seeds on every core, a progress line, a summary table.
struct SwarmCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "swarm", abstract: "Run many seeds on all cores and sum up what they found.")

    @Option(name: .long, help: "How many seeds to run.")
    var seeds: Int = 100

    @Option(name: .long, help: "The first seed; the others follow it.")
    var firstSeed: UInt64 = 1

    @Option(name: .long, help: "Seeds run at once (default: one per core).")
    var jobs: Int = ProcessInfo.processInfo.activeProcessorCount

    @OptionGroup var scenario: ScenarioFlags

    @Flag(name: .long, help: "Print the report as JSON on standard output (progress stays on standard error).")
    var json = false

    @Option(name: .long, help: "Also write the JSON report to this file.")
    var output: String?

    @Flag(name: .long, help: "Print every coverage counter in the summary.")
    var coverage = false

    func validate() throws {
        guard (1...SimulationLimits.swarmSeedsMax).contains(seeds) else {
            throw ValidationError("--seeds must be in 1...\(SimulationLimits.swarmSeedsMax)")
        }
        guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
        if let output { try OutputFile.check(output) }
    }

    func run() async throws {
        let options = try scenario.options()
        let swarm = Swarm(options: options, firstSeed: firstSeed, seedCount: seeds, jobs: jobs)
        let cpuBefore = ProcessorTime.seconds()
        let report = await swarm.run { progress in
            let rate = progress.elapsedSeconds > 0 ? Double(progress.done) / progress.elapsedSeconds : 0
            let width = String(progress.total).count
            let done = String(progress.done).leftPadded(to: width)
            let line =
                "\r[\(done)/\(progress.total)] \(rate.formatted(digits: 1)) seeds/s · \(progress.failures) failures"
            FileHandle.standardError.write(Data(line.utf8))
        }
        FileHandle.standardError.write(Data("\n".utf8))
        let cpuSeconds = ProcessorTime.seconds() - cpuBefore
        if let output { try Data(try Printing.json(report).utf8).write(to: URL(fileURLWithPath: output)) }
        if json {
            print(try Printing.json(report))
        } else {
            SwarmTable.print(report, cpuSeconds: cpuSeconds, allCounters: coverage)
        }
        if !report.failures.isEmpty { throw ExitCode.failure }
    }
}

/// The summary table of a swarm.
enum SwarmTable {
    /// The percentiles of the passing runs' convergence, or why there are none: zeros would read as
    /// instant convergence.
    static func convergenceText(_ report: SwarmReport) -> String {
        guard report.passed > 0 else { return "none (no seed passed)" }
        let ticks = report.convergenceTicks
        return "p50 \(ticks.p50) · p90 \(ticks.p90) · p99 \(ticks.p99) · max \(ticks.max) (passing seeds)"
    }

    static func print(_ report: SwarmReport, cpuSeconds: Double, allCounters: Bool) {
        // On a busy machine the wall clock says little; CPU time gives the rate on idle cores.
        let cpuRate = cpuSeconds > 0 ? Double(report.seeds) / cpuSeconds * Double(report.jobs) : 0
        let rows: [(String, String)] = [
            ("seeds", "\(report.seeds) (from \(report.firstSeed))"),
            ("options", report.options.commandLineArguments.joined(separator: " ").nonEmpty ?? "defaults"),
            ("passed", "\(report.passed)"),
            ("failures", "\(report.failures.count)"),
            ("ops written", "\(report.opsWritten)"),
            ("faults injected", "\(report.faultsInjected)"),
            ("events", "\(report.events)"),
            ("convergence ticks", convergenceText(report)),
            (
                "rate",
                "\(report.seedsPerSecond.formatted(digits: 1)) seeds/s "
                    + "(\(report.elapsedSeconds.formatted(digits: 1)) s on \(report.jobs) jobs)"
            ),
            (
                "cpu",
                "\(cpuSeconds.formatted(digits: 1)) s, or \(cpuRate.formatted(digits: 1)) seeds/s "
                    + "on \(report.jobs) idle cores"
            ),
        ]
        table(rows)
        Swift.print("faults and their effects:")
        let counters =
            allCounters
            ? CoverageCounter.allCases
            : CoverageCounter.faults + [
                .unsyncedCommitsLost, .opsLostInCrashes, .restarts, .connectionsResetAfterDamage, .driftRefusals,
                .duplicateOpsDelivered,
            ]
        table(counters.map { ("  " + $0.rawValue, "\(report.coverage[$0])") })
        let leafCounters: [CoverageCounter] = [
            .leafPartialOps, .leafDecisionsCarried, .leafRevisionsReceived, .leafRevisionsTaken,
            .leafShareSnapshotsInstalled, .leafShareChecks, .opsCompacted,
        ]
        if !allCounters, report.options.shareLeafShare > 0 {
            // A run with leaves shows that their path ran.
            Swift.print("share leaves:")
            table(leafCounters.map { ("  " + $0.rawValue, "\(report.coverage[$0])") })
        }
        guard !report.failures.isEmpty else { return }
        Swift.print(
            "failures by kind: "
                + report.failureKinds.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        )
        for failure in report.failures.prefix(20) {
            Swift.print("  seed \(failure.seed): \(failure.failure)")
            Swift.print("    replay: \(failure.replayCommand)")
        }
        if report.failures.count > 20 { Swift.print("  … and \(report.failures.count - 20) more (see --json)") }
    }

    static func table(_ rows: [(String, String)]) {
        let width = rows.map(\.0.count).max() ?? 0
        for (name, value) in rows {
            Swift.print("\(name.padding(toLength: width, withPad: " ", startingAt: 0))  \(value)")
        }
    }
}

/// Processor time used by this process, user and system (printing only).
enum ProcessorTime {
    static func seconds() -> Double {
        var usage = rusage()
        #if os(Linux)
            let who = __rusage_who_t(RUSAGE_SELF.rawValue)
        #else
            let who = RUSAGE_SELF
        #endif
        guard getrusage(who, &usage) == 0 else { return 0 }
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}

extension String {
    func leftPadded(to width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
    var nonEmpty: String? { isEmpty ? nil : self }
}

extension Double {
    func formatted(digits: Int) -> String {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let rounded = (self * scale).rounded() / scale
        let text = String(rounded)
        guard let dot = text.firstIndex(of: ".") else { return text }
        let decimals = text[text.index(after: dot)...].count
        return decimals < digits ? text + String(repeating: "0", count: digits - decimals) : text
    }
}
