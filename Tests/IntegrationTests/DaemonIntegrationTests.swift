import Foundation
import Testing
import WeftTestSupport

/// Real `weft serve` processes on 127.0.0.1 with ephemeral ports, driven by real `weft` client commands.
@Suite(.serialized, .timeLimit(.minutes(5))) struct DaemonIntegrationTests {
    static let clientToken = "integration client secret, long enough"
    static let meshToken = "integration mesh secret shared by every daemon"

    /// Every daemon files the mesh secret under every other daemon's name, and the client's under "client".
    static func tokens(_ scratch: Scratch, names: [String]) throws -> String {
        var lines = ["# written by DaemonIntegrationTests", "client \(clientToken)"]
        for name in names { lines.append("\(name) \(meshToken)") }
        return try scratch.write("tokens", lines.joined(separator: "\n") + "\n")
    }

    static func client(
        _ daemon: Daemon, name: String, _ arguments: [String], token: String = clientToken, input: Data = Data()
    ) async throws -> (status: Int32, stdout: String, stderr: String) {
        let command = arguments[0]
        let rest = Array(arguments.dropFirst())
        return try await WeftBinary.run(
            [command, "--server", "127.0.0.1:\(daemon.port)", "--server-name", name] + rest, token: token,
            input: input)
    }

    @Test func aHubServesClientsEveryCommandWithJSONOutAndExitCodes() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let hub = try await Daemon(
            database: scratch.file("hub.sqlite"), tokens: try Self.tokens(scratch, names: []), name: "hub")
        defer { hub.stop() }

        let set = try await Self.client(hub, name: "hub", ["set", "/users/ada", #"{"name":"Ada"}"#])
        #expect(set.status == 0)
        #expect(set.stdout == #"{"ok":true}"#)
        #expect(try await Self.client(hub, name: "hub", ["merge", "/users/ada", #"{"born":1815}"#]).status == 0)
        #expect(try await Self.client(hub, name: "hub", ["incr", "/visits", "5"]).stdout == "5")
        #expect(try await Self.client(hub, name: "hub", ["incr", "/visits"]).stdout == "6")
        // Negative numbers are values, not options: no `--` needed before them.
        #expect(try await Self.client(hub, name: "hub", ["incr", "/visits", "-2.5"]).stdout == "3.5")
        #expect(try await Self.client(hub, name: "hub", ["set", "/minus", "-7"]).status == 0)
        #expect(try await Self.client(hub, name: "hub", ["get", "/minus"]).stdout == "-7")
        // An IPv6 address needs brackets: `::1` read as host `:` and port 1, and failed only at bind.
        let unbracketed = try await WeftBinary.run(
            ["serve", "--db", scratch.file("never.sqlite"), "--listen", "::1"], token: Self.clientToken)
        #expect(unbracketed.status == 64)
        #expect(unbracketed.stderr.contains("in brackets"))
        #expect(!FileManager.default.fileExists(atPath: scratch.file("never.sqlite")))
        // A merge of nothing is refused as `DataNode.merge` refuses it, before the request leaves.
        let empty = try await Self.client(hub, name: "hub", ["merge", "/users/ada", "{}"])
        #expect(empty.status == 2)
        #expect(empty.stderr.contains("merge needs at least one member"))
        // A value too large for a command line (the system caps one argument at 128 KiB) comes on stdin.
        let large = String(repeating: "x", count: 300_000)
        await #expect(
            try Self.client(hub, name: "hub", ["set", "/large", "-"], input: Data("\"\(large)\"".utf8)).status == 0)
        #expect(try await Self.client(hub, name: "hub", ["get", "/large"]).stdout == "\"\(large)\"")
        let members = Data(#"{"x":1,"y/z":2}"#.utf8)
        #expect(try await Self.client(hub, name: "hub", ["merge", "/stdin", "-"], input: members).status == 0)
        #expect(try await Self.client(hub, name: "hub", ["get", "/stdin"]).stdout == #"{"x":1,"y":{"z":2}}"#)
        // Overlapping merge children are a usage error, found before the request leaves (the daemon
        // closed the session over it, and the command exited 3 as if it were unreachable).
        let overlap = try await Self.client(hub, name: "hub", ["merge", "/users", #"{"ada":1,"ada/born":2}"#])
        #expect(overlap.status == 2)
        #expect(overlap.stderr.contains("merge paths /ada and /ada/born overlap"))
        // So is a value that would reach deeper than 32 levels from the root, for set, merge and push.
        let deepPath = "/" + (0..<30).map { "k\($0)" }.joined(separator: "/")
        for arguments in [
            ["set", deepPath, #"{"x":{"y":{"z":1}}}"#], ["merge", deepPath, #"{"x/y/z":1}"#],
            ["push", deepPath, #"{"x":{"y":1}}"#],
        ] {
            let tooDeep = try await Self.client(hub, name: "hub", arguments)
            #expect(tooDeep.status == 2, "\(arguments[0])")
            #expect(tooDeep.stderr.contains("32"), "\(arguments[0]): \(tooDeep.stderr)")
        }
        #expect(try await Self.client(hub, name: "hub", ["set", deepPath, #"{"x":1}"#]).status == 0)
        // An increment the daemon rejects fails: it printed the unchanged value and exited 0 before.
        let rejected = try await Self.client(hub, name: "hub", ["incr", "/users/ada/name"])
        #expect(rejected.status == 1)
        #expect(rejected.stdout.isEmpty)
        #expect(rejected.stderr.contains("refused: increment of /users/ada/name, which is not a number"))
        let infinite = try await Self.client(hub, name: "hub", ["incr", "/huge", "1e308"])
        #expect(infinite.stdout == "1e+308")
        #expect(try await Self.client(hub, name: "hub", ["incr", "/huge", "1e308"]).status == 1)
        #expect(try await Self.client(hub, name: "hub", ["get", "/huge"]).stdout == "1e+308")
        let push = try await Self.client(hub, name: "hub", ["push", "/log", #""started""#])
        #expect(push.status == 0)
        #expect(push.stdout.hasPrefix(#"{"key":""#))
        let get = try await Self.client(hub, name: "hub", ["get", "/users/ada"])
        #expect(get.status == 0)
        #expect(get.stdout == #"{"born":1815,"name":"Ada"}"#)
        // A merge's names are relative paths, and null deletes.
        let deep = try await Self.client(hub, name: "hub", ["merge", "/users/ada", #"{"work/year":1843,"born":null}"#])
        #expect(deep.status == 0)
        await #expect(
            try Self.client(hub, name: "hub", ["get", "/users/ada"]).stdout == #"{"name":"Ada","work":{"year":1843}}"#)
        #expect(try await Self.client(hub, name: "hub", ["get", "/nothing"]).stdout == "null")
        #expect(try await Self.client(hub, name: "hub", ["status"]).stdout.contains(#""authenticated":true"#))

        let refused = try await Self.client(hub, name: "hub", ["get", "/users"], token: "a wrong secret, long enough")
        #expect(refused.status == 4)
        #expect(refused.stderr.contains(#""code":"authentication""#))
        #expect(hub.log.contains("authenticationFailed"))
        let badJSON = try await Self.client(hub, name: "hub", ["set", "/x", "{not json"])
        #expect(badJSON.status == 2)
        let nobody = try await WeftBinary.run(["get", "/x", "--server", "127.0.0.1:1"], token: Self.clientToken)
        #expect(nobody.status == 3)
    }

    @Test func peersDialingAHubConvergeOnEqualValues() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let tokens = try Self.tokens(scratch, names: ["hub", "north", "south"])
        let hub = try await Daemon(database: scratch.file("hub.sqlite"), tokens: tokens, name: "hub")
        defer { hub.stop() }
        let north = try await Daemon(
            database: scratch.file("north.sqlite"), peers: [hub.port], tokens: tokens, name: "north")
        defer { north.stop() }
        let south = try await Daemon(
            database: scratch.file("south.sqlite"), peers: [hub.port], tokens: tokens, name: "south")
        defer { south.stop() }

        for index in 0..<5 {
            #expect(try await Self.client(north, name: "north", ["incr", "/count", "1"]).status == 0)
            #expect(try await Self.client(south, name: "south", ["incr", "/count", "10"]).status == 0)
            #expect(try await Self.client(hub, name: "hub", ["set", "/hub/\(index)", "\(index)"]).status == 0)
        }
        #expect(try await Self.client(north, name: "north", ["set", "/from/north", #""n""#]).status == 0)
        try await eventually("three daemons to hold equal trees") {
            var values: [String] = []
            for (daemon, name) in [(hub, "hub"), (north, "north"), (south, "south")] {
                values.append(try await Self.client(daemon, name: name, ["get", "/"]).stdout)
            }
            return values[0].contains(#""count":55"#) && values[0].contains(#""north":"n""#)
                && values[1] == values[0] && values[2] == values[0]
        }
        // `weft status` shows each peer's lag and the log's size; once acks settle, nobody is behind.
        try await eventually("the hub's status to show two peers caught up") {
            let status = try await Self.client(hub, name: "hub", ["status"]).stdout
            return status.components(separatedBy: #""connected":true"#).count == 3
                && status.components(separatedBy: #""opsBehind":0"#).count == 3
                && status.contains(#""opsInLog":16"#) && status.contains(#""opsKnown":16"#)
        }
        // A clean stop: SIGTERM ends with status 0 and a log line.
        #expect(south.stop(SIGTERM) == 0)
        #expect(south.log.contains("stopped cleanly"))
    }

    @Test func aDaemonKilledWithSIGKILLRestartsOnItsDatabaseAndCatchesUp() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let tokens = try Self.tokens(scratch, names: ["hub", "edge"])
        var hub = try await Daemon(database: scratch.file("hub.sqlite"), tokens: tokens, name: "hub")
        defer { hub.stop() }
        let port = hub.port
        let edge = try await Daemon(database: scratch.file("edge.sqlite"), peers: [port], tokens: tokens, name: "edge")
        defer { edge.stop() }

        #expect(try await Self.client(hub, name: "hub", ["set", "/before", #""kill""#]).status == 0)
        #expect(try await Self.client(edge, name: "edge", ["incr", "/edits", "1"]).status == 0)
        try await eventually("the first exchange") {
            let before = try await Self.client(edge, name: "edge", ["get", "/before"]).stdout
            let edits = try await Self.client(hub, name: "hub", ["get", "/edits"]).stdout
            return before == #""kill""# && edits == "1"
        }
        hub.stop(SIGKILL)
        #expect(try await Self.client(edge, name: "edge", ["incr", "/edits", "1"]).status == 0)
        #expect(try await Self.client(edge, name: "edge", ["set", "/during", "true"]).status == 0)

        hub = try await Daemon(database: scratch.file("hub.sqlite"), port: port, tokens: tokens, name: "hub")
        #expect(try await Self.client(hub, name: "hub", ["get", "/before"]).stdout == #""kill""#)
        try await eventually("the edge to redial and the hub to catch up") {
            let edits = try await Self.client(hub, name: "hub", ["get", "/edits"]).stdout
            let during = try await Self.client(hub, name: "hub", ["get", "/during"]).stdout
            return edits == "2" && during == "true"
        }
        let trees = [
            try await Self.client(hub, name: "hub", ["get", "/"]).stdout,
            try await Self.client(edge, name: "edge", ["get", "/"]).stdout,
        ]
        #expect(trees[0] == trees[1])
    }

    /// A daemon whose disk fails (here its file size limit) stops with a critical line and status 1; it
    /// ran on and refused every write until someone stopped it. What it held before is there on restart.
    @Test func aDaemonWhoseDiskFailsStopsAndKeepsWhatItHeld() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let tokens = try Self.tokens(scratch, names: ["hub"])
        let database = scratch.file("hub.sqlite")
        let hub = try await Daemon(database: database, tokens: tokens, name: "hub", fileBlocksMax: 4_096)
        defer { hub.stop() }
        #expect(try await Self.client(hub, name: "hub", ["set", "/kept", "1"]).status == 0)
        let large = Data("\"\(String(repeating: "x", count: 60_000))\"".utf8)
        var refused = false
        for index in 0..<100 where !refused {
            let set = try await Self.client(hub, name: "hub", ["set", "/large/k\(index)", "-"], input: large)
            refused = set.status != 0
        }
        #expect(refused, "2 MiB never filled up")
        try await eventually("the daemon to stop", seconds: 10) { !hub.process.isRunning }
        #expect(hub.stop() == 1)
        #expect(hub.log.contains("critical"), "\(hub.log)")

        let restarted = try await Daemon(database: database, tokens: tokens, name: "hub")
        defer { restarted.stop() }
        #expect(try await Self.client(restarted, name: "hub", ["get", "/kept"]).stdout == "1")
    }

    /// At the open-file limit libuv accepts and closes connections without a word: with `ulimit -n 200`
    /// a daemon silently dropped every connection past about 185, and nothing said why.
    @Test func aDaemonAtItsOpenFileLimitRefusesConnectionsAndSaysSo() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let tokens = try Self.tokens(scratch, names: ["hub"])
        let hub = try await Daemon(
            database: scratch.file("hub.sqlite"), tokens: tokens, name: "hub", openFiles: (200, 200))
        defer { hub.stop() }
        #expect(hub.log.contains("the open-file limit leaves room for fewer connections"), "\(hub.log)")
        let sockets = (0..<250).compactMap { _ in RawSocket.connect(port: hub.port) }
        #expect(sockets.count > 200, "the connections reached the daemon")
        try await eventually("the refusals to be logged", seconds: 10) {
            hub.log.contains("refusing connection: too many connections")
        }
        #expect(hub.log.contains("limit=\(200 - 128)"), "\(hub.log)")
        for socket in sockets { close(socket) }
        try await eventually("a client to be served again", seconds: 20) {
            try await Self.client(hub, name: "hub", ["set", "/still", "1"]).status == 0
        }
    }

    /// The usual soft limit (1024) leaves a daemon fewer descriptors than the connections it accepts.
    @Test func aDaemonRaisesItsSoftOpenFileLimitToTheHardOne() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        var limit = rlimit()
        #expect(getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0)
        let hard = Int(min(limit.rlim_max, 4_096))
        let tokens = try Self.tokens(scratch, names: ["hub"])
        let hub = try await Daemon(
            database: scratch.file("hub.sqlite"), tokens: tokens, name: "hub", openFiles: (256, hard))
        defer { hub.stop() }
        let limits = try String(contentsOfFile: "/proc/\(hub.process.processIdentifier)/limits", encoding: .utf8)
        let line = limits.split(separator: "\n").first { $0.hasPrefix("Max open files") }
        let numbers = line.map { $0.split(separator: " ").compactMap { Int($0) } }
        #expect(numbers == [hard, hard], "\(line ?? "no line")")
    }

    /// A `--db` whose directory cannot be made is one critical line naming the directory and why; it was
    /// Foundation's error dumped whole (`Error Domain=NSCocoaErrorDomain Code=512 "(null)" UserInfo=…`).
    @Test func aDatabaseDirectoryThatCannotBeMadeIsReportedPlainly() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let file = try scratch.write("plain-file", "not a directory\n")
        let started = try await WeftBinary.run(
            ["serve", "--db", file + "/data/weft.sqlite", "--listen", "127.0.0.1:0"], token: Self.clientToken)
        #expect(started.status == 1)
        #expect(started.stderr.contains("critical"))
        #expect(started.stderr.contains("cannot create the directory \(file)/data"), "\(started.stderr)")
        #expect(started.stderr.contains("Not a directory"), "\(started.stderr)")
        #expect(!started.stderr.contains("NSCocoaErrorDomain"), "\(started.stderr)")
    }

    /// A copy of a daemon's database is refused, with the flag to use; with the flag it opens as a new
    /// replica that keeps the data, and the two then replicate as any two replicas.
    @Test func aCopiedDatabaseIsRefusedUnlessTheDaemonIsToldToReidentifyIt() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let tokens = try Self.tokens(scratch, names: ["hub", "copy"])
        let hub = try await Daemon(
            database: scratch.file("hub.sqlite"), tokens: tokens, name: "hub", options: ["--durability", "normal"])
        defer { hub.stop() }
        #expect(try await Self.client(hub, name: "hub", ["set", "/kept", "1"]).status == 0)
        #expect(hub.stop(SIGTERM) == 0)
        try FileManager.default.copyItem(atPath: scratch.file("hub.sqlite"), toPath: scratch.file("copy.sqlite"))

        await #expect(throws: WeftBinary.Failure.self) {
            _ = try await Daemon(database: scratch.file("copy.sqlite"), tokens: tokens, name: "copy", seconds: 10)
        }
        let refusal = (try? String(contentsOfFile: scratch.file("copy.sqlite") + ".copy.log", encoding: .utf8)) ?? ""
        #expect(refusal.contains("--reidentify-copy"), "\(refusal)")

        let copy = try await Daemon(
            database: scratch.file("copy.sqlite"), tokens: tokens, name: "copy", options: ["--reidentify-copy"])
        defer { copy.stop() }
        #expect(try await Self.client(copy, name: "copy", ["get", "/kept"]).stdout == "1")
        let original = try await Daemon(
            database: scratch.file("hub.sqlite"), peers: [copy.port], tokens: tokens, name: "hub")
        defer { original.stop() }
        #expect(try await Self.client(copy, name: "copy", ["set", "/fromCopy", "2"]).status == 0)
        try await eventually("the original and the copy to replicate") {
            try await Self.client(original, name: "hub", ["get", "/fromCopy"]).stdout == "2"
        }
    }

    /// A hub that compacted sends a daemon that joins later (with writes of its own made offline) a
    /// snapshot; the joiner installs it and everyone converges.
    @Test func aDaemonJoiningAfterTheHubCompactedInstallsASnapshot() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let tokens = try Self.tokens(scratch, names: ["hub", "edge", "late"])
        let hub = try await Daemon(
            database: scratch.file("hub.sqlite"), tokens: tokens, name: "hub", options: ["--compact-after", "5"])
        defer { hub.stop() }
        let edge = try await Daemon(database: scratch.file("edge.sqlite"), peers: [hub.port], tokens: tokens, name: "edge")
        defer { edge.stop() }
        for index in 0..<6 {
            #expect(try await Self.client(edge, name: "edge", ["incr", "/count", "1"]).status == 0)
            #expect(try await Self.client(hub, name: "hub", ["set", "/hub/\(index)", "\(index)"]).status == 0)
        }
        try await eventually("the hub to compact what both hold") { hub.log.contains("compacted the log") }

        // The late daemon writes alone first, then restarts dialling the hub.
        var late = try await Daemon(database: scratch.file("late.sqlite"), tokens: tokens, name: "late")
        #expect(try await Self.client(late, name: "late", ["incr", "/count", "100"]).status == 0)
        #expect(try await Self.client(late, name: "late", ["set", "/late", #""offline""#]).status == 0)
        #expect(late.stop(SIGTERM) == 0)
        late = try await Daemon(database: scratch.file("late.sqlite"), peers: [hub.port], tokens: tokens, name: "late")
        defer { late.stop() }
        try await eventually("three daemons to hold equal trees") {
            var values: [String] = []
            for (daemon, name) in [(hub, "hub"), (edge, "edge"), (late, "late")] {
                values.append(try await Self.client(daemon, name: name, ["get", "/"]).stdout)
            }
            return values[0].contains(#""count":106"#) && values[0].contains(#""late":"offline""#)
                && values[1] == values[0] && values[2] == values[0]
        }
        #expect(late.log.contains("installed a snapshot"))
        #expect(!late.log.contains("was not installed"))
        // The late daemon's base holds the ops the hub had folded: they are not in its log one by one.
        let status = try await Self.client(late, name: "late", ["status"]).stdout
        #expect(!status.contains(#""opsCompacted":0"#), "\(status)")
    }

    /// A daemon whose standard output cannot take its `listening` line (closed, a reader gone, a full
    /// disk: here /dev/full) serves anyway; it died at start on a Swift fatal error (`try!` in
    /// FileHandle.write), status 132. The line is for scripts; the log says where it listens too.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/full")))
    func aDaemonWhoseOutputCannotBeWrittenServesAnyway() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let serve = Process()
        serve.executableURL = try WeftBinary.url()
        serve.arguments = [
            "serve", "--db", scratch.file("hub.sqlite"), "--listen", "127.0.0.1:0", "--name", "hub",
            "--tokens", try Self.tokens(scratch, names: []),
        ]
        serve.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/full"))
        let log = scratch.file("hub.log")
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        serve.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        try ChildProcess.start(serve)
        defer {
            if serve.isRunning { kill(serve.processIdentifier, SIGKILL) }
            serve.waitUntilExit()
        }
        var port: Int?
        try await eventually("the daemon to log where it listens, or to end") {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.contains("[WeftNet] listening") }),
                let address = line.split(separator: " ").first(where: { $0.hasPrefix("address=") }),
                let colon = address.lastIndex(of: ":")
            {
                port = Int(address[address.index(after: colon)...])
            }
            return port != nil || !serve.isRunning
        }
        let listening = try #require(port, "\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        let set = try await WeftBinary.run(
            ["set", "/x", "1", "--server", "127.0.0.1:\(listening)", "--server-name", "hub"], token: Self.clientToken)
        #expect(set.status == 0, "\(set.stderr)")
        #expect(serve.isRunning)
        kill(serve.processIdentifier, SIGTERM)
        serve.waitUntilExit()
        #expect(serve.terminationReason == .exit)
        #expect(serve.terminationStatus == 0)
    }
}
