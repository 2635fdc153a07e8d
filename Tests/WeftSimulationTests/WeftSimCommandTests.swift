import Foundation
import Testing
import WeftTestSupport
@testable import WeftSimulation
@testable import weft_sim

/// `weft-sim` run as a user runs it: the built executable, found on `PATH`, from another folder.
@Suite struct WeftSimCommandTests {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The `weft-sim` executable built next to this test bundle.
    static func binary() throws -> URL {
        let directory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        for candidate in [directory, directory.deletingLastPathComponent()] {
            let binary = candidate.appendingPathComponent("weft-sim")
            if FileManager.default.isExecutableFile(atPath: binary.path) { return binary }
        }
        throw Failure(description: "no weft-sim executable next to \(directory.path); build it first")
    }

    /// Runs `weft-sim arguments` by name through `PATH`, in an empty temporary folder, with the variables
    /// `setting` (`NAME=VALUE`, set by env(1) last) on top of those every test child has.
    static func run(
        _ arguments: [String], setting: [String] = []
    ) throws -> (status: Int32, stdout: String, stderr: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("weft-sim-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = setting + ["weft-sim"] + arguments
        process.currentDirectoryURL = folder
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = try binary().deletingLastPathComponent().path + ":" + (environment["PATH"] ?? "")
        process.environment = environment
        let files = ["out", "err"].map { folder.appendingPathComponent($0) }
        for file in files { try Data().write(to: file) }
        process.standardOutput = try FileHandle(forWritingTo: files[0])
        process.standardError = try FileHandle(forWritingTo: files[1])
        try ChildProcess.start(process)
        process.waitUntilExit()
        let output = try files.map { String(decoding: try Data(contentsOf: $0), as: UTF8.self) }
        return (process.terminationStatus, output[0], output[1])
    }

    @Test func checkDeterminismRunsItsChildWhenWeftSimIsFoundOnThePath() throws {
        let result = try Self.run(["run", "--seed", "7", "--ops", "50", "--check-determinism"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("determinism: run in a child process"), "\(result.stdout)\(result.stderr)")
        #expect(!result.stdout.contains("DIFFERS"))
    }

    /// `WEFT_DIE_WITH_PARENT` naming a process other than the parent (here pid 1; a parent that ended before
    /// weft-sim could ask for the signal leaves the same mismatch) ends the command before the run starts.
    @Test func aParentPidThatIsNotTheParentEndsTheCommandBeforeItRuns() throws {
        let result = try Self.run(
            ["run", "--seed", "1", "--ops", "10"], setting: ["\(ChildProcess.dieWithParentVariable)=1"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("\(ChildProcess.dieWithParentVariable)=1 is not the parent"), "\(result.stderr)")
        #expect(result.stdout.isEmpty, "\(result.stdout)")
    }

    @Test func shrinkingAPassingSeedSaysSoOnStandardError() throws {
        let result = try Self.run(["shrink", "--seed", "1", "--ops", "50"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("seed 1 does not fail: nothing to shrink"), "\(result.stderr)")
        #expect(!result.stdout.contains("does not fail"), "\(result.stdout)")
    }

    /// A run that fails: double-counted increments are caught on the first seed.
    static let failingArguments = ["--seed", "1", "--ops", "200", "--sabotage", "double-count"]

    @Test func runJSONIsOneJSONDocumentEvenWhenTheRunFails() throws {
        let result = try Self.run(["run"] + Self.failingArguments + ["--json", "--check-determinism"])
        #expect(result.status == 1, "a checker failed")
        let report = try JSONDecoder().decode(SimulationReport.self, from: Data(result.stdout.utf8))
        // Which checker trips first depends on the message schedule (acks of durable moves changed it):
        // the double count shows as a state that differs from the fold, or as a duplicate change.
        #expect([.stateDiffersFromFold, .duplicateChangedState].contains(report.failure?.kind))
        #expect(result.stderr.contains("replay: weft-sim run --seed 1"), "the replay command is still shown")
        #expect(result.stderr.contains("determinism: run in a child process"))
    }

    @Test func replayJSONIsOneJSONDocumentEvenWhenTheScheduleFails() throws {
        var options = ScenarioOptions()
        options.opCount = 200
        options.sabotage = .duplicateIncrementsCounted
        let scenario = Scenario.draw(seed: 1, options: options)
        let failure = try #require(Simulation(scenario: scenario).run().failure)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "weft-sim-replay-json-\(UUID().uuidString).json"
        ).path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try ScheduleFile(result: ShrinkResult(original: scenario, shrunk: scenario, failure: failure, runs: 1))
            .write(to: path)

        let result = try Self.run(["replay", path, "--json", "--print-ops"])
        #expect(result.status == 1, "the schedule fails")
        let report = try JSONDecoder().decode(SimulationReport.self, from: Data(result.stdout.utf8))
        #expect(report.failure == failure)
        #expect(result.stderr.contains("recorded failure: \(failure.kind.rawValue) — replayed"))
        #expect(result.stderr.contains(" r0 seq 1 "), "the ops are still listed")
    }

    /// A shrink or a swarm can run for hours: a file it cannot write must stop it before it starts.
    @Test(arguments: [
        ["shrink", "--seed", "1", "--output", "/nonexistent-weft-sim-folder/failing.json"],
        ["shrink", "--seed", "1", "--output", FileManager.default.temporaryDirectory.path],
        ["swarm", "--seeds", "2", "--output", "/nonexistent-weft-sim-folder/report.json"],
        ["swarm", "--seeds", "2", "--output", FileManager.default.temporaryDirectory.path],
    ])
    func anOutputFileThatCannotBeWrittenIsRefusedBeforeTheWork(arguments: [String]) throws {
        #expect(throws: (any Error).self) { try WeftSim.parseAsRoot(arguments) }
        let result = try Self.run(arguments + ["--ops", "50", "--sabotage", "double-count"])
        #expect(result.status == 64, "a usage error, not a failure found: \(result.stderr)")
        #expect(result.stderr.contains("--output"), "\(result.stderr)")
        #expect(!result.stdout.contains("episodes"), "nothing was shrunk: \(result.stdout)")
        #expect(!result.stderr.contains("seeds/s"), "no seed was run: \(result.stderr)")
    }

    @Test func anOutputFileInAnExistingFolderIsAccepted() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("weft-sim-\(UUID().uuidString).json")
        #expect(throws: Never.self) { try WeftSim.parseAsRoot(["swarm", "--seeds", "2", "--output", path.path]) }
    }

    /// An unknown name must say which names there are, as an unknown fault kind does.
    @Test(arguments: [
        (["--topology", "ring"], ["hub", "mesh"]),
        (["--sabotage", "off-by-one"], Sabotage.allCases.map(\.rawValue)),
        (["--storage", "disk"], ["memory", "simulated"]),
    ])
    func anUnknownNameIsRefusedWithTheNamesThereAre(arguments: [String], names: [String]) throws {
        let flags = try ScenarioFlags.parse(arguments)
        let error = #expect(throws: (any Error).self) { try flags.options() }
        let message = String(describing: try #require(error))
        for name in names { #expect(message.contains(name), "\(message)") }
    }

    /// A missing or unreadable schedule is not a usage mistake: the error was followed by the top-level
    /// usage ("weft-sim <subcommand>") and exit status 64, which sent the reader to the wrong help.
    @Test func aScheduleThatCannotBeReadIsAPlainErrorWithoutUsage() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "weft-sim-missing-\(UUID().uuidString).json"
        ).path
        let result = try Self.run(["replay", path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("cannot read schedule \(path): no such file"), "\(result.stderr)")
        #expect(!result.stderr.contains("Usage:"), "\(result.stderr)")
    }
}
