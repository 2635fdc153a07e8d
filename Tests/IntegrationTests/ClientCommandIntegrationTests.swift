import Foundation
import Testing

/// Client commands at the edges of their lives: a reader that goes away, a daemon that goes away.
@Suite(.serialized, .timeLimit(.minutes(2))) struct ClientCommandIntegrationTests {
    static let name = "hub"

    static func client(_ daemon: Daemon, _ arguments: [String], input: Data = Data()) throws -> (
        status: Int32, stdout: String, stderr: String
    ) {
        try DaemonIntegrationTests.client(daemon, name: name, arguments, input: input)
    }

    /// `weft watch /x | head -1`: the reader closes the pipe after one line. The command trapped on the
    /// next event (`try!` in FileHandle.write on EPIPE: a fatal error, a backtrace, status 132); it now
    /// ends quietly with 0: its reader has all it wanted.
    @Test func aWatchWhoseReaderClosedItsOutputEndsQuietly() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let hub = try Daemon(
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
        try watch.run()
        defer {
            if watch.isRunning { kill(watch.processIdentifier, SIGKILL) }
            watch.waitUntilExit()
        }
        // The first event (null), then the reader goes away, as `head -1` does.
        var first = Data()
        try eventually("the first event") {
            first += output.fileHandleForReading.availableData
            return first.contains(UInt8(ascii: "\n"))
        }
        #expect(String(decoding: first, as: UTF8.self) == "null\n")
        try output.fileHandleForReading.close()

        var index = 0
        try eventually("the watch to end once its output is closed") {
            index += 1
            _ = try Self.client(hub, ["set", "/x", "\(index)"])
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
    @Test func aFailureWhoseErrorOutputIsClosedStillExitsWithItsCode() throws {
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
        try command.run()
        let deadline = Date().addingTimeInterval(20)
        while command.isRunning && Date() < deadline { usleep(5_000) }
        if command.isRunning { kill(command.processIdentifier, SIGKILL) }
        command.waitUntilExit()
        #expect(command.terminationReason == .exit)
        #expect(command.terminationStatus == 3)
    }
}
