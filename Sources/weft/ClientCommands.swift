import ArgumentParser
import Foundation
import Logging
import Weft
import WeftCore
import WeftSync

/// Options shared by every command that talks to a running `weft serve`.
struct ClientOptions: ParsableArguments {
    @Option(help: "The daemon, as HOST:PORT.")
    var server: String = "127.0.0.1:7700"

    @Option(help: "The secret shared with the daemon (16 to 1024 bytes); defaults to $WEFT_TOKEN.")
    var token: String?

    @Option(help: "The name this client's token is filed under in the daemon's token file.")
    var name: String = "client"

    @Option(help: "The name the daemon introduces itself with (its --name).")
    var serverName: String = "weft"

    @Option(help: "How long connecting and authenticating may take, in milliseconds.")
    var timeout: Int = 5_000

    func validate() throws {
        _ = try endpoint()
        guard (1...NetTimeoutBounds.millisecondsMax).contains(timeout) else {
            throw ValidationError("--timeout must be in 1...\(NetTimeoutBounds.millisecondsMax)")
        }
    }

    /// `--server` split into host and port.
    func endpoint() throws(ValidationError) -> (host: String, port: Int) {
        try HostPort.parse(server, option: "--server")
    }

    /// Connects and authenticates, or exits with a clear message and the matching code.
    func connect() async throws -> SyncClient {
        guard let secret = token ?? ProcessInfo.processInfo.environment["WEFT_TOKEN"] else {
            throw ClientFailure(code: .usage, "no token: pass --token or set WEFT_TOKEN")
        }
        let authToken: AuthToken
        do {
            authToken = try AuthToken(string: secret)
        } catch {
            throw ClientFailure(code: .usage, "invalid token: \(error)")
        }
        let (host, port) = try endpoint()
        do {
            return try await SyncClient.connect(
                host: host, port: port, name: name, token: authToken, serverName: serverName,
                timeoutMilliseconds: timeout)
        } catch {
            throw ClientFailure(error)
        }
    }
}

/// Bounds of the client's connect timeout (WeftNet's connect limit).
enum NetTimeoutBounds {
    static let millisecondsMax = 10_000
}

/// A client command failed: printed as JSON on stderr, with an exit code per kind of failure.
struct ClientFailure: Error {
    /// Exit codes of the client commands (documented in Docs/CLI.md).
    enum Code: Int32 {
        /// The daemon refused or failed the request (bad path, invalid value…).
        case requestFailed = 1
        /// Bad arguments or a missing token.
        case usage = 2
        /// The daemon could not be reached, or the connection broke.
        case unreachable = 3
        /// The daemon refused the token, or the token may not touch the path.
        case authentication = 4
    }

    let code: Code
    let kind: String
    let message: String

    init(code: Code, _ message: String) {
        self.code = code
        kind = code == .usage ? "usage" : "client"
        self.message = message
    }

    init(_ error: WeftError) {
        // The daemon's refusal comes in a reply ("requestFailed: …") or, when it ends the connection (a
        // watched value that outgrew a frame), in an error frame ("peer reported limitExceeded: …").
        let fromPeer = "peer reported "
        let refusal = error.message.hasPrefix(fromPeer) ? error.message.dropFirst(fromPeer.count) : error.message[...]
        switch error.code {
        case .authentication: code = .authentication
        case .sync where refusal.hasPrefix("requestFailed") || refusal.hasPrefix("limitExceeded"):
            code = .requestFailed
        case .sync, .shutDown, .protocolMismatch: code = .unreachable
        default: code = .requestFailed
        }
        kind = error.code.rawValue
        message = error.message
    }

    /// Prints the failure on stderr and exits with its code.
    func exit() -> Never {
        let object: Value = .object([
            "error": .object(["code": .string(kind), "message": .string(message)])
        ])
        // Nothing more to say when standard error is gone; the exit code still tells.
        _ = StandardStream.emit(object.jsonString() + "\n", to: STDERR_FILENO)
        Foundation.exit(code.rawValue)
    }
}

/// Runs one client command against the daemon: connect, `body`, close; failures exit with their code.
func runClient(_ options: ClientOptions, _ body: (SyncClient) async throws -> Void) async -> Never {
    await runClient(options, input: {}) { client, _ in try await body(client) }
}

