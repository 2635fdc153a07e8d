import Foundation
import Testing
import WeftTestSupport

/// `weft serve --rules`: two clients each kept to their own subtree across every command, a client token
/// refused as a peer, and a reload on SIGHUP that ends what a client lost and keeps what others hold.
@Suite(.serialized, .timeLimit(.minutes(5))) struct PathRulesIntegrationTests {
    static let aliceToken = "alice's secret, long enough for a token"
    static let bobToken = "bob's secret, long enough for a token too"
    static let adminToken = DaemonIntegrationTests.clientToken

    static let tokenLines = [
        "alice \(aliceToken)", "bob \(bobToken)", "admin \(adminToken)",
    ]

    /// alice and bob each write their own subtree and read /public; admin is a client of the whole tree.
    static let rules = """
        # kind   name   access     pattern
        client   alice  readwrite  /users/$name/**
        client   alice  read       /public/**
        client   bob    readwrite  /users/$name/**
        client   bob    read       /public/**   # the same rules, another name
        client   admin
        """

    /// A hub serving the three clients under `rules`.
    static func hub(_ scratch: Scratch, rules: String = Self.rules) async throws -> Daemon {
        let tokens = try scratch.write("tokens", tokenLines.joined(separator: "\n") + "\n")
        let rulesFile = try scratch.write("rules", rules + "\n")
        return try await Daemon(
            database: scratch.file("hub.sqlite"), tokens: tokens, name: "hub", options: ["--rules", rulesFile])
    }

    /// Runs a client command as `name` (its token from `tokenLines`).
    static func run(_ hub: Daemon, as name: String, _ arguments: [String]) async throws -> (
        status: Int32, stdout: String, stderr: String
    ) {
        let token = [("alice", aliceToken), ("bob", bobToken), ("admin", adminToken)].first { $0.0 == name }!.1
        return try await WeftBinary.run(
            [arguments[0], "--server", "127.0.0.1:\(hub.port)", "--server-name", "hub", "--name", name]
                + arguments.dropFirst(),
            token: token)
    }

    /// Expects a refusal: exit 4 and `permissionDenied` naming `path` in the error.
    static func expectDenied(
        _ result: (status: Int32, stdout: String, stderr: String), _ what: String, path: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(result.status == 4, "\(what): \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.contains("permissionDenied"), "\(what): \(result.stderr)", sourceLocation: sourceLocation)
        #expect(
            result.stderr.contains("access to \(path) for"), "\(what): \(result.stderr)", sourceLocation: sourceLocation
        )
    }

    @Test func twoClientsAreEachKeptToTheirOwnSubtree() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let hub = try await Self.hub(scratch)
        defer { hub.stop() }
        #expect(try await Self.run(hub, as: "admin", ["set", "/public/news", "\"hello\""]).status == 0)
        #expect(try await Self.run(hub, as: "admin", ["set", "/users/bob/secret", "\"b\""]).status == 0)

        // get and set, each in its own subtree.
        #expect(try await Self.run(hub, as: "alice", ["set", "/users/alice/score", "1"]).status == 0)
        #expect(try await Self.run(hub, as: "alice", ["get", "/users/alice/score"]).stdout == "1")
        #expect(try await Self.run(hub, as: "alice", ["get", "/public/news"]).stdout == "\"hello\"")
        #expect(try await Self.run(hub, as: "bob", ["set", "/users/bob/score", "2"]).status == 0)
        await Self.expectDenied(
            try Self.run(hub, as: "alice", ["get", "/users/bob/secret"]), "alice reads bob's", path: "/users/bob/secret"
        )
        await Self.expectDenied(
            try Self.run(hub, as: "bob", ["get", "/users/alice"]), "bob reads alice's", path: "/users/alice")
        await Self.expectDenied(
            try Self.run(hub, as: "alice", ["set", "/users/bob/x", "1"]), "alice writes bob's", path: "/users/bob/x")
        Self.expectDenied(try await Self.run(hub, as: "alice", ["get", "/users"]), "alice reads the parent", path: "/users")
        Self.expectDenied(try await Self.run(hub, as: "alice", ["get", "/"]), "alice reads the root", path: "/")
        await Self.expectDenied(
            try Self.run(hub, as: "alice", ["set", "/public/news", "1"]), "alice writes /public", path: "/public/news")
        await Self.expectDenied(
            try Self.run(hub, as: "alice", ["incr", "/users/bob/score"]), "alice increments bob's",
            path: "/users/bob/score")
        // `..` is resolved before the rules are applied: it leads to bob's subtree, and is refused there.
        await Self.expectDenied(
            try Self.run(hub, as: "alice", ["set", "/users/alice/../bob/x", "1"]), "alice climbs with ..",
            path: "/users/bob/x")

        // merge: deep keys inside her subtree pass; one child in bob's refuses the whole merge.
        await #expect(
            try Self.run(hub, as: "alice", ["merge", "/users/alice", #"{"deep/er/key": 3, "top": 4}"#]).status == 0)
        #expect(try await Self.run(hub, as: "alice", ["get", "/users/alice/deep/er/key"]).stdout == "3")
        await Self.expectDenied(
            try Self.run(hub, as: "alice", ["merge", "/users", #"{"alice/a": 1, "bob/b": 2}"#]), "a merge across",
            path: "/users/bob/b")
        await Self.expectDenied(
            try Self.run(hub, as: "alice", ["merge", "/users/alice/..", #"{"bob/deep/c": 1}"#]), "a merge at ..",
            path: "/users/bob/deep/c")
        _ = try await Self.run(hub, as: "alice", ["merge", "/users/alice", #"{"../bob/y": 1}"#])
        await #expect(
            try Self.run(hub, as: "alice", ["get", "/users/alice/a"]).stdout == "null", "a refused merge writes nothing"
        )
        await #expect(
            try Self.run(hub, as: "admin", ["get", "/users/bob"]).stdout == #"{"score":2,"secret":"b"}"#,
            "nothing alice sent reached bob's subtree")

        // watch: her own subtree streams; a parent holding bob's data is refused, not filtered.
        await Self.expectDenied(
            try Self.run(hub, as: "alice", ["watch", "/users"]), "alice watches the parent", path: "/users")
        let watch = try WatchProcess(
            hub, as: "alice", token: Self.aliceToken, path: "/users/alice/score", scratch: scratch)
        defer { watch.stop() }
        try await eventually("alice's watch prints the value") { watch.output.contains("1") }
        #expect(try await Self.run(hub, as: "alice", ["set", "/users/alice/score", "5"]).status == 0)
        #expect(try await Self.run(hub, as: "admin", ["set", "/users/bob/score", "6"]).status == 0)
        try await eventually("alice's watch prints the change") { watch.output.contains("5") }
        #expect(!watch.output.contains("6"))

        // A client token may not open a peer session: a daemon dialling the hub as alice gets nothing.
        let peerTokens = try scratch.write("peer-tokens", "hub \(Self.aliceToken)\nadmin \(Self.adminToken)\n")
        let intruder = try await Daemon(
            database: scratch.file("intruder.sqlite"), peers: [hub.port], tokens: peerTokens, name: "alice")
        defer { intruder.stop() }
        try await eventually("the hub refuses the client token as a peer") {
            hub.log.contains("\"alice\" holds a client token, which cannot open a peer session")
        }
        try await eventually("the intruder hears why") { intruder.log.contains("roleMismatch") }
        #expect(hub.log.contains("sync session closed"))
        let stolen = try await WeftBinary.run(
            ["get", "/", "--server", "127.0.0.1:\(intruder.port)", "--server-name", "alice", "--name", "admin"],
            token: Self.adminToken)
        #expect(stolen.stdout == "null", "the intruder replicated nothing: \(stolen.stderr)")
    }

    @Test func aReloadOnSIGHUPEndsWhatAClientLostAndKeepsTheOthers() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let hub = try await Self.hub(scratch)
        defer { hub.stop() }
        #expect(try await Self.run(hub, as: "admin", ["set", "/public/news", "\"v1\""]).status == 0)
        let alice = try WatchProcess(hub, as: "alice", token: Self.aliceToken, path: "/public/news", scratch: scratch)
        defer { alice.stop() }
        let bob = try WatchProcess(hub, as: "bob", token: Self.bobToken, path: "/public/news", scratch: scratch)
        defer { bob.stop() }
        try await eventually("both watches print the value") { alice.output.contains("v1") && bob.output.contains("v1") }

        // alice loses /public; bob keeps it.
        let lines = Self.rules.split(separator: "\n").map(String.init)
        let narrower = lines.filter { !($0.contains(" alice ") && $0.contains("/public")) }
        #expect(narrower.count == lines.count - 1)
        _ = try scratch.write("rules", narrower.joined(separator: "\n") + "\n")
        kill(hub.process.processIdentifier, SIGHUP)
        try await eventually("the reload is logged") { hub.log.contains("tokens and rules reloaded") }
        try await eventually("alice's watch ends") { !alice.process.isRunning }
        #expect(alice.process.terminationStatus == 4, "\(alice.errors)")
        #expect(alice.errors.contains("watch 1 of /public/news ended: no read access to /public/news for alice"))
        #expect(hub.process.isRunning)
        #expect(try await Self.run(hub, as: "admin", ["set", "/public/news", "\"v2\""]).status == 0)
        try await eventually("bob's watch goes on") { bob.output.contains("v2") }
        #expect(bob.process.isRunning)
        await Self.expectDenied(
            try Self.run(hub, as: "alice", ["get", "/public/news"]), "alice after the reload", path: "/public/news")
        #expect(try await Self.run(hub, as: "alice", ["set", "/users/alice/x", "1"]).status == 0, "alice keeps her own")

        // bob's token removed: his session is closed, and his token no longer opens one.
        _ = try scratch.write("tokens", Self.tokenLines.filter { !$0.hasPrefix("bob ") }.joined(separator: "\n") + "\n")
        _ = try scratch.write("rules", narrower.filter { !$0.contains(" bob ") }.joined(separator: "\n") + "\n")
        kill(hub.process.processIdentifier, SIGHUP)
        try await eventually("bob's watch ends") { !bob.process.isRunning }
        #expect(bob.process.terminationStatus == 4, "\(bob.errors)")
        #expect(bob.errors.contains("authenticationFailed") && bob.errors.contains("was removed"), "\(bob.errors)")
        #expect(try await Self.run(hub, as: "bob", ["get", "/public/news"]).status == 4)

        // A rules file that no longer parses changes nothing.
        _ = try scratch.write("rules", "client nobody read /x\n")
        kill(hub.process.processIdentifier, SIGHUP)
        try await eventually("the refused reload is logged") { hub.log.contains("reload refused") }
        #expect(try await Self.run(hub, as: "alice", ["get", "/users/alice/x"]).stdout == "1")
    }

    @Test func aPeerLimitedToItsSubtreeWritesThereAndNowhereElse() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let leafToken = "leaf1's secret, long enough for a token"
        let tokens = try scratch.write("tokens", "leaf1 \(leafToken)\nadmin \(Self.adminToken)\n")
        let rules = try scratch.write("rules", "peer leaf1 readwrite /stores/$name/**\nclient admin\n")
        let hub = try await Daemon(
            database: scratch.file("hub.sqlite"), tokens: tokens, name: "hub", options: ["--rules", rules])
        defer { hub.stop() }
        let leafTokens = try scratch.write("leaf-tokens", "hub \(leafToken)\nadmin \(Self.adminToken)\n")
        let leaf = try await Daemon(
            database: scratch.file("leaf.sqlite"), peers: [hub.port], tokens: leafTokens, name: "leaf1")
        defer { leaf.stop() }
        func run(_ daemon: Daemon, _ name: String, _ arguments: [String]) async throws -> String {
            try await WeftBinary.run(
                [arguments[0], "--server", "127.0.0.1:\(daemon.port)", "--server-name", name, "--name", "admin"]
                    + arguments.dropFirst(), token: Self.adminToken
            ).stdout
        }
        #expect(try await run(hub, "hub", ["set", "/stores/leaf2/stock", "7"]) == #"{"ok":true}"#)
        #expect(try await run(leaf, "leaf1", ["set", "/stores/leaf1/stock", "5"]) == #"{"ok":true}"#)
        try await eventually("the leaf's write in its subtree to reach the hub") {
            try await run(hub, "hub", ["get", "/stores/leaf1/stock"]) == "5"
        }
        #expect(try await run(leaf, "leaf1", ["get", "/stores/leaf2"]) == "null", "a limited peer is sent nothing")
        #expect(try await run(leaf, "leaf1", ["set", "/stores/leaf2/stock", "0"]) == #"{"ok":true}"#)
        try await eventually("the hub to refuse the leaf's write outside its subtree") {
            hub.log.contains("the peer may not write /stores/leaf2/stock")
        }
        #expect(try await run(hub, "hub", ["get", "/stores/leaf2/stock"]) == "7")
    }

    @Test func aRulesFileThatNamesNoEntryOrCannotBeParsedStopsTheDaemonAtStart() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let tokens = try scratch.write("tokens", Self.tokenLines.joined(separator: "\n") + "\n")
        for (text, reason) in [
            ("client alcie read /public", "rules:1: alcie is not an entry of the token file"),
            ("client alice read public", "rules:1: invalid path pattern public: it must start with /"),
            ("reader alice read /public", "rules:1: the kind is peer or client, not reader"),
            ("client alice look /public", "rules:1: the access is read, write or readwrite, not look"),
            ("client alice\npeer alice", "rules:2: alice is already a client; it cannot also be a peer"),
        ] {
            let rules = try scratch.write("rules", text + "\n")
            let serve = try await WeftBinary.run(
                [
                    "serve", "--db", scratch.file("hub.sqlite"), "--listen", "127.0.0.1:0", "--tokens", tokens,
                    "--rules", rules,
                ],
                token: Self.adminToken, seconds: 10)
            #expect(serve.status == 1)
            #expect(serve.stderr.contains(reason), "\(serve.stderr)")
        }
    }
}

/// A `weft watch` running in the background, its output and errors in files.
final class WatchProcess {
    let process = Process()
    private let outputPath: String
    private let errorsPath: String

    init(_ hub: Daemon, as name: String, token: String, path: String, scratch: Scratch) throws {
        outputPath = scratch.file("watch-\(name)-\(UUID().uuidString).out")
        errorsPath = outputPath + ".err"
        for file in [outputPath, errorsPath] { _ = FileManager.default.createFile(atPath: file, contents: nil) }
        process.executableURL = try WeftBinary.url()
        process.arguments = [
            "watch", path, "--server", "127.0.0.1:\(hub.port)", "--server-name", "hub", "--name", name,
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["WEFT_TOKEN"] = token
        process.environment = environment
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorsPath))
        try ChildProcess.start(process)
    }

    var output: String { Daemon.read(outputPath) }
    var errors: String { Daemon.read(errorsPath) }

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
