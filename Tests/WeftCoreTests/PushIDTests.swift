import PropertyBased
import Testing

@testable import WeftCore

@Suite struct PushIDTests {
    let alphabet = Set(PushAlphabet.characters)

    @Test func aPushIDIsTwentyCharactersOfThePushAlphabet() async {
        await propertyCheck(count: 500, input: seeds) { seed in
            var random = RandomCore(seed: seed)
            let key = PushID.make(from: random.stamp())
            #expect(key.utf8.count == PushID.length)
            #expect(key.utf8.allSatisfy(alphabet.contains))
            #expect(Key.isValid(key))
        }
    }

    @Test func theLayoutIsMillisThenCounterThenReplicaBitsAndIsPinned() {
        let stamp = Stamp(millis: 1_700_000_000_000, counter: 42, replica: ReplicaID(rawValue: 0xDEAD_BEEF_CAFE_BABE)!)
        #expect(PushID.make(from: stamp) == "-NjEtLV---ereqyvwfyi")
        #expect(PushID.make(from: Stamp(time: 0, replica: ReplicaID(rawValue: 1 << 10)!)) == "-------------------0")
    }

    @Test func pushIDsSortChronologicallyAcrossReplicas() async {
        await propertyCheck(count: 500, input: seeds) { seed in
            var random = RandomCore(seed: seed)
            let earlier = random.rng.below(CoreLimits.stampMillisMax)
            let later = earlier + 1 + random.rng.below(CoreLimits.stampMillisMax - earlier)
            let a = Stamp(
                millis: earlier, counter: UInt16(truncatingIfNeeded: random.rng.next()), replica: random.replica())
            let b = Stamp(
                millis: later, counter: UInt16(truncatingIfNeeded: random.rng.next()), replica: random.replica())
            #expect(PushID.make(from: a).utf8.lexicographicallyPrecedes(PushID.make(from: b).utf8))
        }
    }

    @Test func withinOneMillisecondPushIDsSortByCounter() throws {
        let replicas = [ReplicaID(rawValue: .max)!, ReplicaID(rawValue: 1 << 10)!]
        var previous: String?
        for counter: UInt16 in [0, 1, 2, 63, 64, 4095, 4096, .max - 1, .max] {
            // Alternate replicas so that a larger replica never hides the counter order.
            let key = PushID.make(from: Stamp(millis: 77, counter: counter, replica: replicas[Int(counter) % 2]))
            if let previous { #expect(previous < key) }
            previous = key
        }
        var clock = HybridClock(replica: replicas[0])
        let keys = try (0..<100).map { _ in PushID.make(from: try clock.next(wallMillis: 5)) }
        #expect(keys.sorted() == keys)
        #expect(Set(keys).count == keys.count)
    }

    @Test func manyReplicasPushingInTheSameMillisecondNeverCollide() async {
        await propertyCheck(count: 200, input: seeds) { seed in
            var random = RandomCore(seed: seed)
            let millis = random.rng.below(CoreLimits.stampMillisMax)
            let counter = UInt16(random.rng.below(3))
            let replicas = Set((0..<64).map { _ in random.replica() })
            let keys = Set(replicas.map { PushID.make(from: Stamp(millis: millis, counter: counter, replica: $0)) })
            #expect(keys.count == replicas.count)
        }
    }

    @Test func replicasThatDifferOnlyInTheirLowTenBitsShareAPushID() {
        // Documented limit of the layout: only the top 54 bits of the replica id are kept.
        let a = Stamp(millis: 9, counter: 0, replica: ReplicaID(rawValue: 0x1_0000)!)
        let b = Stamp(millis: 9, counter: 0, replica: ReplicaID(rawValue: 0x1_03FF)!)
        #expect(PushID.make(from: a) == PushID.make(from: b))
    }

    @Test func millisReadsBackTheMillisecondsOfAPushID() async {
        await propertyCheck(count: 500, input: seeds) { seed in
            var random = RandomCore(seed: seed)
            let stamp = random.stamp()
            #expect(PushID.millis(of: PushID.make(from: stamp)) == stamp.millis)
        }
        // A push id made by Firebase itself (random tail).
        #expect(PushID.millis(of: "-KpJ0sMzKvVqkKxp3wIT") == 1_500_353_365_503)
    }

    @Test(arguments: [
        "", "-KpJ0sMzKvVqkKxp3wI", "-KpJ0sMzKvVqkKxp3wITx", "-KpJ0sMzKvVqkKxp3wI!", "!KpJ0sMzKvVqkKxp3wIT",
        "-KpJ0sMzKvVqkKxp3w.T", "-KpJ0sMzKvVqkKxp3wé",
    ])
    func millisIsNilForAnythingThatIsNotAPushID(key: String) {
        #expect(PushID.millis(of: key) == nil)
    }
}
