import Testing

@testable import WeftCore

/// The chunked list of ops anchored at an index node, against a sorted array doing the same.
@Suite struct AnchorListTests {
    let origin = ReplicaID(rawValue: 0xA)!

    func anchored(_ millis: UInt64) -> PathIndex.Anchored {
        PathIndex.Anchored(stamp: Stamp(millis: millis, counter: 0, replica: origin), sequence: millis)
    }

    func stamp(_ millis: UInt64) -> Stamp { Stamp(millis: millis, counter: 0, replica: origin) }

    /// Mostly appends with a share of late inserts, as ops arrive: a short list stays one array, a long
    /// one turns into chunks that fill, split and fill again.
    @Test(arguments: [(1, 2_000), (7, 2_000), (42, 2_000), (3, 60), (5, 128), (9, 129)])
    func everyQueryMatchesASortedArray(seed: UInt64, entries: Int) {
        var rng = SeededGenerator(seed: seed)
        var list = PathIndex.AnchorList()
        var reference: [PathIndex.Anchored] = []
        var used = Set<UInt64>()
        var next: UInt64 = 1_000
        for _ in 0..<entries {
            var millis: UInt64
            if rng.chance(0.3), next > 1_010 {
                millis = next - 1 - rng.below(next - 1_000)
                while used.contains(millis) { millis += 1 }
                if millis >= next { next = millis + 1 }
            } else {
                next += 1 + rng.below(3)
                millis = next
            }
            used.insert(millis)
            list.insert(anchored(millis))
            reference.append(anchored(millis))
        }
        reference.sort { $0.stamp < $1.stamp }
        #expect(list.all == reference)
        #expect(list.count == reference.count)
        #expect(list.last == reference.last)

        for probe: UInt64 in [0, 999, 1_000, 1_500, 2_222, next - 1, next, next + 10] {
            let probeStamp = stamp(probe)
            #expect(list.first(after: probeStamp) == reference.first { $0.stamp > probeStamp })
            var after: [PathIndex.Anchored] = []
            list.forEach(after: probeStamp) { after.append($0) }
            #expect(after == reference.filter { $0.stamp > probeStamp })
            var through: [PathIndex.Anchored] = []
            list.reverseForEach(through: probeStamp) {
                through.append($0)
                return true
            }
            #expect(through == reference.filter { $0.stamp <= probeStamp }.reversed())
        }
        var everything: [PathIndex.Anchored] = []
        list.forEach(after: nil) { everything.append($0) }
        #expect(everything == reference)

        var firstThree: [PathIndex.Anchored] = []
        list.reverseForEach(through: stamp(next)) {
            firstThree.append($0)
            return firstThree.count < 3
        }
        #expect(firstThree == Array(reference.reversed().prefix(3)))

        let frontier = reference[reference.count / 3].stamp
        list.removeThrough(frontier)
        reference.removeAll { $0.stamp <= frontier }
        #expect(list.all == reference)
        #expect(list.count == reference.count)
        #expect(list.allSatisfy { $0.stamp > frontier })
        list.removeThrough(stamp(next + 1))
        #expect(list.isEmpty)
        #expect(list.last == nil)
        #expect(list.first(after: stamp(0)) == nil)
    }
}
