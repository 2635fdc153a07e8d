import ArgumentParser
import Foundation
import WeftSimulation

/// How `weft-sim` prints reports.
enum Printing {
    static func summary(of report: SimulationReport, scenario: Scenario) {
        let faults = report.coverage.faultsInjected
        print(
            "seed \(report.seed) · \(report.replicaCount) replicas · \(report.topology.rawValue) · "
                + "\(report.coverage[.opsWritten]) ops written · \(faults) faults injected"
                + (scenario.sabotage.map { " · sabotage \($0.rawValue)" } ?? ""))
        let convergence = report.convergenceTicks.map { "converged \($0) ticks after healing" } ?? "did not converge"
        print("events \(report.events) · ticks \(report.ticks) · \(convergence)")
        print("trace \(report.traceHashText)")
        print(report.passed ? "PASS" : "FAIL")
    }

    static func failure(_ failure: SimulationFailure, replay: String, shrink: String, json: Bool) {
        line("FAIL \(failure)", json: json)
        line("replay: \(replay)", json: json)
        line("shrink: \(shrink)", json: json)
    }

    /// Prints a line on standard output, or on standard error when standard output holds a JSON
    /// report (which must stay one JSON document for the tools that read it).
    static func line(_ text: String, json: Bool) {
        guard json else { return print(text) }
        errorLine(text)
    }

    /// Prints a line on standard error.
    static func errorLine(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    static func coverage(_ coverage: Coverage) {
        let width = coverage.byName.map(\.name.count).max() ?? 0
        for (name, count) in coverage.byName {
            print("  \(name.padding(toLength: width, withPad: " ", startingAt: 0))  \(count)")
        }
    }

    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// Runs this executable again with `arguments` and returns the last line it printed.
    static func childTraceHash(arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = ownExecutable()
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ChildRunFailure(arguments: arguments, status: process.terminationStatus)
        }
        let output = String(decoding: data, as: UTF8.self)
        return output.split(separator: "\n").last.map(String.init) ?? ""
    }

    /// This executable's file. `CommandLine.arguments[0]` is only the name typed when `weft-sim` was
    /// found through `PATH`, which names no file in the working folder.
    static func ownExecutable() -> URL {
        let linux = URL(fileURLWithPath: "/proc/self/exe")
        if FileManager.default.fileExists(atPath: linux.path) { return linux.resolvingSymlinksInPath() }
        return Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
    }
}

/// A child run of `--check-determinism` that did not finish: no hash to compare.
struct ChildRunFailure: Error, CustomStringConvertible {
    let arguments: [String]
    let status: Int32

    var description: String {
        "the child run `weft-sim \(arguments.joined(separator: " "))` ended with status \(status); "
            + "run it yourself to see why"
    }
}
