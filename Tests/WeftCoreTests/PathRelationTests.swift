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