/// Runs one client command whose `input` (paths, values, read from the arguments or standard input) is
/// checked before connecting: bad input is a usage error whether or not the daemon can be reached.
func runClient<Input>(
    _ options: ClientOptions, input: () throws -> Input, _ body: (SyncClient, Input) async throws -> Void
) async -> Never {
    // Stderr carries one JSON object: what the connection logs (a malformed frame…) is in its error.
    LoggingSystem.bootstrap { _ in SwiftLogNoOpLogHandler() }
    do {
        let checked = try input()
        let client = try await options.connect()
        do {
            try await body(client, checked)
        } catch {
            await client.close()
            throw error
        }
        await client.close()
        Foundation.exit(0)
    } catch let failure as ClientFailure {
        failure.exit()
    } catch let error as WeftError {
        ClientFailure(error).exit()
    } catch {
        ClientFailure(code: .requestFailed, "\(error)").exit()
    }
}

/// Parses command-line paths and JSON values, with errors that name what was wrong.
enum ClientInput {
    /// A path argument: not empty, valid UTF-8 as typed, and valid as a path.
    static func path(_ text: String) throws -> Path {
        guard !text.isEmpty else {
            throw ClientFailure(code: .usage, "invalid path \"\": a path is not empty; the root is /")
        }
        try requireUTF8(text, what: "path")
        do {
            return try Path(text)
        } catch {
            throw ClientFailure(code: .usage, "invalid path \(text): \(error)")
        }
    }

    /// The path of a write that may replace what is there (`set`, `merge`, `incr`): one that resolves to
    /// the root (`/`, `.`, `/a/..`) would replace the whole tree, so it takes `--root` (a script's
    /// `weft set "/users/$NAME"` with `NAME=..` wiped everything).
    static func writePath(_ text: String, root: Bool) throws -> Path {
        let path = try path(text)
        guard !path.isRoot || root else {
            throw ClientFailure(
                code: .usage,
                "path \(text) resolves to the root: a write there replaces the whole tree; pass --root if that is meant"
            )
        }
        return path
    }

    /// Refuses an argument that was not valid UTF-8 on the command line: Swift repairs it with U+FFFD, so
    /// `weft set $'/tp/x\xffy' 1` wrote the key `x\u{FFFD}y`. The raw arguments tell a repaired byte from
    /// a U+FFFD the user typed.
    static func requireUTF8(_ text: String, what: String) throws {
        guard text.unicodeScalars.contains("\u{FFFD}") else { return }
        for index in 0..<Int(CommandLine.argc) {
            guard let raw = CommandLine.unsafeArgv[index], String(validatingCString: raw) == nil else { continue }
            if String(cString: raw) == text {
                throw ClientFailure(code: .usage, "invalid \(what) \(shown(text)): it is not valid UTF-8")
            }
        }
    }

    /// A JSON argument's value; `-` reads it from standard input.
    static func json(_ argument: String) throws -> Value { try value(jsonText(argument)) }

    static func value(_ text: String) throws -> Value {
        do {
            return try Value(json: text)
        } catch {
            throw ClientFailure(code: .usage, "invalid JSON \(shown(text)): \(error)")
        }
    }

    /// A JSON argument's text: the argument itself, or all of standard input when it is `-` (a value
    /// too large for a command line: the system caps one argument at 128 KiB).
    static func jsonText(_ argument: String) throws -> String {
        guard argument == "-" else {
            try requireUTF8(argument, what: "JSON")
            return argument
        }
        guard let text = String(validating: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self) else {
            throw ClientFailure(code: .usage, "standard input is not UTF-8 text")
        }
        return text
    }

    /// `text` for an error message: at most 80 characters of it.
    static func shown(_ text: String) -> String { text.count <= 80 ? text : text.prefix(80) + "…" }

    /// The children of a merge at `path`: a JSON object whose names are relative paths, checked as the
    /// daemon checks them (depth from the root, sizes, no two overlapping), so that a bad merge is a usage
    /// error here and not a request the daemon closes the session over.
    static func mergeChildren(_ argument: String, under path: Path) throws -> [MergeChild] {
        let text = try jsonText(argument)
        var children: [MergeChild] = []
        for (name, value) in try members(text) {
            children.append(MergeChild(relative: try self.path(name), value: value))
        }
        do {
            return try ValueCheck.mergeChildren(children, under: path)
        } catch {
            throw ClientFailure(code: .usage, "invalid merge \(shown(text)) at \(path): \(message(of: error))")
        }
    }

