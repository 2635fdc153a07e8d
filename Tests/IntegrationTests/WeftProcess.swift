import Foundation
import WeftTestSupport

/// Runs the built `weft` executable: daemons that stay up until killed, and client commands that finish.
enum WeftBinary {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The `weft` executable built next to this test bundle (or `$WEFT_BINARY`).
    static func url() throws -> URL {
        if let path = ProcessInfo.processInfo.environment["WEFT_BINARY"] {
            return URL(fileURLWithPath: path)
        }
        var directory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        #if canImport(Darwin)
            directory = Bundle.main.bundleURL.deletingLastPathComponent()
        #endif
        for candidate in [directory, directory.deletingLastPathComponent()] {
            let binary = candidate.appendingPathComponent("weft")
            if FileManager.default.isExecutableFile(atPath: binary.path) { return binary }
        }
        throw Failure(description: "no weft executable next to \(directory.path); build it or set WEFT_BINARY")
    }

    /// Runs a client command to completion, at most `seconds`, with `input` on its standard input (or
    /// `executable`, a shell that starts it, with those arguments).
    /// Its output goes to files, not pipes: a pipe read only after the exit would stall a command
    /// that prints more than the pipe holds.
    static func run(
        _ arguments: [String], token: String, input: Data = Data(), seconds: Double = 20, executable: URL? = nil
    ) async throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = try executable ?? url()
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["WEFT_TOKEN"] = token
        process.environment = environment
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("weft-run-\(UUID().uuidString)")
        let files = ["in", "out", "err"].map { base.appendingPathExtension($0) }
        defer { for file in files { try? FileManager.default.removeItem(at: file) } }
        try input.write(to: files[0])
        for file in files.dropFirst() { try Data().write(to: file) }
        process.standardInput = try FileHandle(forReadingFrom: files[0])
        process.standardOutput = try FileHandle(forWritingTo: files[1])
        process.standardError = try FileHandle(forWritingTo: files[2])
        try ChildProcess.start(process)
        let deadline = Date().addingTimeInterval(seconds)
        // Polled with a suspension, not a sleep: a test waiting here leaves its thread to the others.
        while process.isRunning && Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw Failure(description: "weft \(arguments.joined(separator: " ")) ran longer than \(seconds) s")
        }
        let stdout = String(decoding: try Data(contentsOf: files[1]), as: UTF8.self)
        let stderr = String(decoding: try Data(contentsOf: files[2]), as: UTF8.self)
        return (process.terminationStatus, stdout.trimmingCharacters(in: .whitespacesAndNewlines), stderr)
    }
}

/// A `weft serve` child process: started, its port read from its first stdout line, killed on `stop`.
final class Daemon {
    let process: Process
    let port: Int
    let database: String
    private let logPath: String
    /// The daemon's standard output, and what was read of it past the first line.
    private let reader: FileHandle
    private var unread = ""

    /// A `weft serve` process started, whose first line is not read yet.
    struct Launch {
        let process: Process
        let database: String
        let logPath: String
        let reader: FileHandle
    }

    /// Starts `weft serve` and waits (at most `seconds`) for its `listening HOST:PORT` line. With
    /// `fileBlocksMax`, the daemon may not write files beyond that many 512-byte blocks (`ulimit -f`): its
    /// disk fails as a full one does. With `openFiles`, it starts with that soft and hard limit of open
    /// files (`ulimit -S -n`, `ulimit -H -n`).
    convenience init(
        database: String, port: Int = 0, peers: [Int] = [], tokens: String, name: String, options: [String] = [],
        fileBlocksMax: Int? = nil, openFiles: (soft: Int, hard: Int)? = nil, seconds: Double = 20
    ) async throws {
        let launch = try Self.launch(
            database: database, port: port, peers: peers, tokens: tokens, name: name, options: options,
            fileBlocksMax: fileBlocksMax, openFiles: openFiles)
        try await self.init(launch, seconds: seconds)
    }

    /// Starts `weft serve` (see the initializer), without waiting for it.
    static func launch(
        database: String, port: Int = 0, peers: [Int] = [], tokens: String, name: String, options: [String] = [],
        fileBlocksMax: Int? = nil, openFiles: (soft: Int, hard: Int)? = nil
    ) throws -> Launch {
        let process = Process()
        let logPath = database + ".\(name).log"
        var arguments = [
            "serve", "--db", database, "--listen", "127.0.0.1:\(port)", "--tokens", tokens, "--name", name,
        ]
        for peer in peers { arguments += ["--peer", "127.0.0.1:\(peer)"] }
        var limits: [String] = []
        if let fileBlocksMax {
            // SIGXFSZ stays ignored across exec, so a write past the limit fails instead of killing.
            limits += ["trap '' XFSZ", "ulimit -f \(fileBlocksMax)"]
        }
        if let openFiles { limits += ["ulimit -S -n \(openFiles.soft)", "ulimit -H -n \(openFiles.hard)"] }
        if !limits.isEmpty {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            let script = (limits + ["exec \"$0\" \"$@\""]).joined(separator: "; ")
            process.arguments = ["-c", script, try WeftBinary.url().path] + arguments + options
        } else {
            process.executableURL = try WeftBinary.url()
            process.arguments = arguments + options
        }
        let output = Pipe()
        process.standardOutput = output
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        try ChildProcess.start(process)
        let reader = output.fileHandleForReading
        return Launch(process: process, database: database, logPath: logPath, reader: reader)
    }

