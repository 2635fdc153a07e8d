import Foundation
import Testing

/// `weft query` against a real `weft serve`: one-shot results in order, `--watch` while another client
/// writes, and bad queries refused with exit 2 before connecting.
@Suite(.serialized, .timeLimit(.minutes(2))) struct QueryCommandIntegrationTests {
    static let name = "hub"

    static func client(_ daemon: Daemon, _ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try DaemonIntegrationTests.client(daemon, name: name, arguments)
    }

    static let posts = #"""
        {"p1":{"status":"open","meta":{"score":12}},"p2":{"status":"closed","meta":{"score":30}},
         "p3":{"status":"open","meta":{"score":7}},"p4":{"status":"open","meta":{"score":25}},
         "p5":{"status":"open","meta":{"score":12}}}
        """#

    @Test func aQueryPrintsTheChildrenItSelectsInOrder() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let hub = try Daemon(
            database: scratch.file("hub.sqlite"), tokens: try DaemonIntegrationTests.tokens(scratch, names: []),
            name: Self.name)
        defer { hub.stop() }
        #expect(try Self.client(hub, ["set", "/posts", Self.posts]).status == 0)

        let top = try Self.client(
            hub, ["query", "/posts", "--order-by-child", "meta/score", "--start-at", "10", "--limit-to-last", "2",
                  "--where", #"status == "open""#])
        #expect(top.status == 0, "\(top.stderr)")
        #expect(
            top.stdout == #"[{"key":"p5","value":{"meta":{"score":12},"status":"open"}},"#
                + #"{"key":"p4","value":{"meta":{"score":25},"status":"open"}}]"#)
        // Ties at 12 broken by key, from p5 on.
        let ties = try Self.client(
            hub, ["query", "/posts", "--order-by-child", "meta/score", "--equal-to", "12", "--equal-to-key", "p5"])
        #expect(ties.stdout.hasPrefix(#"[{"key":"p5","#), "\(ties)")
        let keys = try Self.client(
            hub, ["query", "/posts", "--order-by-key", "--start-at", #""p2""#, "--offset", "1", "--limit-to-first", "2"])
        #expect(keys.stdout.hasPrefix(#"[{"key":"p3","#) && keys.stdout.contains(#"{"key":"p4","#), "\(keys)")
        let negative = try Self.client(hub, ["query", "/posts", "--order-by-child", "meta/score", "--end-at", "-1"])
        #expect(negative.stdout == "[]", "\(negative)")
        let empty = try Self.client(hub, ["query", "/nothing"])
        #expect(empty.status == 0)
        #expect(empty.stdout == "[]")
    }

    @Test func aLiveQueryPrintsOneLinePerChangeWhileAnotherClientWrites() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let hub = try Daemon(
            database: scratch.file("hub.sqlite"), tokens: try DaemonIntegrationTests.tokens(scratch, names: []),
            name: Self.name)
        defer { hub.stop() }
        #expect(try Self.client(hub, ["set", "/posts", Self.posts]).status == 0)

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
        try watch.run()
        defer {
            if watch.isRunning { kill(watch.processIdentifier, SIGKILL) }
            watch.waitUntilExit()
        }
        var received = Data()
        func lines(_ count: Int, _ what: String) throws -> [String] {
            try eventually(what) {
                received += output.fileHandleForReading.availableData
                return received.split(separator: UInt8(ascii: "\n")).count >= count
            }
            return received.split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) }
        }
        let first = try lines(1, "the initial result")
        #expect(first[0].hasPrefix(#"{"result":[{"key":"p4","#), "\(first)")
        #expect(first[0].contains(#"{"key":"p2","#))
        #expect(!first[0].contains("changes"))

        // A write outside the window sends nothing; one that enters it sends one line.
        #expect(try Self.client(hub, ["set", "/posts/p3/meta/score", "8"]).status == 0)
        #expect(try Self.client(hub, ["set", "/posts/p6", #"{"meta":{"score":99}}"#]).status == 0)
        let second = try lines(2, "the change")
        #expect(second.count == 2, "\(second)")
        #expect(
            second[1] == #"{"result":[{"key":"p2","value":{"meta":{"score":30},"status":"closed"}},"#
                + #"{"key":"p6","value":{"meta":{"score":99}}}],"#
                + #""changes":{"deletions":[0],"insertions":[1],"modifications":[],"moves":[]}}"#)
        // A change of a row in the window: a modification.
        #expect(try Self.client(hub, ["set", "/posts/p6/title", #""hi""#]).status == 0)
        let third = try lines(3, "the modification")
        #expect(third[2].contains(#""modifications":[1]"#), "\(third)")
        #expect(watch.isRunning)
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
    func badQueriesExitTwo(options: [String], message: String) throws {
        // Nothing listens on port 1: a query checked after connecting would exit 3.
        let result = try WeftBinary.run(
            ["query", "/posts", "--server", "127.0.0.1:1"] + options, token: DaemonIntegrationTests.clientToken)
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains(#""code":"usage""#), "\(result)")
        #expect(result.stderr.contains(message), "\(result)")
    }
}
