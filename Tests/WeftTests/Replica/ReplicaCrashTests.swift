import Foundation
import Testing
import WeftCore
import WeftStore
import WeftTestSupport

@_spi(Engine) @testable import Weft

/// Crash safety with real processes: `weft _crash-writer` writes and prints each op once durable; the
/// test kills it with SIGKILL at random moments, reopens the file, and checks that every op reported
/// durable is there and that the tree is the fold of the log.
///
/// The rounds are split in three cases that run side by side: serialized, this suite was the last to end
/// in a full run (its 28 rounds took 78-104 s of wall time under the run's load).
@Suite(.timeLimit(.minutes(5))) struct ReplicaCrashTests {
    /// The `weft` executable built next to the test bundle (`swift build --build-tests` builds both).
    static let writer: URL? = {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = bundle.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("weft")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }()

    /// Crashes and restarts one database file lives through.
    static let roundsPerFile = 5

    /// Ops a writer makes at most in a round, then it ends cleanly: a third of a second of writing on an
    /// idle machine (kills land within a quarter of a second of its start), and a bound on the log a
    /// round must check when a loaded run keeps the test from killing it on time (unbounded, a writer
    /// starved of its kill wrote for seconds, and checking its log slowed the whole run further).
    static let opsMaxPerRound = 15_000

    @Test(arguments: [(Durability.normal, 10, 7), (Durability.normal, 10, 17), (Durability.full, 8, 11)])
    func everyOpReportedDurableSurvivesAKill(durability: Durability, rounds: Int, seed: UInt64) async throws {
        let writer = try #require(Self.writer, "build the weft executable: swift build --build-tests")
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        var generator = SeededGenerator(seed: seed)
        var durable = Set<String>()
        var path = ""
        for round in 0..<rounds {
            // Each file lives through several crashes and restarts, then a new one starts (bounded time).
            if round % Self.roundsPerFile == 0 {
                path = directory.appendingPathComponent("weft-\(round).sqlite").path
                durable = []
            }
            let child = try CrashChild(
                writer: writer, path: path, durability: durability, seed: seed &* 1_000 &+ UInt64(round + 1),
                arguments: ["--ops-max", "\(Self.opsMaxPerRound)"])
            // Killed at a random moment of its writing life (its start, a debug build's, takes longer).
            let started = await eventually(timeoutSeconds: 30) { child.isReady }
            try await Task.sleep(nanoseconds: generator.below(250) * 1_000_000)
            let reported = child.kill()
            #expect(started && reported.ready, "round \(round): the writer never started: \(reported.errors)")
            durable.formUnion(reported.durable)

            let store = try SQLiteStore(path: path)
            let log = try store.allOps()
            let stamps = Set(log.map(\.op.stamp.text))
            let lost = durable.subtracting(stamps)
            #expect(lost.isEmpty, "round \(round): \(lost.count) ops reported durable are gone")
            let tree = try store.readTree()
            let folded = ReferenceFold.fold(
                log.map(\.op), base: try store.readBase(at: .root), registry: Workload.registry)
            #expect(tree == folded.state, "round \(round): the tree is not the fold of the log")
            try store.close()

            let replica = try Replica.open(at: path, options: ReplicaFixture.crashOptions)
            #expect(replica.snapshot() == tree, "round \(round): the replica loads what the file holds")
            await replica.shutdown()
        }
        #expect(!durable.isEmpty)
    }

    @Test func aReplicaOpenInAnotherProcessIsReportedWithItsPid() async throws {
        let writer = try #require(Self.writer, "build the weft executable: swift build --build-tests")
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("weft.sqlite").path
        let child = try CrashChild(writer: writer, path: path, durability: .normal, seed: 5)
        #expect(await eventually(timeoutSeconds: 30) { child.isReady })
        let error = #expect(throws: WeftError.self) { try Replica.open(at: path) }
        #expect(error?.code == .databaseInUse)
        #expect(
            error?.message
                == "database \(path) is in use by another process (pid \(child.pid)); stop it, or open another file")
        _ = child.kill()
        let replica = try Replica.open(at: path)
        await replica.shutdown()
    }
}

extension ReplicaFixture {
    static var crashOptions: ReplicaOptions {
        var options = ReplicaOptions()
        options.functions = Workload.registry
        return options
    }
}

/// A running `weft _crash-writer`, and what it printed.
final class CrashChild: @unchecked Sendable {
    struct Report {
        var ready: Bool
        var durable: [String]
        var errors: String
    }

    private let process = Process()
    private let output = Pipe()
    private let errors = Pipe()
    private let lock = NSLock()
    private var text = ""
    /// Signalled when the reader has met the end of the child's output.
    private let outputEnded = DispatchSemaphore(value: 0)

    init(writer: URL, path: String, durability: Durability, seed: UInt64, arguments: [String] = []) throws {
        process.executableURL = writer
        process.arguments =
            ["_crash-writer", "--db", path, "--durability", "\(durability)", "--seed", "\(seed)"] + arguments
        process.standardOutput = output
        process.standardError = errors
        try ChildProcess.start(process)
        // A thread of its own reads the output to its end with blocking reads. A readability handler
        // (a dispatch source) cleared while it may still run, then a read of the same handle, crashed
        // libdispatch now and then on Linux.
        let handle = output.fileHandleForReading
        Thread.detachNewThread { [self] in
            while case let data = handle.availableData, !data.isEmpty {
                lock.withLock { text += String(decoding: data, as: UTF8.self) }
            }
            outputEnded.signal()
        }
    }

    var pid: Int32 { process.processIdentifier }

    var isReady: Bool { lock.withLock { text.hasPrefix("ready") } }

    /// Kills the child with SIGKILL and returns what it printed before.
    func kill() -> Report {
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        outputEnded.wait()
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let all = lock.withLock { text }
        // A line cut by the kill is not a report.
        let lines = all.split(separator: "\n", omittingEmptySubsequences: true)
        let complete = all.hasSuffix("\n") ? lines : lines.dropLast()
        let durable = complete.filter { $0.hasPrefix("durable ") }.map { String($0.dropFirst("durable ".count)) }
        return Report(ready: all.hasPrefix("ready"), durable: durable, errors: errorText)
    }
}
