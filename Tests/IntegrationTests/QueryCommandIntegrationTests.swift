import Foundation
import Testing
import WeftTestSupport

/// `weft query` against a real `weft serve`: one-shot results in order, `--watch` while another client
/// writes, and bad queries refused with exit 2 before connecting.
@Suite(.serialized, .timeLimit(.minutes(5))) struct QueryCommandIntegrationTests {
    static let name = "hub"

    static func client(_ daemon: Daemon, _ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await DaemonIntegrationTests.client(daemon, name: name, arguments)
    }

    static let posts = #"""
        {"p1":{"status":"open","meta":{"score":12}},"p2":{"status":"closed","meta":{"score":30}},
         "p3":{"status":"open","meta":{"score":7}},"p4":{"status":"open","meta":{"score":25}},
         "p5":{"status":"open","meta":{"score":12}}}
        """#

    @Test func aQueryPrintsTheChildrenItSelectsInOrder() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let hub = try await Daemon(
            database: scratch.file("hub.sqlite"), tokens: try DaemonIntegrationTests.tokens(scratch, names: []),
            name: Self.name)
        defer { hub.stop() }
        #expect(try await Self.client(hub, ["set", "/posts", Self.posts]).status == 0)

        let top = try await Self.client(
            hub, ["query", "/posts", "--order-by-child", "meta/score", "--start-at", "10", "--limit-to-last", "2",
                  "--where", #"status == "open""#])
        #expect(top.status == 0, "\(top.stderr)")
        #expect(
            top.stdout == #"[{"key":"p5","value":{"meta":{"score":12},"status":"open"}},"#
                + #"{"key":"p4","value":{"meta":{"score":25},"status":"open"}}]"#)
        // Ties at 12 broken by key, from p5 on.
        let ties = try await Self.client(
            hub, ["query", "/posts", "--order-by-child", "meta/score", "--equal-to", "12", "--equal-to-key", "p5"])
        #expect(ties.stdout.hasPrefix(#"[{"key":"p5","#), "\(ties)")
        let keys = try await Self.client(
            hub, ["query", "/posts", "--order-by-key", "--start-at", #""p2""#, "--offset", "1", "--limit-to-first", "2"])
        #expect(keys.stdout.hasPrefix(#"[{"key":"p3","#) && keys.stdout.contains(#"{"key":"p4","#), "\(keys)")
        let negative = try await Self.client(hub, ["query", "/posts", "--order-by-child", "meta/score", "--end-at", "-1"])
        #expect(negative.stdout == "[]", "\(negative)")
        let empty = try await Self.client(hub, ["query", "/nothing"])
        #expect(empty.status == 0)
        #expect(empty.stdout == "[]")
    }

    @Test func aLiveQueryPrintsOneLinePerChangeWhileAnotherClientWrites() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let hub = try await Daemon(
            database: scratch.file("hub.sqlite"), tokens: try DaemonIntegrationTests.tokens(scratch, names: []),
            name: Self.name)
        defer { hub.stop() }
        #expect(try await Self.client(hub, ["set", "/posts", Self.posts]).status == 0)

        let watch = Process()
        watch.executableURL = try WeftBinary.url()
        watch.arguments = [
            "query", "/posts", "--order-by-child", "meta/score", "--limit-to-last", "2", "--watch",
            "--server", "127.0.0.1:\(hub.port)", "--server-name", Self.name,
        ]
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
        var received = Data()
        func lines(_ count: Int, _ what: String) async throws -> [String] {
            try await eventually(what) {
                received += try output.fileHandleForReading.readWithoutWaiting()
                return received.split(separator: UInt8(ascii: "\n")).count >= count
            }
            return received.split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) }
        }
        let first = try await lines(1, "the initial result")
        #expect(first[0].hasPrefix(#"{"result":[{"key":"p4","#), "\(first)")
        #expect(first[0].contains(#"{"key":"p2","#))
        #expect(!first[0].contains("changes"))

        // A write outside the window sends nothing; one that enters it sends one line.
        #expect(try await Self.client(hub, ["set", "/posts/p3/meta/score", "8"]).status == 0)
        #expect(try await Self.client(hub, ["set", "/posts/p6", #"{"meta":{"score":99}}"#]).status == 0)
        let second = try await lines(2, "the change")
        #expect(second.count == 2, "\(second)")
        #expect(
            second[1] == #"{"result":[{"key":"p2","value":{"meta":{"score":30},"status":"closed"}},"#
                + #"{"key":"p6","value":{"meta":{"score":99}}}],"#
                + #""changes":{"deletions":[0],"insertions":[1],"modifications":[],"moves":[]}}"#)
        // A change of a row in the window: a modification.
        #expect(try await Self.client(hub, ["set", "/posts/p6/title", #""hi""#]).status == 0)
        let third = try await lines(3, "the modification")
        #expect(third[2].contains(#""modifications":[1]"#), "\(third)")
        #expect(watch.isRunning)
    }

    @Test func aDaemonStartedWithAnIndexBuildsItOnceAndAnswersThroughIt() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let database = scratch.file("hub.sqlite")
        let tokens = try DaemonIntegrationTests.tokens(scratch, names: [])
        let query = [
            "query", "/posts", "--order-by-child", "meta/score", "--start-at", "10", "--limit-to-last", "2",
        ]
        let plain = try await Daemon(database: database, tokens: tokens, name: Self.name)
        #expect(try await Self.client(plain, ["set", "/posts", Self.posts]).status == 0)
        let scanned = try await Self.client(plain, query)
        #expect(scanned.status == 0, "\(scanned.stderr)")
        #expect(plain.stop(SIGTERM) == 0)

        // Restarted with the index: built from the children there (progress on stderr), then the same answer.
        let indexed = try await Daemon(
            database: database, tokens: tokens, name: Self.name, options: ["--index", "/posts:meta/score"])
        #expect(indexed.log.contains("index /posts:meta/score: 5 of 5 children"), "\(indexed.log)")
        #expect(try await Self.client(indexed, query).stdout == scanned.stdout)
        // A write moves the indexed answer as it moves the scanned one.
        #expect(try await Self.client(indexed, ["set", "/posts/p3/meta/score", "99"]).status == 0)
        let moved = try await Self.client(indexed, query)
        #expect(moved.stdout.hasPrefix(#"[{"key":"p2","#) && moved.stdout.contains(#"{"key":"p3","#), "\(moved)")
        #expect(indexed.stop(SIGTERM) == 0)

        // Stored in the file: a third start finds it ready and builds nothing.
        let reopened = try await Daemon(
            database: database, tokens: tokens, name: Self.name, options: ["--index", "/posts:meta/score"])
        defer { reopened.stop() }
        #expect(try await Self.client(reopened, query).stdout == moved.stdout)
        #expect(!reopened.log.contains("building an index"), "\(reopened.log)")
    }

    @Test("a malformed --index is a usage error", arguments: ["/posts", "/posts:", ":score", "/posts:a/../b"])
    func aMalformedIndexIsAUsageError(index: String) async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let result = try await WeftBinary.run(
            ["serve", "--db", scratch.file("x.sqlite"), "--listen", "127.0.0.1:0", "--index", index],
            token: DaemonIntegrationTests.clientToken)
        #expect(result.status == 64, "\(result)")
        #expect(result.stderr.contains("--index"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: scratch.file("x.sqlite")))
    }

    @Test("bad queries exit 2 naming what is wrong, before connecting", arguments: [
        (["--order-by-key", "--order-by-value"], "one of --order-by-child"),
        (["--limit-to-first", "0"], "limit"),
        (["--limit-to-first", "ten"], "--limit-to-first takes a whole number"),
        (["--limit-to-first", "2", "--limit-to-last", "2"], "not both"),
        (["--where", "status =="], "--where"),
        (["--where", "a/../b exists"], "invalid query"),
        (["--order-by-child", "meta/score", "--start-at", "open"], "--start-at takes a JSON value"),
        (["--start-at-key", "k"], "--start-at-key needs --start-at"),
        (["--order-by-key", "--start-at", "3"], "invalid query"),
        (["--equal-to", "1", "--start-at", "1", "--order-by-value"], "--equal-to excludes"),
        (["--offset", "-1"], "offset"),
    ])
    func badQueriesExitTwo(options: [String], message: String) async throws {
        // Nothing listens on port 1: a query checked after connecting would exit 3.
        let result = try await WeftBinary.run(
            ["query", "/posts", "--server", "127.0.0.1:1"] + options, token: DaemonIntegrationTests.clientToken)
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains(#""code":"usage""#), "\(result)")
        #expect(result.stderr.contains(message), "\(result)")
    }
}
