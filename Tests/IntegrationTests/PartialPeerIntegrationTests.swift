import Foundation
import Testing

/// A hub (`weft serve --role hub --rules`) serving two leaf daemons each limited to its own store
/// (`peer leafN readwrite /stores/$name/**`): writes on the hub and on each leaf, and each leaf ends
/// with exactly its share of the hub's tree while the hub holds everything.
@Suite(.serialized, .timeLimit(.minutes(5))) struct PartialPeerIntegrationTests {
    static let leaf1Token = "leaf1's peer secret, long enough for a token"
    static let leaf2Token = "leaf2's peer secret, long enough for a token"
    static let adminToken = DaemonIntegrationTests.clientToken

    static let rules = """
        peer     leaf1  readwrite  /stores/$name/**
        peer     leaf2  readwrite  /stores/$name/**
        client   admin
        """

    /// Runs a client command as admin against `daemon` (named `server`).
    static func admin(_ daemon: Daemon, _ server: String, _ arguments: [String]) async throws -> (
        status: Int32, stdout: String, stderr: String
    ) {
        try await WeftBinary.run(
            [arguments[0], "--server", "127.0.0.1:\(daemon.port)", "--server-name", server, "--name", "admin"]
                + arguments.dropFirst(),
            token: adminToken)
    }

    @Test func eachLeafEndsWithExactlyItsShare() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let hubTokens = try scratch.write(
            "hub-tokens", "leaf1 \(Self.leaf1Token)\nleaf2 \(Self.leaf2Token)\nadmin \(Self.adminToken)\n")
        let rulesFile = try scratch.write("rules", Self.rules + "\n")
        let hub = try await Daemon(
            database: scratch.file("hub.sqlite"), tokens: hubTokens, name: "hub",
            options: ["--rules", rulesFile, "--role", "hub"])
        defer { hub.stop() }

        // Written on the hub before the leaves dial: a set straddling both shares, and data of no leaf.
        let stores = #"{"leaf1":{"stock":3},"leaf2":{"stock":4}}"#
        #expect(try await Self.admin(hub, "hub", ["set", "/stores", stores]).status == 0)
        #expect(try await Self.admin(hub, "hub", ["set", "/users/alice", "1"]).status == 0)

        var leaves: [Daemon] = []
        defer { for leaf in leaves { leaf.stop() } }
        for (name, token) in [("leaf1", Self.leaf1Token), ("leaf2", Self.leaf2Token)] {
            let tokens = try scratch.write("\(name)-tokens", "hub \(token)\nadmin \(Self.adminToken)\n")
            leaves.append(
                try await Daemon(database: scratch.file("\(name).sqlite"), peers: [hub.port], tokens: tokens, name: name))
        }

        // Written after: an increment in each share, a merge across both, and a write on each leaf.
        #expect(try await Self.admin(hub, "hub", ["incr", "/stores/leaf1/stock", "2"]).status == 0)
        #expect(try await Self.admin(hub, "hub", ["incr", "/stores/leaf2/stock", "2"]).status == 0)
        await #expect(
            try Self.admin(hub, "hub", ["merge", "/stores", #"{"leaf1/open":true,"leaf2/open":false}"#]).status == 0)
        #expect(try await Self.admin(leaves[0], "leaf1", ["set", "/stores/leaf1/orders/o1", "\"a\""]).status == 0)
        #expect(try await Self.admin(leaves[1], "leaf2", ["set", "/stores/leaf2/orders/o2", "\"b\""]).status == 0)

        let expectedHub =
            #"{"stores":{"leaf1":{"open":true,"orders":{"o1":"a"},"stock":5},"leaf2":{"open":false,"orders":{"o2":"b"},"stock":6}},"users":{"alice":1}}"#
        try await eventually("the hub holds every write") {
            try await Self.admin(hub, "hub", ["get", "/"]).stdout == expectedHub
        }
        let shares = [
            #"{"stores":{"leaf1":{"open":true,"orders":{"o1":"a"},"stock":5}}}"#,
            #"{"stores":{"leaf2":{"open":false,"orders":{"o2":"b"},"stock":6}}}"#,
        ]
        for (index, name) in ["leaf1", "leaf2"].enumerated() {
            try await eventually("\(name) holds exactly its share") {
                try await Self.admin(leaves[index], name, ["get", "/"]).stdout == shares[index]
            }
        }
        // No replicating session was refused or failed on either end (clients closing is all the log shows).
        for (daemon, name) in [(hub, "hub"), (leaves[0], "leaf1"), (leaves[1], "leaf2")] {
            for code in ["permissionDenied", "roleMismatch", "protocolViolation", "localFailure", "snapshotMismatch"] {
                #expect(!daemon.log.contains(code), "\(name): \(code) in \(daemon.log)")
            }
        }
    }

    /// Reads `"opsInLog":N` from `weft status`.
    static func opsInLog(_ daemon: Daemon, _ server: String) async throws -> Int? {
        let status = try await admin(daemon, server, ["status"]).stdout
        guard let range = status.range(of: #""opsInLog":"#) else { return nil }
        return Int(status[range.upperBound...].prefix { $0.isNumber })
    }

    @Test func aLeafTakesTheShareOfTheHubsBaseWhenTheHubCompacts() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let parisToken = "paris's peer secret, long enough for a token"
        let hubTokens = try scratch.write(
            "hub-tokens", "leaf1 \(Self.leaf1Token)\nparis \(parisToken)\nadmin \(Self.adminToken)\n")
        let rulesFile = try scratch.write(
            "rules", "peer     leaf1  readwrite  /stores/$name/**\npeer     paris\nclient   admin\n")
        // A replica of the whole tree makes ops stable on the hub (a leaf is not a member), so it compacts.
        let hub = try await Daemon(
            database: scratch.file("hub.sqlite"), tokens: hubTokens, name: "hub",
            options: ["--rules", rulesFile, "--role", "hub", "--compact-after", "20"])
        defer { hub.stop() }
        let parisTokens = try scratch.write("paris-tokens", "hub \(parisToken)\nadmin \(Self.adminToken)\n")
        let paris = try await Daemon(
            database: scratch.file("paris.sqlite"), peers: [hub.port], tokens: parisTokens, name: "paris")
        defer { paris.stop() }
        let leafTokens = try scratch.write("leaf1-tokens", "hub \(Self.leaf1Token)\nadmin \(Self.adminToken)\n")
        let leaf = try await Daemon(
            database: scratch.file("leaf1.sqlite"), peers: [hub.port], tokens: leafTokens, name: "leaf1")
        defer { leaf.stop() }

        // Half of the writes in leaf1's share, half outside it: the leaf holds placeholders for those.
        for index in 0..<20 {
            #expect(try await Self.admin(hub, "hub", ["set", "/stores/leaf1/n\(index)", "\(index)"]).status == 0)
            #expect(try await Self.admin(hub, "hub", ["set", "/users/u\(index)", "\(index)"]).status == 0)
        }
        #expect(try await Self.admin(leaf, "leaf1", ["set", "/stores/leaf1/own", "true"]).status == 0)
        try await eventually("the hub compacts", seconds: 60) { hub.log.contains("compacted the log") }
        try await eventually("the leaf installs the share of the hub's base", seconds: 60) {
            leaf.log.contains("installed a snapshot from")
        }
        // Written after the compaction: it reaches the leaf on top of the base.
        #expect(try await Self.admin(hub, "hub", ["set", "/stores/leaf1/after", "1"]).status == 0)
        let share = try await Self.admin(hub, "hub", ["get", "/stores/leaf1"]).stdout
        #expect(share.contains(#""after":1"#) && share.contains(#""own":true"#), "\(share)")
        try await eventually("the leaf holds exactly its share") {
            try await Self.admin(leaf, "leaf1", ["get", "/"]).stdout == #"{"stores":{"leaf1":"# + share + "}}"
        }
        // Its log no longer holds the 40 ops the base folded (placeholders included).
        let inLog = try await Self.opsInLog(leaf, "leaf1")
        #expect(inLog.map { $0 < 40 } == true, "opsInLog \(String(describing: inLog))")
        for (daemon, name) in [(hub, "hub"), (paris, "paris"), (leaf, "leaf1")] {
            for code in ["permissionDenied", "roleMismatch", "protocolViolation", "localFailure", "snapshotMismatch"] {
                #expect(!daemon.log.contains(code), "\(name): \(code) in \(daemon.log)")
            }
        }
    }
}
