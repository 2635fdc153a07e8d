import Foundation
import Testing
import WeftTestSupport

/// `WEFT_DIE_WITH_PARENT`: a `weft serve` started by a process that is then killed (a test process that
/// crashed, here a throwaway shell) ends with it; without the variable nothing changes.
@Suite(.serialized, .timeLimit(.minutes(5))) struct DaemonParentDeathTests {
    /// How long a daemon whose parent was killed may take to be gone: the signal is sent as the parent
    /// exits, so this is only scheduling slack on a loaded machine.
    static let secondsToDie = 5.0
    /// How long the throwaway shell would live if nobody killed it.
    static let shellSeconds = 30

    /// True while `pid` names a process that is not a zombie (a zombie has ended; its new parent, init or a
    /// subreaper, reaps it when it gets round to it).
    static func isAlive(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        let state = stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first
        return state != "Z" && state != "X"
    }

    /// Kills the shell as a test process dies (SIGKILL, no chance to clean up) and waits until it has ended:
    /// a zombie, not yet reaped. Foundation reaps it only once every holder of the socket it gave the shell
    /// has closed it, the daemon included, so `waitUntilExit` would wait for the daemon too.
    static func killAndAwait(shell: Process) async throws {
        kill(shell.processIdentifier, SIGKILL)
        try await eventually("the shell to end", seconds: secondsToDie) { !isAlive(shell.processIdentifier) }
    }

    /// A shell, started as tests start children, that starts `weft serve` in the background (`prefix` goes
    /// before the command: the variable it is given), writes the daemon's pid to a file and waits. Returns
    /// the shell, the daemon's pid and port once it listens.
    static func shellWithDaemon(
        _ scratch: Scratch, prefix: String
    ) async throws -> (shell: Process, daemon: Int32, port: Int) {
        let pidFile = scratch.file("daemon.pid")
        let output = scratch.file("daemon.out")
        let script = """
            \(prefix) "$0" serve --db "$1" --listen 127.0.0.1:0 --tokens "$2" --name hub > "$3" 2> "$4" &
            echo $! > "$5"
            exec sleep \(shellSeconds)
            """
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = [
            "-c", script, try WeftBinary.url().path, scratch.file("hub.sqlite"),
            try DaemonIntegrationTests.tokens(scratch, names: []), output, scratch.file("daemon.log"), pidFile,
        ]
        try ChildProcess.start(shell)
        var daemon: Int32?
        var port: Int?
        do {
            try await eventually("the daemon's pid and its listening line") {
                daemon = Int32(Daemon.read(pidFile).trimmingCharacters(in: .whitespacesAndNewlines))
                let line = Daemon.read(output).split(separator: "\n").first { $0.hasPrefix("listening ") }
                port = line.flatMap { $0.split(separator: ":").last }.flatMap { Int($0) }
                return daemon != nil && port != nil
            }
        } catch {
            if let daemon { kill(daemon, SIGKILL) }
            Daemon.waitForExit(shell, seconds: 0)
            throw WeftBinary.Failure(description: "\(error); log: \(Daemon.read(scratch.file("daemon.log")))")
        }
        guard let daemon, let port else {
            throw WeftBinary.Failure(description: "the daemon's pid or port went missing once read")
        }
        return (shell, daemon, port)
    }

    @Test func aDaemonWhoseParentIsKilledEndsWithItWhenTheVariableNamesThatParent() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let started = try await Self.shellWithDaemon(scratch, prefix: "\(ChildProcess.dieWithParentVariable)=$$")
        defer {
            if Self.isAlive(started.daemon) { kill(started.daemon, SIGKILL) }
            Daemon.waitForExit(started.shell, seconds: 0)
        }
        #expect(Self.isAlive(started.daemon))

        try await Self.killAndAwait(shell: started.shell)
        try await eventually("the daemon to end once its parent was killed", seconds: Self.secondsToDie) {
            !Self.isAlive(started.daemon)
        }
    }

    @Test func withoutTheVariableADaemonOutlivesItsParentAsBefore() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        // The shell inherited the variable (naming this test process) from ChildProcess: remove it.
        let started = try await Self.shellWithDaemon(scratch, prefix: "unset \(ChildProcess.dieWithParentVariable);")
        defer {
            // Cleanup cannot suspend: a short blocking wait for the SIGKILLed daemon.
            kill(started.daemon, SIGKILL)
            let deadline = Date().addingTimeInterval(Self.secondsToDie)
            while Self.isAlive(started.daemon), Date() < deadline { usleep(10_000) }
            Daemon.waitForExit(started.shell, seconds: 0)
        }
        try await Self.killAndAwait(shell: started.shell)
        // The death signal goes out as the parent exits, before it is a zombie: a daemon that still answers
        // now was never asked to die.
        let status = try await WeftBinary.run(
            ["status", "--server", "127.0.0.1:\(started.port)", "--server-name", "hub"],
            token: DaemonIntegrationTests.clientToken)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(Self.isAlive(started.daemon))
    }

    /// The child watches its parent *process* (a pidfd), not the thread that started it: a child started by
    /// a test thread that then ends (a Swift concurrency worker left idle ends after some seconds) lives on.
    /// (prctl's parent-death signal, tried first, fires when that thread ends.)
    @Test func aDaemonStartedFromAThreadThatEndedKeepsRunning() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let tokens = try DaemonIntegrationTests.tokens(scratch, names: [])
        final class Outcome: @unchecked Sendable {
            var launch: Result<Daemon.Launch, any Error>?
            var thread = ""
            let done = DispatchSemaphore(value: 0)
        }
        let outcome = Outcome()
        let database = scratch.file("hub.sqlite")
        Thread.detachNewThread {
            outcome.thread = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
            outcome.launch = Result { try Daemon.launch(database: database, tokens: tokens, name: "hub") }
            outcome.done.signal()
        }
        outcome.done.wait()
        let hub = try await Daemon(try #require(outcome.launch).get())
        defer { hub.stop() }
        #expect(!outcome.thread.isEmpty)
        try await eventually("the starting thread to end") { !FileManager.default.fileExists(atPath: outcome.thread) }
        let status = try await DaemonIntegrationTests.client(hub, name: "hub", ["status"])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(hub.process.isRunning)
    }

    /// A value that is not a pid, or a pid that is not the parent (the parent ended before the command could
    /// ask for the signal, or the variable was inherited by a grandchild), ends the command at once with a
    /// usage error, before it does anything.
    @Test func aVariableThatDoesNotNameTheParentIsAUsageError() async throws {
        let shell = URL(fileURLWithPath: "/bin/sh")
        let variable = ChildProcess.dieWithParentVariable
        for (script, reason) in [
            (#"\#(variable)=12x exec "$0" get /x --server 127.0.0.1:1"#, "invalid \(variable)"),
            (#"\#(variable)=-3 exec "$0" get /x --server 127.0.0.1:1"#, "invalid \(variable)"),
            // Not exec'd: the command's parent is the shell, not the test process the variable names.
            (#""$0" get /x --server 127.0.0.1:1; exit $?"#, "\(variable)=\(getpid()) is not the parent"),
        ] {
            let result = try await WeftBinary.run(
                ["-c", script, try WeftBinary.url().path], token: DaemonIntegrationTests.clientToken,
                executable: shell)
            #expect(result.status == 2, "\(script): \(result.stderr)")
            #expect(result.stderr.contains(#""code":"usage""#), "\(script): \(result.stderr)")
            #expect(result.stderr.contains(reason), "\(script): \(result.stderr)")
        }
        // Exec'd by the shell, the command keeps the shell's pid: its parent is still the test process.
        let execd = try await WeftBinary.run(
            ["-c", #"exec "$0" get /x --server 127.0.0.1:1"#, try WeftBinary.url().path],
            token: DaemonIntegrationTests.clientToken, executable: shell)
        #expect(execd.status == 3, "an unreachable daemon, as without the variable: \(execd.stderr)")
    }
}