    /// Waits (at most `seconds`) for the `listening HOST:PORT` line of a daemon launched.
    init(_ launch: Launch, seconds: Double = 20) async throws {
        process = launch.process
        database = launch.database
        logPath = launch.logPath
        reader = launch.reader
        let deadline = Date().addingTimeInterval(seconds)
        var text = ""
        while !text.contains("\n") {
            guard Date() < deadline, process.isRunning else {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                throw WeftBinary.Failure(description: "weft serve did not start: \(Self.read(logPath))")
            }
            let chunk = try Self.readAvailable(reader)
            if chunk.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard let line = text.split(separator: "\n").first, line.hasPrefix("listening "),
            let colon = line.lastIndex(of: ":"), let bound = Int(line[line.index(after: colon)...])
        else {
            kill(process.processIdentifier, SIGKILL)
            throw WeftBinary.Failure(description: "unexpected first line from weft serve: \(text)")
        }
        self.port = bound
        unread = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).dropFirst().first.map(String.init) ?? ""
    }

    /// Reads the next line of the daemon's standard output (at most `seconds`), such as `http listening`.
    func nextLine(seconds: Double = 20) async throws -> String {
        let deadline = Date().addingTimeInterval(seconds)
        while !unread.contains("\n") {
            guard Date() < deadline, process.isRunning else {
                throw WeftBinary.Failure(description: "no further line from weft serve: \(log)")
            }
            let chunk = try Self.readAvailable(reader)
            if chunk.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
            unread += String(decoding: chunk, as: UTF8.self)
        }
        let parts = unread.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
        unread = parts.count > 1 ? String(parts[1]) : ""
        return String(parts[0])
    }

    /// What the pipe holds now, without waiting (``FileHandle/readWithoutWaiting()``).
    static func readAvailable(_ handle: FileHandle) throws -> Data { try handle.readWithoutWaiting() }

    /// The daemon's log so far.
    var log: String { Self.read(logPath) }

    /// The text of a log file, empty when it cannot be read.
    static func read(_ path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }

    /// Waits (at most `seconds`, then SIGKILL) for `process` to end.
    static func waitForExit(_ process: Process, seconds: Double) {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(5_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Sends `signal` and waits (at most 10 s, then SIGKILL) for the process to end; returns its status.
    @discardableResult
    func stop(_ signal: Int32 = SIGKILL) -> Int32 {
        guard process.isRunning else { return process.terminationStatus }
        kill(process.processIdentifier, signal)
        Self.waitForExit(process, seconds: 10)
        return process.terminationStatus
    }

    deinit { stop() }
}

/// A temporary folder for databases and token files, removed by `remove()`.
struct Scratch {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "weft-integration-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { path + "/" + name }

    func write(_ name: String, _ text: String) throws -> String {
        try text.write(toFile: file(name), atomically: true, encoding: .utf8)
        return file(name)
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// Polls `condition` every 50 ms until it holds, at most `seconds`, suspending between polls.
func eventually(_ what: String, seconds: Double = 20, _ condition: () async throws -> Bool) async throws {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(50))
    }
    if try await condition() { return }
    throw WeftBinary.Failure(description: "timed out after \(seconds) s waiting for \(what)")
}

/// Plain TCP connections that say nothing, to fill a daemon's connection slots.
enum RawSocket {
    /// A socket connected to 127.0.0.1:`port` (at most 2 s), or nil.
    static func connect(port: Int) -> Int32? {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return nil }
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard status == 0 else {
            close(socket)
            return nil
        }
        return socket
    }
}

extension FileHandle {
    /// What the pipe holds now, without waiting: empty when nothing is there yet or at its end. A test
    /// polling a child's output this way suspends between polls instead of blocking its thread
    /// (`availableData` waits for data, and holds one of the few threads every test shares).
    func readWithoutWaiting() throws -> Data {
        let flags = fcntl(fileDescriptor, F_GETFL)
        if flags & O_NONBLOCK == 0 { _ = fcntl(fileDescriptor, F_SETFL, flags | O_NONBLOCK) }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(fileDescriptor, $0.baseAddress, $0.count) }
        if count > 0 { return Data(buffer[0..<count]) }
        guard count < 0, errno != EAGAIN, errno != EINTR else { return Data() }
        throw WeftBinary.Failure(description: "reading a child's output failed: errno \(errno)")
    }
}
