import Testing

@testable import WeftCore

@Suite struct KeyValidationTests {
    /// The key named by an `invalidKey` error, nil (and an issue) for any other outcome.
    func rejectedKey(_ key: String, sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        guard case .invalidKey(let named, _) = coreError(sourceLocation: sourceLocation, { try Key.validate(key) })
        else { return nil }
        #expect(!Key.isValid(key), sourceLocation: sourceLocation)
        return named
    }

    @Test(arguments: [".", "$", "#", "[", "]", "/"])
    func eachForbiddenCharacterIsRejectedAnywhereInTheKey(character: String) throws {
        for key in [character, "a\(character)", "\(character)a", "ab\(character)cd"] {
            #expect(rejectedKey(key) == key)
        }
        let error = try #require(coreError { try Key.validate("price\(character)") })
        #expect(error.description.contains("price\(character)"))
        #expect(error.description.contains("'\(character)'"))
    }

    @Test(arguments: Array(UInt8(0x00)...UInt8(0x1F)) + [0x7F])
    func asciiControlCharactersAreRejected(byte: UInt8) {
        let key = "x" + String(Unicode.Scalar(byte)) + "y"
        #expect(rejectedKey(key) == key)
    }

    @Test func theEmptyKeyIsRejected() {
        #expect(rejectedKey("") == "")
    }

    @Test func charactersNextToTheForbiddenOnesAreAllowed() throws {
        for key in [
            " ", "-", "_", "~", "%", "@", "!", "*", "\\", "{", "}", "a b", "é", "😀", "\u{80}", "\u{A0}",
            "\u{2028}", "0", "-Nx3", "ALICE",
        ] {
            try Key.validate(key)
            #expect(Key.isValid(key))
        }
    }

    @Test func aKeyOf768BytesIsAllowedAnd769BytesIsRejected() throws {
        let longest = String(repeating: "k", count: 768)
        try Key.validate(longest)
        let tooLong = longest + "k"
        #expect(rejectedKey(tooLong) == tooLong)
        let error = try #require(coreError { try Key.validate(tooLong) })
        #expect(error.description.contains("769 bytes"))
    }

    @Test func lengthIsCountedInUTF8BytesNotCharacters() throws {
        // é is 2 bytes, € is 3, 😀 is 4.
        try Key.validate(String(repeating: "é", count: 384))
        try Key.validate(String(repeating: "€", count: 256))
        try Key.validate(String(repeating: "😀", count: 192))
        for tooLong in [
            String(repeating: "é", count: 384) + "a", String(repeating: "€", count: 257),
            String(repeating: "😀", count: 193),
        ] {
            #expect(tooLong.count < 769)
            #expect(rejectedKey(tooLong) == tooLong)
        }
    }

    @Test func multiByteScalarsNeverTripTheByteChecks() throws {
        // Continuation bytes of UTF-8 (0x80...0xBF) include 0xAE and 0xA4 but never the ASCII '.' or '$'.
        try Key.validate("\u{2E2E}\u{2424}\u{5B5B}\u{2F2F}")
    }

    @Test func pathsValidateEveryKey() throws {
        guard case .invalidKey(let key, _) = coreError({ try Path(keys: ["ok", "no.pe", "fine"]) }) else {
            Issue.record("a path with an invalid key was accepted")
            return
        }
        #expect(key == "no.pe")
        #expect(coreError { try Path(keys: ["ok", ""]) } == .invalidKey(key: "", reason: "keys cannot be empty"))
    }
}

@Suite struct KeyNormalizationTests {
    @Test func aKeyInNormalizationFormCIsAccepted() throws {
        try Key.validate("caf\u{E9}")
    }

    @Test func aDecomposedKeyIsRefusedBecauseItWouldAliasItsComposedTwin() {
        #expect(throws: CoreError.self) { try Key.validate("cafe\u{301}") }
        #expect(throws: CoreError.self) { try Value(json: "{\"cafe\u{301}\":1}") }
    }

    @Test func negativeZeroIsStoredAsZero() throws {
        let value = try Value(json: "-0.0")
        guard case .double(let d) = value else {
            Issue.record("expected a double")
            return
        }
        #expect(d.sign == .plus)
        #expect(StateDigest(of: value) == StateDigest(of: .double(0)))
        var writer = ByteWriter()
        OpCodec.write(.double(-0.0), to: &writer)
        #expect(throws: CoreError.self) { try OpCodec.decodeValue(writer.bytes) }
    }
}
