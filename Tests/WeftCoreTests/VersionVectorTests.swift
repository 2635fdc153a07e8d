import PropertyBased
import Testing

@testable import WeftCore

@Suite struct VersionVectorTests {
    let a = ReplicaID(rawValue: 0xA)!
    let b = ReplicaID(rawValue: 0xB)!
    let c = ReplicaID(rawValue: 0xC)!

    func randomVector(_ random: inout RandomCore) -> VersionVector {
        var entries: [ReplicaID: UInt64] = [:]
        for origin in [a, b, c] where random.rng.chance(0.7) { entries[origin] = random.rng.below(5) }
        return VersionVector(entries)
    }

    @Test func anEmptyVectorHasSeenNothing() {
        let empty = VersionVector()
        #expect(empty[a] == 0)
        #expect(!empty.contains(origin: a, sequence: 1))
        #expect(empty.total == 0)
        #expect(empty.entries.isEmpty)
        #expect(empty.description == "[]")
    }

    @Test func advanceRaisesButNeverLowers() {
        var vector = VersionVector()
        vector.advance(origin: a, to: 3)
        #expect(vector[a] == 3)
        #expect(vector.contains(origin: a, sequence: 2))
        #expect(vector.contains(origin: a, sequence: 3))
        #expect(!vector.contains(origin: a, sequence: 4))
        vector.advance(origin: a, to: 1)
        #expect(vector[a] == 3)
        vector.advance(origin: a, to: 0)
        #expect(vector[a] == 3)
        vector.advance(origin: b, to: 0)
        #expect(vector.entries[b] == nil)
    }

    @Test func zeroEntriesAreDroppedSoTheyDoNotChangeEquality() {
        #expect(VersionVector([a: 0]) == VersionVector())
        #expect(VersionVector([a: 2, b: 0]) == VersionVector([a: 2]))
        #expect(VersionVector([a: 0]).entries.isEmpty)
    }

    @Test func mergedIsThePointwiseMaximum() {
        let left = VersionVector([a: 3, b: 1])
        let right = VersionVector([b: 5, c: 2])
        #expect(left.merged(with: right) == VersionVector([a: 3, b: 5, c: 2]))
    }

    @Test func minimumIsWhatEveryVectorCovers() {
        let vectors = [VersionVector([a: 3, b: 4]), VersionVector([a: 5, b: 2, c: 9]), VersionVector([a: 4, b: 7])]
        #expect(VersionVector.minimum(vectors) == VersionVector([a: 3, b: 2]))
        #expect(VersionVector.minimum([]) == VersionVector())
        #expect(VersionVector.minimum([VersionVector([a: 1]), VersionVector([b: 1])]) == VersionVector())
    }

    @Test func coversComparesEveryEntry() {
        let big = VersionVector([a: 3, b: 4])
        #expect(big.covers(VersionVector([a: 3])))
        #expect(big.covers(VersionVector()))
        #expect(big.covers(big))
        #expect(!big.covers(VersionVector([a: 4])))
        #expect(!big.covers(VersionVector([c: 1])))
    }

    @Test func totalCountsTheOpsCovered() {
        #expect(VersionVector([a: 3, b: 4, c: 1]).total == 8)
    }

    @Test func descriptionListsOriginsInOrder() {
        #expect(VersionVector([c: 1, a: 2]).description == "[000000000000000a:2,000000000000000c:1]")
    }

    @Test func mergeIsCommutativeAssociativeAndIdempotentAndMinimumIsBelowBoth() async {
        await propertyCheck(count: 500, input: seeds) { seed in
            var random = RandomCore(seed: seed)
            let x = randomVector(&random)
            let y = randomVector(&random)
            let z = randomVector(&random)
            #expect(x.merged(with: y) == y.merged(with: x))
            #expect(x.merged(with: y).merged(with: z) == x.merged(with: y.merged(with: z)))
            #expect(x.merged(with: x) == x)
            #expect(x.merged(with: y).covers(x))
            #expect(x.merged(with: y).covers(y))
            let low = VersionVector.minimum([x, y])
            #expect(x.covers(low))
            #expect(y.covers(low))
            #expect(low == VersionVector.minimum([y, x]))
            #expect(x.covers(y) == (x.merged(with: y) == x))
        }
    }

    @Test func vectorsRoundTripThroughTheCodecInOriginOrder() throws {
        let vector = VersionVector([c: 1, a: .max, b: 300])
        var writer = ByteWriter()
        OpCodec.write(vector, to: &writer)
        var reader = ByteReader(writer.bytes)
        #expect(try OpCodec.readVersionVector(from: &reader) == vector)
        #expect(reader.isAtEnd)
        // Origins are written sorted, so equal vectors always give equal bytes.
        #expect(Array(writer.bytes[1..<9]) == [0, 0, 0, 0, 0, 0, 0, 0xA])
    }
}
