import Foundation
import Testing

/// Input that a careless script or a probe gives the client commands: empty and root paths, integers no
/// value holds, bytes that are not UTF-8, values that start with a dash, an increment the daemon refuses.
@Suite(.serialized, .timeLimit(.minutes(5))) struct ClientCommandInputTests {
    static let name = "hub"
    static let nobody = ["--server", "127.0.0.1:1"]

    static func client(_ daemon: Daemon, _ arguments: [String]) async throws -> (
        status: Int32, stdout: String, stderr: String
    ) {
        try await DaemonIntegrationTests.client(daemon, name: name, arguments)
    }

    /// `weft set '' 1` and `weft set /tp/.. 1` replaced the whole tree and exited 0: a script's
    /// `weft set "/users/$NAME" …` with `NAME=..` wiped everything. An empty path is now a usage error, and
    /// a write that resolves to the root takes `--root`.
    @Test func anEmptyPathIsAUsageErrorAndARootWriteTakesTheRootFlag() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let hub = try await Daemon(
            database: scratch.file("hub.sqlite"), tokens: try DaemonIntegrationTests.tokens(scratch, names: []),
            name: Self.name)
        defer { hub.stop() }
        #expect(try await Self.client(hub, ["set", "/users", #"{"a":1}"#]).status == 0)
        for arguments in [["set", "", "1"], ["get", ""], ["merge", "", #"{"a":1}"#], ["incr", ""], ["watch", ""]] {
            let result = try await Self.client(hub, arguments)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("a path is not empty"), "\(arguments): \(result.stderr)")
        }
        for path in ["/", ".", "/..", "/tp/..", "users/..", "/users/../."] {
            for arguments in [["set", path, "1"], ["merge", path, #"{"b":2}"#], ["incr", path]] {
                let result = try await Self.client(hub, arguments)
                #expect(result.status == 2, "\(arguments): \(result.stderr)")
                #expect(result.stderr.contains("resolves to the root"), "\(arguments): \(result.stderr)")
                #expect(result.stderr.contains("--root"), "\(arguments): \(result.stderr)")
            }
        }
        #expect(try await Self.client(hub, ["get", "/"]).stdout == #"{"users":{"a":1}}"#)
        // Reads and pushes at the root replace nothing; an explicit --root writes there.
        #expect(try await Self.client(hub, ["get", "/users/.."]).stdout == #"{"users":{"a":1}}"#)
        #expect(try await Self.client(hub, ["merge", "/", #"{"b":2}"#, "--root"]).status == 0)
        #expect(try await Self.client(hub, ["get", "/"]).stdout == #"{"b":2,"users":{"a":1}}"#)
        #expect(try await Self.client(hub, ["set", "--root", "/tp/..", #"{"c":3}"#]).status == 0)
        #expect(try await Self.client(hub, ["get", "/"]).stdout == #"{"c":3}"#)
    }

    /// `weft set /in 123456789012345678901234567890` stored `1.2345678901234568e+29`; `9223372036854775808`
    /// became `9.223372036854776e+18`. They are refused as invalid JSON; an exponent still makes a double.
    @Test func integersBeyondInt64AreInvalidJSON() async throws {
        for text in ["123456789012345678901234567890", "9223372036854775808", #"{"id":-9223372036854775809}"#] {
            let result = try await WeftBinary.run(
                ["set", "/in", text] + Self.nobody, token: DaemonIntegrationTests.clientToken)
            #expect(result.status == 2, "\(text): \(result.stderr)")
            #expect(result.stderr.contains("invalid JSON"), "\(text): \(result.stderr)")
            #expect(result.stderr.contains("outside the 64-bit range"), "\(text): \(result.stderr)")
        }
        let step = try await WeftBinary.run(
            ["incr", "/in", "99999999999999999999"] + Self.nobody, token: DaemonIntegrationTests.clientToken)
        #expect(step.status == 2, "\(step.stderr)")
        let exponent = try await WeftBinary.run(
            ["set", "/in", "1.5e29"] + Self.nobody, token: DaemonIntegrationTests.clientToken)
        #expect(exponent.status == 3, "a double is good input, and meets the unreachable daemon: \(exponent.stderr)")
    }

    /// `weft set $'/tp/x\xffy' 1` exited 0 and wrote the key `x\u{FFFD}y`: Swift repairs invalid UTF-8 in
    /// arguments. A path (or a JSON argument) that is not UTF-8 is a usage error.
    @Test func anArgumentThatIsNotUTF8IsAUsageError() async throws {
        let shell = URL(fileURLWithPath: "/bin/sh")
        let weft = try WeftBinary.url().path
        for (script, what) in [
            (#"exec "$0" set "$(printf '/tp/x\377y')" 1 --server 127.0.0.1:1"#, "invalid path"),
            (#"exec "$0" get "$(printf '/\300\200')" --server 127.0.0.1:1"#, "invalid path"),
            (#"exec "$0" set /tp "$(printf '"\377"')" --server 127.0.0.1:1"#, "invalid JSON"),
        ] {
            let result = try await WeftBinary.run(
                ["-c", script, weft], token: DaemonIntegrationTests.clientToken, executable: shell)
            #expect(result.status == 2, "\(script): \(result.stderr)")
            #expect(result.stderr.contains(what), "\(script): \(result.stderr)")
            #expect(result.stderr.contains("not valid UTF-8"), "\(script): \(result.stderr)")
        }
        // A U+FFFD typed as such is a character like any other.
        let typed = try await WeftBinary.run(
            ["set", "/tp/x\u{FFFD}y", "1"] + Self.nobody, token: DaemonIntegrationTests.clientToken)
        #expect(typed.status == 3, "\(typed.stderr)")
    }

    /// `weft set /x -Infinity` exited 64 with "Missing expected argument" where `Infinity` is invalid JSON
    /// (2): any argument that starts with a single dash is a value, wherever the options stand.
    @Test func anArgumentStartingWithADashIsAValue() async throws {
        for arguments in [
            ["set", "/x", "-Infinity"], ["set", "/x", "-NaN"], ["set", "--timeout", "900", "/x", "-abc"],
            ["incr", "/x", "-Infinity"], ["push", "/x", "-Infinity"], ["set", "/x", "-9e999"],
        ] {
            let result = try await WeftBinary.run(arguments + Self.nobody, token: DaemonIntegrationTests.clientToken)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("invalid JSON"), "\(arguments): \(result.stderr)")
        }
        let scratch = try Scratch()
        defer { scratch.remove() }
        let hub = try await Daemon(
            database: scratch.file("hub.sqlite"), tokens: try DaemonIntegrationTests.tokens(scratch, names: []),
            name: Self.name)
        defer { hub.stop() }
        #expect(try await Self.client(hub, ["set", "/x", "-5"]).status == 0)
        #expect(try await Self.client(hub, ["incr", "/x", "-3"]).stdout == "-8")
        #expect(try await Self.client(hub, ["get", "/x"]).stdout == "-8")
    }

    /// An increment the daemon rejects ("not a number") stayed in its log: `opsKnown` grew by one for each,
    /// and every peer received it. The daemon now refuses it before it is an op.
    @Test func aRefusedIncrementLeavesNoOpInTheLog() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let hub = try await Daemon(
            database: scratch.file("hub.sqlite"), tokens: try DaemonIntegrationTests.tokens(scratch, names: []),
            name: Self.name)
        defer { hub.stop() }
        #expect(try await Self.client(hub, ["set", "/name", #""Ada""#]).status == 0)
        #expect(try await Self.client(hub, ["set", "/huge", "1e308"]).status == 0)
        func opsKnown() async throws -> String? {
            let status = try await Self.client(hub, ["status"]).stdout
            return status.firstRange(of: #/"opsKnown":\d+/#).map { String(status[$0]) }
        }
        let before = try await opsKnown()
        #expect(before != nil)
        for (arguments, reason) in [
            (["incr", "/name"], "increment of /name, which is not a number"),
            (["incr", "/huge", "1e308"], "increment of /huge would not be finite"),
        ] {
            let refused = try await Self.client(hub, arguments)
            #expect(refused.status == 1, "\(arguments): \(refused.stderr)")
            #expect(refused.stderr.contains("refused: \(reason)"), "\(arguments): \(refused.stderr)")
        }
        #expect(try await opsKnown() == before)
        #expect(try await Self.client(hub, ["incr", "/count"]).stdout == "1")
        #expect(try await opsKnown() != before, "an increment that applies is an op")
    }
}
