import Testing
import WeftCore
@testable import WeftSync

@Suite struct SnapshotChunkerSplitTests {
    /// A random normalized tree of bounded depth and width.
    static func randomTree(_ generator: inout SeededGenerator, depth: Int = 0) -> Value {
        if depth >= 4 || generator.below(3) == 0 {
            switch generator.below(5) {
            case 0: return .bool(generator.below(2) == 0)
            case 1: return .int(Int64(bitPattern: generator.next()))
            case 2: return .double(Double(generator.below(1_000_000)) / 7)
            case 3: return .string(String(repeating: "s", count: Int(generator.below(300))))
            default: return .string("é\(generator.below(99))")
            }
        }
        var children: [Key: Value] = [:]
        for index in 0..<Int(generator.below(12)) + 1 {
            children["k\(index)-\(generator.below(5))"] = randomTree(&generator, depth: depth + 1)
        }
        return .object(children)
    }

    func rebuild(_ entries: [SnapshotEntry]) -> Value {
        var tree = Value.null
        for entry in entries { SnapshotChunker.merge(entry.value, into: &tree, at: entry.path) }
        return tree
    }

    @Test(arguments: [1, 16, 100, 1000, 1_000_000])
    func entriesRebuildTheTreeForAnyBudget(budget: Int) {
        var generator = SeededGenerator(seed: UInt64(budget))
        for _ in 0..<40 {
            let tree = Self.randomTree(&generator)
            let entries = SnapshotChunker.entries(of: tree, entryBytesMax: budget)
            #expect(rebuild(entries) == tree)
        }
    }

    @Test(arguments: [8, 50, 200])
    func onlyScalarsLargerThanTheBudgetExceedIt(budget: Int) {
        var generator = SeededGenerator(seed: 4)
        for _ in 0..<40 {
            let tree = Self.randomTree(&generator)
            for entry in SnapshotChunker.entries(of: tree, entryBytesMax: budget) {
                let size = OpCodec.byteCount(of: entry.value)
                #expect(size <= budget || !entry.value.isObject, "an object entry of \(size) bytes")
            }
        }
    }

    @Test func aTreeWithinTheBudgetIsOneEntryAtTheRoot() {
        let tree = Samples.tree
        #expect(SnapshotChunker.entries(of: tree, entryBytesMax: 10_000) == [SnapshotEntry(path: .root, value: tree)])
        #expect(SnapshotChunker.entries(of: .null, entryBytesMax: 10).isEmpty)
    }

    @Test func measuredSizesEqualTheEncodedSizes() {
        var generator = SeededGenerator(seed: 5)
        for _ in 0..<100 {
            let tree = Self.randomTree(&generator)
            #expect(OpCodec.byteCount(of: tree) == OpCodec.encode(tree).count)
            let entry = SnapshotEntry(path: try! Path("/a/bé/c"), value: tree.isNull ? .int(0) : tree)
            var writer = ByteWriter()
            SnapshotChunker.write(entry, to: &writer)
            #expect(SnapshotChunker.byteCount(of: entry) == writer.bytes.count)
        }
    }

    @Test func mergingAnEntryKeepsSiblingsAndReplacesScalars() {
        var tree = try! Value(json: #"{"a":{"x":1},"b":2}"#)
        SnapshotChunker.merge(try! Value(json: #"{"y":2}"#), into: &tree, at: try! Path("/a"))
        SnapshotChunker.merge(try! Value(json: #"{"c":3}"#), into: &tree, at: try! Path("/b"))
        #expect(tree == (try! Value(json: #"{"a":{"x":1,"y":2},"b":{"c":3}}"#)))
    }
}
