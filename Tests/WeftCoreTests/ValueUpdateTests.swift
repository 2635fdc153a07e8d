import Testing

@testable import WeftCore

/// `Value.update(at:_:)`: a change in place in one walk, with the same rules as `write`.
@Suite struct ValueUpdateTests {
    func keys(_ text: String) throws -> ArraySlice<Key> { try Path(text).keys[...] }

    @Test func updatingAMissingNodeBuildsItsAncestors() throws {
        var tree = Value.null
        var seen: Value = .string("not called")
        let walked = tree.update(at: try keys("/a/b/c")) { node in
            seen = node
            node = .int(1)
        }
        #expect(walked)
        #expect(seen == .null)
        var written = Value.null
        written.write(.int(1), at: try Path("/a/b/c"))
        #expect(tree == written)
    }

    @Test func aNodeLeftNullIsRemovedWithTheObjectsItEmpties() throws {
        var tree = try Value(json: #"{"a":{"b":{"c":1}},"d":2}"#)
        #expect(tree.update(at: try keys("/a/b/c")) { $0 = .null })
        #expect(tree == (try Value(json: #"{"d":2}"#)))
        // Leaving a missing node null adds nothing.
        #expect(tree.update(at: try keys("/x/y")) { _ in })
        #expect(tree == (try Value(json: #"{"d":2}"#)))
        #expect(tree.update(at: try keys("/d")) { $0 = .null })
        #expect(tree == .null)
    }

    @Test func aScalarAboveRefusesWithoutCallingOrChanging() throws {
        var tree = try Value(json: #"{"a":5,"b":{"c":"x"}}"#)
        let before = tree
        var called = false
        #expect(!tree.update(at: try keys("/a/b")) { _ in called = true })
        #expect(!tree.update(at: try keys("/b/c/d/e")) { _ in called = true })
        #expect(!called)
        #expect(tree == before)
        var scalar = Value.int(3)
        #expect(!scalar.update(at: try keys("/k")) { _ in called = true })
        #expect(scalar == .int(3))
    }

    @Test func theRootAndAnExistingLeafChangeInPlace() throws {
        var tree = try Value(json: #"{"n":{"m":1}}"#)
        #expect(tree.update(at: try keys("/n/m")) { if case .int(let i) = $0 { $0 = .int(i + 41) } })
        #expect(tree == (try Value(json: #"{"n":{"m":42}}"#)))
        #expect(tree.update(at: []) { $0 = .bool(true) })
        #expect(tree == .bool(true))
    }
}
