import PropertyBased
import Testing

@testable import WeftCore

/// Ancestry between a path and one given in two parts (a merge's path, then a child's relative path)
/// agrees with the same question asked of the joined keys, wherever the parts split.
@Suite struct PathRelationTests {
    /// Keys from a small alphabet, so that paths often share prefixes; long ones hold their text on the
    /// heap, as push ids do.
    static func keys(count: Int, rng: inout SeededGenerator) -> [Key] {
        let names: [Key] = ["a", "b", "a-key-long-enough-for-the-heap", "-NvQ2x8Zr1s9LmK3PqRt"]
        return (0..<count).map { _ in names[Int(rng.below(UInt64(names.count)))] }
    }

    @Test func jointQuestionsMatchTheJoinedPath() async {
        await propertyCheck(count: 500, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            var rng = SeededGenerator(seed: UInt64(seed))
            let path = Path(uncheckedKeys: Self.keys(count: Int(rng.below(5)), rng: &rng))
            var other = Self.keys(count: Int(rng.below(6)), rng: &rng)
            if rng.chance(0.5) { other = Array((path.keys + other).prefix(Int(rng.below(8)))) }
            let split = Int(rng.below(UInt64(other.count + 1)))
            let head = Array(other[..<split])
            let tail = Array(other[split...])
            let common = min(path.depth, other.count)
            let ancestor = path.depth <= other.count && Array(other.prefix(path.depth)) == path.keys
            let related = Array(path.keys.prefix(common)) == Array(other.prefix(common))
            #expect(path.isAncestorOrSelf(ofJoined: head, tail) == ancestor, "seed \(seed)")
            #expect(path.isAncestorOrSelf(of: Path(uncheckedKeys: other)) == ancestor, "seed \(seed)")
            #expect(path.isRelated(toJoined: head, tail) == related, "seed \(seed)")
        }
    }
}

/// A re-fold's roots, asked which one holds a path (given whole or in two parts), answer as comparing
/// the path with every root does, for few roots (compared one by one) and for many (hashed).
@Suite struct RootSetTests {
    @Test func theRootHoldingAPathIsTheOneComparingFinds() async {
        await propertyCheck(count: 400, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            var rng = SeededGenerator(seed: UInt64(seed) ^ 0x2007)
            let wanted = rng.chance(0.3) ? Int(rng.below(UInt64(RootSet.linearMax + 1))) : Int(rng.below(300))
            var candidates: [Path] = []
            for _ in 0..<wanted {
                candidates.append(Path(uncheckedKeys: PathRelationTests.keys(count: Int(rng.below(6)), rng: &rng)))
            }
            // Roots never hold one another, as a re-fold's do; the root itself now and then.
            let roots = MergeEngine(registry: FunctionRegistry()).minimalRoots(candidates)
            let set = RootSet(roots)
            for _ in 0..<60 {
                let keys = PathRelationTests.keys(count: Int(rng.below(8)), rng: &rng)
                let split = Int(rng.below(UInt64(keys.count + 1)))
                let head = Array(keys[..<split])
                let tail = Array(keys[split...])
                let expected = roots.firstIndex { $0.isAncestorOrSelf(of: Path(uncheckedKeys: keys)) }
                #expect(set.position(holdingJoined: head, tail) == expected, "seed \(seed), \(keys)")
                #expect(set.position(holding: Path(uncheckedKeys: keys)) == expected, "seed \(seed)")
                #expect(set.holds(joined: head, tail) == (expected != nil), "seed \(seed)")
            }
        }
    }
}

/// The minimal roots of a list of paths are those no other path of the list holds, sorted, once each.
@Suite struct MinimalRootsTests {
    @Test func minimalRootsAreThePathsNoOtherHolds() async {
        let engine = MergeEngine(registry: FunctionRegistry())
        await propertyCheck(count: 400, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            var rng = SeededGenerator(seed: UInt64(seed) ^ 0x0117)
            var paths: [Path] = []
            for _ in 0..<rng.below(40) {
                paths.append(Path(uncheckedKeys: PathRelationTests.keys(count: Int(rng.below(5)), rng: &rng)))
            }
            let expected = Set(paths).filter { path in !paths.contains { $0 != path && $0.isAncestorOrSelf(of: path) } }
            let roots = engine.minimalRoots(paths)
            #expect(Set(roots) == expected, "seed \(seed)")
            #expect(roots.count == expected.count, "seed \(seed)")
        }
    }
}
