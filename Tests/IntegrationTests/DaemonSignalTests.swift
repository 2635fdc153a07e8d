import Foundation
import Testing
@_spi(Engine) import Weft
import WeftCore
import WeftTestSupport

/// SIGINT and SIGTERM sent to `weft serve` at moments a stop used to go wrong: while the replica loads.
@Suite(.serialized, .timeLimit(.minutes(5))) struct DaemonSignalTests {
    /// Enough ops that a debug daemon takes about a second and a half to load them: the window the
    /// signals are sent in, much longer than the few milliseconds the test takes to send them.
    static let opsInFile = 40_000

    /// Writes `count` ops to a new replica file at `path` through the embedded API, then closes it.
    static func writeOps(_ count: Int, to path: String) async throws {
        let replica = try Replica.open(at: path)
        for index in 0..<count {
            try replica.submit(path: try Path("/items/i\(index % 1_000)"), kind: .set(.int(Int64(index))), at: .now)
        }
        try await replica.flush()
        await replica.shutdown()
    }

    /// `weft serve` on `database`, started and not waited for; its log goes to `log`.
    static func startServe(database: String, log: String, scratch: Scratch) throws -> Process {
        let serve = Process()
        serve.executableURL = try WeftBinary.url()
        serve.arguments = [
            "serve", "--db", database, "--listen", "127.0.0.1:0", "--name", "hub",
            "--tokens", try DaemonIntegrationTests.tokens(scratch, names: []),
        ]
        serve.standardOutput = FileHandle.nullDevice
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        serve.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        try ChildProcess.start(serve)
        return serve
    }

    /// Polls every 2 ms, at most `seconds`, until the log holds `text` or the process ended. It blocks its
    /// thread on purpose: these tests signal the daemon within milliseconds of a log line (while the
    /// replica loads), which a suspended test, resumed on a busy machine, may miss.
    static func waitFor(_ text: String, in log: String, of process: Process, seconds: Double = 20) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !Daemon.read(log).contains(text) {
            guard process.isRunning, Date() < deadline else {
                throw WeftBinary.Failure(description: "no \"\(text)\" in the log of weft serve: \(Daemon.read(log))")
            }
            usleep(2_000)
        }
    }

    /// A stop asked while the replica loads (a service manager stopping a slow start) is a clean stop:
    /// it was the default action of SIGTERM, status 143 and no log line, as the handlers were installed
    /// only once the load ended. The load is not interrupted; the daemon stops right after it, without
    /// listening.
    @Test func aSIGTERMWhileTheReplicaLoadsStopsTheDaemonCleanly() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let database = scratch.file("big.sqlite")
        try await Self.writeOps(Self.opsInFile, to: database)
        let log = scratch.file("hub.log")
        let serve = try Self.startServe(database: database, log: log, scratch: scratch)
        defer { Daemon.waitForExit(serve, seconds: 0) }
        try Self.waitFor("opening the replica", in: log, of: serve)
        kill(serve.processIdentifier, SIGTERM)
        Daemon.waitForExit(serve, seconds: 20)
        let text = Daemon.read(log)
        #expect(serve.terminationReason == .exit, "\(text)")
        #expect(serve.terminationStatus == 0, "\(text)")
        #expect(text.contains("signal received, shutting down"), "\(text)")
        #expect(text.contains("weft serve stopped cleanly"), "\(text)")
        // The signal came during the load: the daemon never listened.
        #expect(!text.contains("listening"), "\(text)")
    }

    /// A second signal while the daemon stops ends it at once (a stop stuck on a slow disk, or here a long
    /// load): it was logged and ignored, and the stop went on. The exit says it was forced, status 128 + 15;
    /// what was durable stays in the file.
    @Test func aSecondSIGTERMWhileStoppingForcesTheExitAndSaysSo() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let database = scratch.file("big.sqlite")
        try await Self.writeOps(Self.opsInFile, to: database)
        let log = scratch.file("hub.log")
        let serve = try Self.startServe(database: database, log: log, scratch: scratch)
        defer { Daemon.waitForExit(serve, seconds: 0) }
        try Self.waitFor("opening the replica", in: log, of: serve)
        kill(serve.processIdentifier, SIGTERM)
        try Self.waitFor("signal received, shutting down", in: log, of: serve)
        kill(serve.processIdentifier, SIGTERM)
        Daemon.waitForExit(serve, seconds: 20)
        let text = Daemon.read(log)
        #expect(serve.terminationReason == .exit, "\(text)")
        #expect(serve.terminationStatus == 128 + SIGTERM, "\(text)")
        #expect(text.contains("critical"), "\(text)")
        #expect(text.contains("stop forced"), "\(text)")
        #expect(!text.contains("stopped cleanly"), "\(text)")
        let replica = try Replica.open(at: database)
        try await replica.waitUntilLoaded()
        #expect(replica.value(at: try Path("/items/i999")) == .int(Int64(Self.opsInFile - 1)))
        await replica.shutdown()
    }
}
