import Testing
import WeftCore

@testable import WeftStore

/// The reader of stored path texts: row after row, it gives what `Path(text)` gives for every canonical
/// text, whatever it shares with the row before, and nil for any other text.
@Suite struct StoredPathReaderTests {
    private static func read(_ text: String, with reader: inout StoredPathReader) -> Path? {
        var text = text
        return text.withUTF8 { reader.path($0) }
    }

    @Test func rowsInKeyOrderReadAsTheirPaths() throws {
        var reader = StoredPathReader()
        let texts = ["/", "/a", "/a", "/a/b", "/a/b", "/a/bc", "/a/bc/d", "/a-c", "/ab/c", "/ab", "/é/x", "/"]
        for text in texts {
            #expect(Self.read(text, with: &reader) == (try Path(text)), "\(text)")
        }
    }

    @Test func textsThatAreNotCanonicalPathsReadAsNil() throws {
        let bad =
            ["", "a", "a/b", "//", "/a/", "/a//b", "/a.b", "/a/../b", "/./a", "/a/$", "/a\u{1}"]
            + ["/" + Array(repeating: "k", count: CoreLimits.pathDepthMax + 1).joined(separator: "/")]
        for text in bad {
            var reader = StoredPathReader()
            _ = Self.read("/a/b", with: &reader)
            #expect(Self.read(text, with: &reader) == nil, "\(text.debugDescription)")
            // A bad row leaves nothing behind: the next one reads whole.
            #expect(Self.read("/a/c", with: &reader) == (try Path("/a/c")))
        }
        // Bytes that are not UTF-8.
        var reader = StoredPathReader()
        let bytes: [UInt8] = [UInt8(ascii: "/"), 0xFF]
        #expect(bytes.withUnsafeBufferPointer { reader.path($0) } == nil)
        // Not in NFC: "e" and a combining acute accent.
        #expect(Self.read("/e\u{301}", with: &reader) == nil)
    }

    @Test func randomPathsSortedByTheirTextReadAsTheirPaths() throws {
        var rng = SeededGenerator(seed: 24)
        let alphabet = ["a", "b", "ab", "a-b", "b0", "é", "z"]
        var texts: [String] = []
        for _ in 0..<2_000 {
            let depth = Int(rng.below(5))
            texts.append(
                "/" + (0..<depth).map { _ in alphabet[Int(rng.below(UInt64(alphabet.count)))] }.joined(separator: "/"))
        }
        texts.sort { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        var reader = StoredPathReader()
        for text in texts {
            #expect(Self.read(text, with: &reader) == (try Path(text)), "\(text)")
        }
    }
}
