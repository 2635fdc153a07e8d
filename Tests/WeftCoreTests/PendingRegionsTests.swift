import Testing
import WeftTestSupport

@testable import WeftCore

/// The filter of pending re-fold regions may answer "maybe" too often, never "no" for a path that is
/// related to a root; the answers built on it equal comparing every root.
@Suite struct PendingRegionsTests {
    static let replica = ReplicaID(rawValue: 7)!

    static func op(_ time: UInt64, at path: Path) -> Op {
        .make(
            .set(.int(1)), at: path, origin: replica, millis: time >> 16, sequence: time,
            counter: UInt16(truncatingIfNeeded: time))
    }

    /// A path of up to three keys from a tiny alphabet, so that roots and paths often meet.
    static func randomPath(_ rng: inout SeededGenerator, depthMax: UInt64 = 4) -> Path {
        let depth = Int(rng.below(depthMax))
        return Path(uncheckedKeys: (0..<depth).map { _ in Key(unchecked: "k\(rng.below(3))") })
    }

    /// Adds a region as the engine does: to the region holding its root, or as a new region.
    static func add(_ root: Path, time: UInt64, to pending: inout MergeEngine.PendingRegions) {
        let op = op(time, at: root)
        if let position = pending.holder(of: root) {
            pending.add(op, to: position)
        } else {
            pending.append(MergeEngine.PendingRefold(root: root, stamp: op.stamp, arriving: [op], group: op.stamp))
        }
    }

    @Test func theFilterNeverHidesARelatedRoot() {
        var rng = SeededGenerator(seed: 13)
        for _ in 0..<600 {
            var pending = MergeEngine.PendingRegions()
            for time in 1...(1 + rng.below(12)) { Self.add(Self.randomPath(&rng), time: time, to: &pending) }
            let roots = pending.regions.map(\.root)
            // Regions stay disjoint.
            for (first, a) in roots.enumerated() {
                for b in roots[(first + 1)...] { #expect(!a.isRelated(to: b)) }
            }
            for _ in 0..<40 {
                let path = Self.randomPath(&rng, depthMax: 5)
                let related = roots.contains { $0.isRelated(to: path) }
                if related { #expect(pending.mayBeRelated(path.keys, [])) }
                #expect(pending.isRelated(to: path) == related)
                #expect(pending.holder(of: path) == roots.firstIndex { $0.isAncestorOrSelf(of: path) })
                // A path given in two parts (a merge child's anchor) answers as the joined path.
                let split = Int(rng.below(UInt64(path.depth + 1)))
                let head = Array(path.keys[..<split])
                let tail = Array(path.keys[split...])
                #expect(pending.mayBeRelated(head, tail) == pending.mayBeRelated(path.keys, []))
            }
            let taken = pending.removeAll()
            #expect(taken.map(\.root) == roots)
            #expect(pending.isEmpty)
            #expect(!pending.mayBeRelated([], []))
        }
    }

    @Test func aWiderRootTakesInTheRegionsBelowIt() throws {
        let (a, ab, acd, e) = (try Path("/a"), try Path("/a/b"), try Path("/a/c/d"), try Path("/e"))
        var pending = MergeEngine.PendingRegions()
        Self.add(ab, time: 1, to: &pending)
        Self.add(acd, time: 2, to: &pending)
        Self.add(e, time: 3, to: &pending)
        #expect(pending.count == 3)
        Self.add(a, time: 4, to: &pending)
        #expect(pending.regions.map(\.root) == [e, a])
        let merged = pending.regions[1]
        #expect(merged.arriving.map(\.sequence).sorted() == [1, 2, 4])
        #expect(merged.stamp == Stamp(time: 1, replica: Self.replica))
        // The old roots' bits stay set: they may say "maybe", and the roots then answer.
        let below = try Path("/a/b/x")
        let elsewhere = try Path("/f")
        let between = try Path("/a/c")
        #expect(pending.isRelated(to: below))
        #expect(!pending.isRelated(to: elsewhere))
        #expect(pending.holder(of: between) == 1)
    }
}