    /// `value` checked as the daemon checks a write at `path` (its depth counted from the root, string
    /// and op sizes), so that a bad write is a usage error here.
    static func checked(_ value: Value, at path: Path) throws -> Value {
        do {
            return try ValueCheck.validated(value, at: path)
        } catch {
            throw ClientFailure(code: .usage, "cannot write that value at \(path): \(message(of: error))")
        }
    }

    /// `value` checked as the child a push makes under `parent` (one level deeper, under a push id).
    static func checked(_ value: Value, pushedUnder parent: Path) throws -> Value {
        do {
            return try ValueCheck.validated(value, at: try parent.child(String(repeating: "-", count: PushID.length)))
        } catch {
            throw ClientFailure(code: .usage, "cannot push that value under \(parent): \(message(of: error))")
        }
    }

    private static func message(of error: any Error) -> String { (error as? WeftError)?.message ?? "\(error)" }

    /// The members of a JSON object, names as written (a merge reads them as relative paths).
    static func members(_ text: String) throws -> [(name: String, value: Value)] {
        do {
            return try Value.jsonMembers(text)
        } catch {
            throw ClientFailure(
                code: .usage, "merge takes a JSON object of children; \(shown(text)) is not one: \(error)")
        }
    }

    static func number(_ text: String) throws -> Number {
        guard let number = Number(try value(text)) else {
            throw ClientFailure(code: .usage, "\(text) is not a number")
        }
        return number
    }

    /// Prints a result on one line. A reader that went away (`weft get / | head -c 10`) took what it
    /// wanted; any other failure (a full disk) fails the command, which would otherwise look done.
    static func printJSON(_ value: Value) throws {
        guard let error = StandardStream.emit(value.jsonString() + "\n"), error != EPIPE else { return }
        throw StandardStream.failure(error)
    }
}

/// `HOST:PORT` as given on the command line.
enum HostPort {
    static func parse(_ text: String, option: String) throws(ValidationError) -> (host: String, port: Int) {
        guard let colon = text.lastIndex(of: ":") else {
            throw ValidationError("\(option) must be HOST:PORT, got \(text)")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") {
            host = String(host.dropFirst().dropLast())
        } else if host.contains(":") {
            // `::1` would read as host `:` and port 1: an IPv6 address and its port are told apart by brackets.
            throw ValidationError("\(option) takes an IPv6 address in brackets, as [::1]:7700; got \(text)")
        }
        guard !host.isEmpty, let port = Int(text[text.index(after: colon)...]), (0...65_535).contains(port) else {
            throw ValidationError("\(option) must be HOST:PORT with a port in 0...65535, got \(text)")
        }
        return (host, port)
    }
}

// MARK: - Commands

struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get", abstract: "Print the JSON value at a path (null when absent).")
    @OptionGroup var options: ClientOptions
    @Argument(help: "The path, e.g. /users/ada.") var path: String

    func run() async throws {
        await runClient(options, input: { try ClientInput.path(path) }) { client, path in
            try ClientInput.printJSON(try await client.request(.get(path)))
        }
    }
}

struct SetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set", abstract: "Replace the value at a path (null deletes it).")
    @OptionGroup var options: ClientOptions
    @Argument(help: "The path.") var path: String
    @Argument(help: "The new value, as JSON (- reads it from standard input).") var json: String
    @Flag(help: "Allow a path that resolves to the root: the value replaces the whole tree.") var root = false

    func run() async throws {
        let input = {
            let path = try ClientInput.writePath(path, root: root)
            return ClientCommand.set(path, try ClientInput.checked(try ClientInput.json(json), at: path))
        }
        await runClient(options, input: input) { client, command in
            try await client.request(command)
            try ClientInput.printJSON(.object(["ok": .bool(true)]))
        }
    }
}

struct MergeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge", abstract: "Set the listed children of a path, keeping the others.")
    @OptionGroup var options: ClientOptions
    @Argument(help: "The path.") var path: String
    @Argument(
        help: "A JSON object of children (names may be relative paths such as \"a/b\"; null deletes; - reads stdin).")
    var json: String
    @Flag(help: "Allow a path that resolves to the root: the members are written at the top of the tree.")
    var root = false

    func run() async throws {
        let input = {
            let path = try ClientInput.writePath(path, root: root)
            return ClientCommand.merge(path, try ClientInput.mergeChildren(json, under: path))
        }
        await runClient(options, input: input) { client, command in
            try await client.request(command)
            try ClientInput.printJSON(.object(["ok": .bool(true)]))
        }
    }
}

