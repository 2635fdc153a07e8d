import Testing

@testable import WeftCore

/// A key carries a hash of its bytes, made once: it must be the same however the key is made, in every
/// process, and agree with equality wherever keys meet (trees, paths, the index).
@Suite struct KeyIdentityTests {
    @Test func aKeyIsTheSameHoweverItIsMade() throws {
        let literal: Key = "alice"
        let checked = try Key(validating: "alice")
        let unchecked = Key(unchecked: "alice")
        let interpolated: Key = "ali\("ce")"
        for key in [checked, unchecked, interpolated] {
            #expect(key == literal)
            #expect(key.hashValue == literal.hashValue)
            #expect(key.hashBits == literal.hashBits)
        }
        #expect(Key(unchecked: "alicf") != literal)
    }

    @Test func theHashDependsOnTheBytesAloneSoItIsStableAcrossProcesses() {
        // Pinned: a change here changes nothing stored (the hash is never written), but it would mean
        // the hash depends on something other than the bytes.
        #expect(Key(unchecked: "alice").hashBits == FastHash.finalize(FastHash.fold(key: "alice", into: 0)))
        #expect(Key(unchecked: "a").hashBits != Key(unchecked: "b").hashBits)
        #expect(Key(unchecked: "ab").hashBits != Key(unchecked: "ba").hashBits)
    }

    @Test func aValidatingKeyRefusesWhatValidateRefuses() throws {
        for text in ["", "a.b", "a/b", "x\u{7F}"] {
            #expect(throws: CoreError.self) { try Key(validating: text) }
        }
        #expect(try Key(validating: "é").text == "é")
        #expect(throws: CoreError.self) { try Key(validating: "e\u{301}") }
    }

    @Test func keysOrderByTheirUTF8Bytes() {
        let keys: [Key] = ["b", "a", "Z", "é", "z", "aa", "10", "9"]
        #expect(keys.sorted().map(\.text) == ["10", "9", "Z", "a", "aa", "b", "z", "é"])
        #expect(keys.sorted().map(\.text) == keys.map(\.text).sorted(by: Value.utf8Less))
    }

    @Test func keyOrderIsUTF8ByteOrderForEveryNFCKey() {
        var generator = SeededGenerator(seed: 42)
        let alphabet: [String] = ["a", "b", "Z", "0", "~", "é", "ß", "ÿ", "Ā", "中", "\u{10348}", "\u{FF5E}", "e"]
        func draw() -> String {
            (0..<(1 + Int(generator.below(5)))).map { _ in alphabet[Int(generator.below(UInt64(alphabet.count)))] }
                .joined()
        }
        for _ in 0..<2000 {
            let (a, b) = (draw(), draw())
            #expect((Key(unchecked: a) < Key(unchecked: b)) == Value.utf8Less(a, b), "\(a) < \(b)")
        }
    }

    @Test func treesAndPathsFindAKeyMadeAnotherWay() throws {
        var tree = Value.null
        tree.write(.int(1), at: try Path("/users/alice/score"))
        let path = try Path(keys: ["users", "alice", "score"])
        #expect(tree.value(at: path) == .int(1))
        #expect(tree["users"]["alice"][Key(unchecked: "score")] == .int(1))
        #expect(Set([path]).contains(try Path("/users/alice/score")))
        #expect(path.hashValue == (try Path("/users/alice/score")).hashValue)
        #expect(path.description == "/users/alice/score")
    }
}
