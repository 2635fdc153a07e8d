import PropertyBased
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

/// `Value.write` and `Value.update` move objects out of the tree while they change them and borrow
/// their keys: random writes and updates must land where the plain rules say, and return what was
/// there.
@Suite struct ValueWriteRulesTests {
    /// The data model's rules written plainly, as the specification: a scalar or nothing on the way
    /// becomes an object (unless the write is null, which then changes nothing), a null node is
    /// removed, and so are the objects it empties.
    static func written(_ tree: Value, _ value: Value, at keys: ArraySlice<Key>) -> Value {
        guard let first = keys.first else { return value }
        var children: [Key: Value] = [:]
        if case .object(let existing) = tree {
            children = existing
        } else if value.isNull {
            return tree
        }
        let child = written(children[first] ?? .null, value, at: keys.dropFirst())
        children[first] = child.isNull ? nil : child
        return children.isEmpty ? .null : .object(children)
    }

    static func randomValue(_ rng: inout SeededGenerator, depth: Int) -> Value {
        switch rng.below(depth >= 2 ? 4 : 6) {
        case 0: return .null
        case 1: return .int(Int64(rng.below(9)))
        case 2: return .string("s\(rng.below(3))")
        case 3: return .bool(true)
        default:
            var children: [Key: Value] = [:]
            for _ in 0..<(1 + rng.below(3)) { children["k\(rng.below(3))"] = randomValue(&rng, depth: depth + 1) }
            return Value.object(normalizing: children)
        }
    }

    static func randomKeys(_ rng: inout SeededGenerator) -> [Key] {
        (0..<rng.below(4)).map { _ in Key(unchecked: "k\(rng.below(3))") }
    }

    @Test func writesAndUpdatesFollowThePlainRules() async {
        await propertyCheck(count: 500, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            var rng = SeededGenerator(seed: UInt64(seed) ^ 0x3217)
            var tree = Self.randomValue(&rng, depth: 0)
            for _ in 0..<40 {
                let keys = Self.randomKeys(&rng)
                let value = Self.randomValue(&rng, depth: 1)
                let expected = Self.written(tree, value, at: keys[...])
                let before = tree.value(at: keys[...])
                if rng.chance(0.5) {
                    let old = tree.write(value, at: keys[...])
                    #expect(old == before)
                    #expect(tree == expected)
                } else {
                    var seen: Value?
                    let scalarAbove = tree.hasScalar(above: keys[...])
                    let previous = tree
                    let walked = tree.update(at: keys[...]) { node in
                        seen = node
                        node = value
                    }
                    #expect(walked == !scalarAbove)
                    if walked {
                        #expect(seen == before)
                        #expect(tree == expected)
                    } else {
                        #expect(seen == nil)
                        #expect(tree == previous)
                    }
                }
                #expect(tree.isNull || tree.isNormalized)
            }
        }
    }
}