struct PushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push", abstract: "Add a child under a new, chronologically sorted push id; prints the key.")
    @OptionGroup var options: ClientOptions
    @Argument(help: "The parent path.") var path: String
    @Argument(help: "The child's value, as JSON (- reads it from standard input).") var json: String

    func run() async throws {
        let input = {
            let path = try ClientInput.path(path)
            return ClientCommand.push(path, try ClientInput.checked(try ClientInput.json(json), pushedUnder: path))
        }
        await runClient(options, input: input) { client, command in
            let key = try await client.request(command)
            try ClientInput.printJSON(.object(["key": key]))
        }
    }
}

struct IncrementCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "incr", abstract: "Add a step to a number (a missing node counts as 0).")
    @OptionGroup var options: ClientOptions
    @Argument(help: "The path.") var path: String
    @Argument(help: "The step, an integer or a decimal number.") var by: String = "1"
    @Flag(help: "Allow a path that resolves to the root: the whole tree becomes a number.") var root = false

    func run() async throws {
        let input = {
            ClientCommand.increment(
                try ClientInput.writePath(path, root: root), by: try ClientInput.number(by), from: .int(0))
        }
        await runClient(options, input: input) { client, command in
            // The reply is the value just after the increment applied, before any other write.
            try ClientInput.printJSON(try await client.request(command))
        }
    }
}

struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print the value at a path now and after every change, one JSON line each, until interrupted.")
    @OptionGroup var options: ClientOptions
    @Argument(help: "The path.") var path: String

    func run() async throws {
        await runClient(options, input: { try ClientInput.path(path) }) { client, path in
            let end = WatchEnd()
            try await client.watch(path) { value in
                // A reader that went away (`weft watch /x | head -1`) ends the watch, as it ends `yes`.
                guard !end.hasEnded, let error = StandardStream.emit(value.jsonString() + "\n") else { return }
                end.finish(error == EPIPE ? .outputClosed : .outputFailed(error))
            } onEnd: { error in
                // The daemon ended the watch: its rules, reloaded, no longer let this client read the path.
                end.finish(.connectionClosed(error))
            }
            Task { end.finish(.connectionClosed(await client.waitUntilClosed())) }
            switch await end.wait() {
            case .outputClosed, .connectionClosed(nil): return
            case .outputFailed(let error): throw StandardStream.failure(error)
            case .connectionClosed(let error?): throw ClientFailure(error)
            }
        }
    }
}

/// How a watch ended: the first of its output closing and its connection closing.
final class WatchEnd: @unchecked Sendable {
    enum Reason {
        /// Its reader went away.
        case outputClosed
        /// Standard output failed with this `errno`.
        case outputFailed(Int32)
        case connectionClosed(WeftError?)
    }

    private let lock = NSLock()
    private var reason: Reason?
    private var waiters: [CheckedContinuation<Reason, Never>] = []

    var hasEnded: Bool { lock.withLock { reason != nil } }

    /// Records `reason` unless the watch has ended already, and wakes the waiter.
    func finish(_ reason: Reason) {
        let waiting = lock.withLock { () -> [CheckedContinuation<Reason, Never>] in
            guard self.reason == nil else { return [] }
            self.reason = reason
            defer { waiters = [] }
            return waiters
        }
        for waiter in waiting { waiter.resume(returning: reason) }
    }

    /// Waits for the first reason.
    func wait() async -> Reason {
        await withCheckedContinuation { continuation in
            let ended = lock.withLock { () -> Reason? in
                if let reason { return reason }
                waiters.append(continuation)
                return nil
            }
            if let ended { continuation.resume(returning: ended) }
        }
    }
}

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract:
            "Show how the daemon stands: its peers (connected, ops behind, bytes), its log size, the round trip time.")
    @OptionGroup var options: ClientOptions

    func run() async throws {
        await runClient(options) { client in
            let started = ContinuousClock.now
            let report = try await client.request(.status)
            let elapsed = started.duration(to: .now)
            let milliseconds = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1e3
            var fields: [Key: Value] = [:]
            if case .object(let daemon) = report { fields = daemon }
            fields["server"] = .string(options.server)
            fields["authenticated"] = .bool(true)
            fields["roundTripMilliseconds"] = .double((milliseconds * 1000).rounded() / 1000)
            try ClientInput.printJSON(.object(fields))
        }
    }
}
