import Testing
import WeftCore

@testable import WeftStore

/// The materialized tree, run against both stores.
@Suite struct StoreTreeTests {
    @Test(arguments: StoreKind.allCases)
    func aSubtreeReadTakesItsRangeAndNoneOfItsLookalikeSiblings(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        try fixture.store.commit(
            Sample.treeBatch([
                ("/a", Sample.json(#"{"b":1,"c":{"d":"x"}}"#)),
                ("/a0", .int(2)), ("/a-b", .int(3)), ("/ab", .int(4)), ("/a!", .int(5)), ("/a~", .null),
                ("/a b", Sample.json(#"{"z":true}"#)), ("/`", .int(6)),
            ]))
        #expect(try fixture.store.readTree(at: Sample.path("/a")) == Sample.json(#"{"b":1,"c":{"d":"x"}}"#))
        #expect(try fixture.store.readTree(at: Sample.path("/a/c")) == Sample.json(#"{"d":"x"}"#))
        #expect(try fixture.store.readTree(at: Sample.path("/a/c/d")) == .string("x"))
        #expect(try fixture.store.readTree(at: Sample.path("/a0")) == .int(2))
        #expect(try fixture.store.readTree(at: Sample.path("/a-b")) == .int(3))
        #expect(try fixture.store.readTree(at: Sample.path("/a b")) == Sample.json(#"{"z":true}"#))
        #expect(try fixture.store.readTree(at: Sample.path("/missing")) == .null)
        #expect(try fixture.store.treeLeafCount() == 8)
    }

    @Test(arguments: StoreKind.allCases)
    func aSubtreeWriteReplacesOnlyItsOwnRange(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        try fixture.store.commit(
            Sample.treeBatch([
                ("/a", Sample.json(#"{"b":1,"c":2}"#)), ("/a0", .int(2)), ("/a-b", .int(3)), ("/ab", .int(4)),
            ]))
        try fixture.store.commit(Sample.treeBatch([("/a", Sample.json(#"{"e":5}"#))]))
        #expect(try fixture.store.readTree() == Sample.json(#"{"a":{"e":5},"a0":2,"a-b":3,"ab":4}"#))
        try fixture.store.commit(Sample.treeBatch([("/a", .null)]))
        #expect(try fixture.store.readTree() == Sample.json(#"{"a0":2,"a-b":3,"ab":4}"#))
        #expect(try fixture.store.treeLeafCount() == 3)
    }

    @Test(arguments: StoreKind.allCases)
    func writingBelowAScalarTurnsItIntoAnObject(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        try fixture.store.commit(Sample.treeBatch([("/", .int(1))]))
        #expect(try fixture.store.readTree() == .int(1))
        try fixture.store.commit(Sample.treeBatch([("/a", .string("s"))]))
        #expect(try fixture.store.readTree() == Sample.json(#"{"a":"s"}"#))
        try fixture.store.commit(Sample.treeBatch([("/a/b/c", .bool(true))]))
        #expect(try fixture.store.readTree() == Sample.json(#"{"a":{"b":{"c":true}}}"#))
        #expect(try fixture.store.readTree(at: Sample.path("/a/b/c/d")) == .null)
        // A null write below a scalar changes nothing.
        try fixture.store.commit(Sample.treeBatch([("/a/b/c/d", .null)]))
        #expect(try fixture.store.readTree(at: Sample.path("/a/b/c")) == .bool(true))
        #expect(try fixture.store.treeLeafCount() == 1)
    }

    @Test(arguments: StoreKind.allCases)
    func aLaterNullWriteKeepsWhatAnEarlierWriteBelowItDidAboveIt(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        try fixture.store.commit(Sample.treeBatch([("/a", .int(1)), ("/k", .int(1))]))
        // /a/b/c turns the scalar /a into an object; deleting /a/b then empties it, so /a vanishes.
        try fixture.store.commit(
            Sample.treeBatch([("/a/b/c", .int(2)), ("/a/b", .null), ("/k", .int(2)), ("/k", .int(3))]))
        #expect(try fixture.store.readTree() == Sample.json(#"{"k":3}"#))
    }

    @Test(arguments: StoreKind.allCases)
    func theRootCanBeReplacedAndCleared(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        try fixture.store.commit(Sample.treeBatch([("/x", .int(1)), ("/y/z", .int(2))]))
        try fixture.store.commit(Sample.treeBatch([("/", Sample.json(#"{"k":[10,20]}"#))]))
        #expect(try fixture.store.readTree() == Sample.json(#"{"k":{"0":10,"1":20}}"#))
        try fixture.store.commit(Sample.treeBatch([("/", .null)]))
        #expect(try fixture.store.readTree() == .null)
        #expect(try fixture.store.treeLeafCount() == 0)
    }

    @Test(arguments: StoreKind.allCases)
    func theTreeSurvivesAReopen(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        let state = Sample.json(#"{"users":{"alice":{"age":30,"tags":{"0":"x"}},"bob":{"score":-2.25}},"n":null}"#)
        try fixture.store.commit(Sample.treeBatch([("/", state)]))
        try fixture.reopen()
        #expect(try fixture.store.readTree() == state)
    }

    /// Random subtree writes, compared with `Value.write` (the data model's own rule).
    @Test(arguments: StoreKind.allCases)
    func randomSubtreeWritesMatchTheDataModel(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        var generator = SeededGenerator(seed: 20_240_601)
        var model = Value.null
        let keys = ["a", "a0", "a-b", "ab", "b", "a b"]
        for round in 0..<60 {
            var batch = StoreBatch()
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                let depth = Int.random(in: 0...3, using: &generator)
                let path = try Path(keys: (0..<depth).map { _ in keys.randomElement(using: &generator) ?? "a" })
                let value = randomValue(depth: 2, using: &generator)
                batch.treeWrites.append(.init(path: path, value: value))
                model.write(value, at: path)
            }
            try fixture.store.commit(batch)
            #expect(try fixture.store.readTree() == model, "round \(round)")
            for key in keys {
                let path = try Path(keys: [key])
                #expect(try fixture.store.readTree(at: path) == model.value(at: path), "round \(round) at \(path)")
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func writesThatReplaceAScalarTouchOneRowAndLandAsFullWritesWould(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        try fixture.store.commit(
            Sample.treeBatch([("/u/a/score", .int(1)), ("/u/b/score", .int(2)), ("/u/c", .string("c"))]))
        var batch = StoreBatch()
        batch.treeWrites = [
            .init(path: Sample.path("/u/a/score"), value: .int(10), replacesScalar: true),
            .init(path: Sample.path("/u/a/score"), value: .int(11), replacesScalar: true),
            .init(path: Sample.path("/u/b/score"), value: .null, replacesScalar: true),
            .init(path: Sample.path("/u/c"), value: .bool(true), replacesScalar: true),
            // A full write below a scalar that a fast write just replaced, then a fast write over it.
            .init(path: Sample.path("/u/c/x"), value: .int(5)),
            .init(path: Sample.path("/u/c/x"), value: .int(6), replacesScalar: true),
            // A full write covering earlier fast writes drops them, and still lands right.
            .init(path: Sample.path("/v/k"), value: .int(1)),
            .init(path: Sample.path("/v/k"), value: .int(2), replacesScalar: true),
            .init(path: Sample.path("/v"), value: Sample.json(#"{"k":3,"j":4}"#)),
        ]
        try fixture.store.commit(batch)
        let expected = Sample.json(#"{"u":{"a":{"score":11},"c":{"x":6}},"v":{"k":3,"j":4}}"#)
        #expect(try fixture.store.readTree() == expected)
        #expect(try fixture.store.treeLeafCount() == 4)
        try fixture.reopen()
        #expect(try fixture.store.readTree() == expected)
    }

    @Test(arguments: StoreKind.allCases, [1, 2, 3, 1000] as [Int])
    func aTreeReadInSlicesEqualsTheTreeReadWhole(kind: StoreKind, rowsMax: Int) throws {
        let fixture = try StoreFixture(kind)
        var empty = TreeSliceReader()
        try fixture.store.readTreeSlice(&empty, rowsMax: rowsMax)
        #expect(empty.isFinished && empty.tree == .null)

        try fixture.store.commit(
            Sample.treeBatch([
                ("/a", Sample.json(#"{"b":1,"c":{"d":"x","e":[1,2]}}"#)), ("/a0", .int(2)), ("/a-b", .int(3)),
                ("/a b", Sample.json(#"{"z":true}"#)), ("/z", .string("last")),
            ]))
        var reader = TreeSliceReader()
        var slices = 0
        while !reader.isFinished {
            // A subtree read between slices sees the whole tree and leaves the slice read intact.
            #expect(try fixture.store.readTree(at: Sample.path("/a/c/d")) == .string("x"))
            try fixture.store.readTreeSlice(&reader, rowsMax: rowsMax)
            slices += 1
        }
        #expect(reader.tree == (try fixture.store.readTree()))
        if kind == .sqlite {
            #expect(reader.rowsRead == 8)
            #expect(slices == 8 / rowsMax + 1)
        }

        // A scalar root is one row.
        try fixture.store.commit(Sample.treeBatch([("/", .int(7))]))
        var scalar = TreeSliceReader()
        while !scalar.isFinished { try fixture.store.readTreeSlice(&scalar, rowsMax: rowsMax) }
        #expect(scalar.tree == .int(7))
    }

    private func randomValue(depth: Int, using generator: inout SeededGenerator) -> Value {
        switch Int.random(in: 0..<(depth > 0 ? 6 : 5), using: &generator) {
        case 0: return .null
        case 1: return .int(Int64.random(in: -5...5, using: &generator))
        case 2: return .string(["", "x", "é"].randomElement(using: &generator) ?? "")
        case 3: return .double(0.5)
        case 4: return .bool(true)
        default:
            var children: [Key: Value] = [:]
            for key: Key in ["a", "a0", "b"] where Bool.random(using: &generator) {
                children[key] = randomValue(depth: depth - 1, using: &generator)
            }
            return Value.object(normalizing: children)
        }
    }
}
