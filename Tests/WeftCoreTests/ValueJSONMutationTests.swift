import Testing

@testable import WeftCore

/// JSON comes from apps and from the daemon's clients. Valid documents with a few bytes changed,
/// inserted or removed either parse to a value whose canonical text parses back to the same value, or
/// are refused with a ``CoreError``: never a crash.
@Suite struct ValueJSONMutationTests {
    static let documents = [
        #"{"users":{"alice":{"score":3,"name":"Al\u00e9 \ud83d\ude00"},"bob":true},"pi":3.25e-3,"n":-0,"a":[1,2,{"x":null}]}"#,
        #"[1e308, -1e-308, 9223372036854775807, -9223372036854775808, 12345678901234567890.5, "\\\"\/\b\f\n\r\t", {"":1}]"#,
    ]

    /// Bytes JSON gives meaning to, so that insertions make near-misses rather than plain garbage.
    static let syntax = Array(#"{}[]":,\u0eE-+.9 "#.utf8)

    @Test func mutatedDocumentsParseToAStableValueOrGiveATypedError() throws {
        var generator = SeededGenerator(seed: 0x15_0000)
        var parsed = 0
        for round in 0..<20_000 {
            var bytes = Array(Self.documents[round % Self.documents.count].utf8)
            for _ in 0..<generator.int(in: 1...3) where !bytes.isEmpty {
                let at = Int(generator.below(UInt64(bytes.count)))
                switch generator.below(4) {
                case 0: bytes[at] = UInt8(truncatingIfNeeded: generator.next())
                case 1: bytes.insert(Self.syntax[Int(generator.below(UInt64(Self.syntax.count)))], at: at)
                case 2: bytes.remove(at: at)
                default: bytes.removeSubrange(at...)
                }
            }
            do {
                let value = try Value(jsonBytes: bytes)
                parsed += 1
                #expect(try Value(json: value.jsonString()) == value, "round \(round)")
            } catch {
                #expect(error is CoreError, "round \(round): \(error)")
            }
        }
        #expect(parsed > 200)
    }
}
