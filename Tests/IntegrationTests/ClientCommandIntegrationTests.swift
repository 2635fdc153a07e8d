import Foundation
import Testing
import WeftTestSupport

/// Client commands at the edges of their lives: bad input, an output that goes away or fails, a server
/// that is not a daemon.
@Suite(.serialized, .timeLimit(.minutes(5))) struct ClientCommandIntegrationTests {
    static let name = "hub"

    static func client(_ daemon: Daemon, _ arguments: [String], input: Data = Data()) async throws -> (
        status: Int32, stdout: String, stderr: String
    ) {
        try await DaemonIntegrationTests.client(daemon, name: name, arguments, input: input)
    }

    /// `weft watch /x | head -1`: the reader closes the pipe after one line. The command trapped on the
    /// next event (`try!` in FileHandle.write on EPIPE: a fatal error, a backtrace, status 132); it now
    /// ends quietly with 0: its reader has all it wanted.
    @Test func aWatchWhoseReaderClosedItsOutputEndsQuietly() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let hub = try await Daemon(
            database: scratch.file("hub.sqlite"), tokens: try DaemonIntegrationTests.tokens(scratch, names: []),
            name: Self.name)
        defer { hub.stop() }

        let watch = Process()
        watch.executableURL = try WeftBinary.url()
        watch.arguments = ["watch", "/x", "--server", "127.0.0.1:\(hub.port)", "--server-name", Self.name]
        var environment = ProcessInfo.processInfo.environment
        environment["WEFT_TOKEN"] = DaemonIntegrationTests.clientToken
        watch.environment = environment
        let output = Pipe()
        let errors = scratch.file("watch.err")
        _ = FileManager.default.createFile(atPath: errors, contents: nil)
        watch.standardOutput = output
        watch.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errors))
        try ChildProcess.start(watch)
        defer {
            if watch.isRunning { kill(watch.processIdentifier, SIGKILL) }
            watch.waitUntilExit()
        }
        // The first event (null), then the reader goes away, as `head -1` does.
        var first = Data()
        try await eventually("the first event") {
            first += try output.fileHandleForReading.readWithoutWaiting()
            return first.contains(UInt8(ascii: "\n"))
        }
        #expect(String(decoding: first, as: UTF8.self) == "null\n")
        try output.fileHandleForReading.close()

        var index = 0
        try await eventually("the watch to end once its output is closed") {
            index += 1
            _ = try await Self.client(hub, ["set", "/x", "\(index)"])
            return !watch.isRunning
        }
        watch.waitUntilExit()
        let stderr = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
        #expect(watch.terminationReason == .exit)
        #expect(watch.terminationStatus == 0, "\(stderr)")
        #expect(!stderr.contains("Fatal error"), "\(stderr)")
    }

    /// A failure whose standard error has no reader: the JSON cannot be written, and the command trapped
    /// (status 132) instead of exiting with the failure's code.
    @Test func aFailureWhoseErrorOutputIsClosedStillExitsWithItsCode() async throws {
        let command = Process()
        command.executableURL = try WeftBinary.url()
        command.arguments = ["get", "/x", "--server", "127.0.0.1:1"]
        var environment = ProcessInfo.processInfo.environment
        environment["WEFT_TOKEN"] = DaemonIntegrationTests.clientToken
        command.environment = environment
        let errors = Pipe()
        try errors.fileHandleForReading.close()
        command.standardError = errors
        command.standardOutput = FileHandle.nullDevice
        try ChildProcess.start(command)
        let deadline = Date().addingTimeInterval(20)
        while command.isRunning && Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
        if command.isRunning { kill(command.processIdentifier, SIGKILL) }
        command.waitUntilExit()
        #expect(command.terminationReason == .exit)
        #expect(command.terminationStatus == 3)
    }

    /// `--server` pointing at something that is not a daemon (here a web server answering at once): the
    /// command printed a swift-log warning line on stderr before its JSON, and the JSON said only
    /// "connectionLost: the connection closed". Stderr is now one JSON object that says what came back.
    @Test func aServerThatIsNotADaemonIsOneJSONErrorNamingTheCause() async throws {
        let server = try NotADaemon(answer: "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
        defer { server.stop() }
        let result = try await WeftBinary.run(
            ["get", "/x", "--server", "127.0.0.1:\(server.port)"], token: DaemonIntegrationTests.clientToken)
        #expect(result.status == 3)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(result.stderr)")
        #expect(lines.first?.hasPrefix(#"{"error":{"code":"sync""#) == true, "\(result.stderr)")
        #expect(result.stderr.contains("not a weft daemon"), "\(result.stderr)")
        #expect(result.stderr.contains("header announces"), "\(result.stderr)")
    }

    /// Bad input is a usage error (2) whether or not the daemon can be reached: the commands connected
    /// first, so with the daemon down a bad path, JSON or step was reported as unreachable (3), and with
    /// a daemon that does not answer only after the whole connect timeout.
    @Test func badInputIsAUsageErrorEvenWhenTheDaemonCannotBeReached() async throws {
        let nobody = ["--server", "127.0.0.1:1"]
        for (arguments, reason) in [
            (["set", "/a.b", "1"], "invalid path"), (["get", "/a#b"], "invalid path"),
            (["set", "/x", "{not json"], "invalid JSON"), (["push", "/x", "[1,"], "invalid JSON"),
            (["merge", "/x", #"{"a":1,"a/b":2}"#], "overlap"), (["merge", "/x", "{}"], "at least one member"),
            (["incr", "/x", "abc"], "invalid JSON"), (["incr", "/x", #""3""#], "is not a number"),
            (["watch", "/a[0]"], "invalid path"),
        ] {
            let result = try await WeftBinary.run(arguments + nobody, token: DaemonIntegrationTests.clientToken)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(#""code":"usage""#), "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(reason), "\(arguments): \(result.stderr)")
        }
        // Good input still meets the unreachable daemon.
        #expect(try await WeftBinary.run(["set", "/x", "1"] + nobody, token: DaemonIntegrationTests.clientToken).status == 3)
    }

    /// A result that cannot be written (standard output on a full disk, here /dev/full) is a failure: `get`
    /// exited 0 with nothing written, so `weft get /x > backup.json` on a full disk looked like a success.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/full")))
    func aResultThatCannotBeWrittenIsAFailure() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let hub = try await Daemon(
            database: scratch.file("hub.sqlite"), tokens: try DaemonIntegrationTests.tokens(scratch, names: []),
            name: Self.name)
        defer { hub.stop() }
        #expect(try await Self.client(hub, ["set", "/x", "1"]).status == 0)
        for arguments in [["get", "/x"], ["incr", "/x"], ["watch", "/x"]] {
            let command = Process()
            command.executableURL = try WeftBinary.url()
            command.arguments = arguments + ["--server", "127.0.0.1:\(hub.port)", "--server-name", Self.name]
            var environment = ProcessInfo.processInfo.environment
            environment["WEFT_TOKEN"] = DaemonIntegrationTests.clientToken
            command.environment = environment
            command.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/full"))
            let errors = scratch.file("errors")
            _ = FileManager.default.createFile(atPath: errors, contents: nil)
            command.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errors))
            try ChildProcess.start(command)
            let deadline = Date().addingTimeInterval(20)
            while command.isRunning && Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
            if command.isRunning { kill(command.processIdentifier, SIGKILL) }
            command.waitUntilExit()
            let stderr = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
            #expect(command.terminationReason == .exit, "\(arguments)")
            #expect(command.terminationStatus == 1, "\(arguments): \(stderr)")
            #expect(stderr.contains("cannot write to standard output: No space left on device"), "\(stderr)")
        }
    }

    /// A command started with its standard output closed (`weft get /x >&-`): the descriptor went to the
    /// next file the process opened (the event loop's epoll descriptor, or a socket), the result was
    /// written there, and the command failed with "cannot write to standard output: Invalid argument".
    /// Closed standard descriptors now open on /dev/null first, as daemons and careful tools do.
    @Test func aCommandWithItsStandardOutputClosedWritesNothingElsewhere() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let hub = try await Daemon(
            database: scratch.file("hub.sqlite"), tokens: try DaemonIntegrationTests.tokens(scratch, names: []),
            name: Self.name)
        defer { hub.stop() }
        #expect(try await Self.client(hub, ["set", "/x", "1"]).status == 0)
        let script = #"exec "$0" get /x --server 127.0.0.1:"$1" --server-name hub >&-"#
        let result = try await WeftBinary.run(
            ["-c", script, try WeftBinary.url().path, "\(hub.port)"], token: DaemonIntegrationTests.clientToken,
            executable: URL(fileURLWithPath: "/bin/sh"))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        #expect(!hub.log.contains("malformed frame"), "\(hub.log)")
    }
}

/// A TCP listener on 127.0.0.1 that writes `answer` to every connection and keeps it open.
final class NotADaemon: @unchecked Sendable {
    let port: Int
    private let socket: Int32
    private let lock = NSLock()
    private var accepted: [Int32] = []

    init(answer: String) throws {
        #if canImport(Glibc)
            let listening = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let listening = Darwin.socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(listening, generic, length) == 0 && listen(listening, 8) == 0
                    && getsockname(listening, generic, &length) == 0
            }
        }
        guard listening >= 0, bound else {
            throw WeftBinary.Failure(description: "cannot listen on 127.0.0.1: errno \(errno)")
        }
        socket = listening
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in
            while case let connection = accept(listening, nil, nil), connection >= 0 {
                lock.withLock { accepted.append(connection) }
                _ = Array(answer.utf8).withUnsafeBytes { send(connection, $0.baseAddress, $0.count, 0) }
            }
        }
    }

    /// Stops listening and closes every connection.
    func stop() {
        shutdown(socket, Int32(SHUT_RDWR))
        close(socket)
        for connection in lock.withLock({ accepted }) { close(connection) }
    }
}
