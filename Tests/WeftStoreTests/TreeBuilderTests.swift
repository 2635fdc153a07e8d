import Testing
import WeftCore

@testable import WeftStore

/// Rebuilding subtrees from leaf rows.
@Suite struct TreeBuilderTests {
    private func build(_ path: String, _ rows: [(String, Value)]) throws -> Value {
        var builder = TreeBuilder(path: Sample.path(path), location: "test")
        for (text, value) in rows { try builder.add(text: text, encoded: OpCodec.encode(value)) }
        return builder.finish()
    }

    @Test func rowsInKeyOrderRebuildTheSubtree() throws {
        let rows: [(String, Value)] = [
            ("/a-b", .int(1)), ("/a/b", .int(2)), ("/a/c/d", .bool(true)), ("/a0", .string("s")),
        ]
        #expect(try build("/", rows) == Sample.json(#"{"a-b":1,"a":{"b":2,"c":{"d":true}},"a0":"s"}"#))
        #expect(
            try build("/a", [("/a/b", .int(2)), ("/a/c/d", .bool(true))]) == Sample.json(#"{"b":2,"c":{"d":true}}"#))
        #expect(try build("/a", [("/a", .int(7))]) == .int(7))
        #expect(try build("/", [("/", .int(7))]) == .int(7))
        #expect(try build("/", []) == .null)
    }

    @Test func leafRowsTheTreeCannotHoldAreRefused() throws {
        #expect(throws: StoreError.self) { try build("/", [("/a", .int(1)), ("/a/b", .int(2))]) }
        #expect(throws: StoreError.self) { try build("/", [("/a/b", .int(1)), ("/a/b", .int(2))]) }
        #expect(throws: StoreError.self) { try build("/", [("/a//b", .int(1))]) }
        #expect(throws: StoreError.self) { try build("/", [("/a/b.c", .int(1))]) }
        #expect(throws: StoreError.self) { try build("/", [("/a/b", .int(1)), ("/", .int(2))]) }
        #expect(throws: StoreError.self) { try build("/a", [("/b", .int(1))]) }
        #expect(throws: StoreError.self) { try build("/", [("/a", .null)]) }
        // Out of order: /a's subtree reopened after /b.
        #expect(throws: StoreError.self) { try build("/", [("/a/x", .int(1)), ("/b", .int(2)), ("/a/y", .int(3))]) }
    }
}
