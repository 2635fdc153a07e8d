import Foundation
import Testing

/// How `weft serve` reads its token file: every entry it holds is usable, and a file it cannot use
/// stops it at start with a clear error.
@Suite(.serialized, .timeLimit(.minutes(5))) struct TokenFileIntegrationTests {
    static let clientToken = DaemonIntegrationTests.clientToken

    @Test func aTokenFileWithWindowsLineEndingsAuthenticatesEveryEntry() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        // "\r\n" is one Character in Swift: split on "\n" alone, the whole file was one line, a comment.
        let text = "# written on Windows\r\nclient \(Self.clientToken)\r\nhub a second secret, long enough\r\n"
        let tokens = try scratch.write("tokens", text)
        let hub = try await Daemon(database: scratch.file("hub.sqlite"), tokens: tokens, name: "hub")
        defer { hub.stop() }
        let set = try await DaemonIntegrationTests.client(hub, name: "hub", ["set", "/crlf", "1"])
        #expect(set.status == 0, "\(set.stderr)")
        #expect(try await DaemonIntegrationTests.client(hub, name: "hub", ["get", "/crlf"]).stdout == "1")
    }

    @Test func aNameLongerThanAHelloCarriesIsRefusedAtStart() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        // A hello names at most 256 bytes: such an entry could never authenticate anyone.
        let name = String(repeating: "n", count: 257)
        let tokens = try scratch.write("tokens", "client \(Self.clientToken)\n\(name) a secret, long enough\n")
        let serve = try await WeftBinary.run(
            ["serve", "--db", scratch.file("hub.sqlite"), "--listen", "127.0.0.1:0", "--tokens", tokens],
            token: Self.clientToken, seconds: 10)
        #expect(serve.status == 1)
        #expect(serve.stderr.contains("\(tokens):2: the name is longer than 256 bytes"), "\(serve.stderr)")
    }

    /// A token file that cannot be read says why in words: a directory read "(NSCocoaErrorDomain error
    /// 256.)" and a file that is not UTF-8 "The file isn't in the correct format", Foundation's texts.
    @Test func aTokenFileThatCannotBeReadSaysWhy() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let directory = scratch.file("tokens.d")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let binary = scratch.file("tokens.bin")
        try Data([0xFF, 0xFE, 0x20, 0x63, 0x0A]).write(to: URL(fileURLWithPath: binary))
        for (tokens, reason) in [
            (directory, "Is a directory"), (binary, "it is not UTF-8 text"),
            (scratch.file("missing"), "No such file or directory"),
        ] {
            let serve = try await WeftBinary.run(
                ["serve", "--db", scratch.file("hub.sqlite"), "--listen", "127.0.0.1:0", "--tokens", tokens],
                token: Self.clientToken, seconds: 10)
            #expect(serve.status == 1)
            #expect(serve.stderr.contains("cannot read the token file \(tokens): \(reason)"), "\(serve.stderr)")
            #expect(!serve.stderr.contains("NSCocoaErrorDomain"), "\(serve.stderr)")
        }
    }

    /// A token file has at most 10,000 entries of about a kilobyte: `--tokens /dev/zero` read without end,
    /// and the daemon's memory grew until the system killed it.
    @Test func aTokenFileLargerThanAnyTokenFileIsRefused() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let serve = try await WeftBinary.run(
            ["serve", "--db", scratch.file("hub.sqlite"), "--listen", "127.0.0.1:0", "--tokens", "/dev/zero"],
            token: Self.clientToken, seconds: 20)
        #expect(serve.status == 1)
        #expect(
            serve.stderr.contains("cannot read the token file /dev/zero: it holds more than 16 MiB"), "\(serve.stderr)")
    }

    /// A token file with no entry (only comments, or nothing) refuses everyone, as no file does: the daemon
    /// said so without a file, and started silently with an empty one.
    @Test func aTokenFileWithNoEntryIsWarnedOf() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let tokens = try scratch.write("tokens", "# nobody yet\n\n")
        let hub = try await Daemon(database: scratch.file("hub.sqlite"), tokens: tokens, name: "hub")
        defer { hub.stop() }
        #expect(
            hub.log.contains("the token file \(tokens) has no entry: every peer and client will be refused"),
            "\(hub.log)")
    }

    /// A file saved with a UTF-8 byte order mark (as Windows editors do): the mark became part of the first
    /// entry's name, so that entry never authenticated anyone, and nothing said why.
    @Test func aTokenFileWithAByteOrderMarkAuthenticatesItsFirstEntry() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let tokens = try scratch.write("tokens", "\u{FEFF}client \(Self.clientToken)\n")
        let hub = try await Daemon(database: scratch.file("hub.sqlite"), tokens: tokens, name: "hub")
        defer { hub.stop() }
        let set = try await DaemonIntegrationTests.client(hub, name: "hub", ["set", "/bom", "1"])
        #expect(set.status == 0, "\(set.stderr)")
    }
}
