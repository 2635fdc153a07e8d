import Testing

@testable import WeftCore

/// The transaction rule against the touches a reopened engine starts from, read from their sorted list
/// where they lie, answers as the trie that records them all does.
@Suite struct CompactedTouchCoverTests {
    @Test func theSortedListAnswersAsTheTrie() {
        var rng = SeededGenerator(seed: 2_411)
        let keys: [Key] = ["a", "b", "ab", "a-b", "c"]
        let origins = (1...3 as ClosedRange<UInt64>).compactMap { ReplicaID(rawValue: $0) }
        func randomPath() -> Path {
            Path(uncheckedKeys: (0..<Int(rng.below(4))).map { _ in keys[Int(rng.below(UInt64(keys.count)))] })
        }
        var answered = 0
        for _ in 0..<300 {
            var slots: [CompactedTouchSlot: UInt64] = [:]
            for _ in 0..<Int(1 + rng.below(40)) {
                let slot = CompactedTouchSlot(path: randomPath(), origin: origins[Int(rng.below(3))])
                slots[slot] = max(slots[slot] ?? 0, 1 + rng.below(9))
            }
            let touches = slots.map { CompactedTouch(path: $0.key.path, origin: $0.key.origin, sequence: $0.value) }
                .sortedForStore()
            let trie = PathIndex()
            trie.insertTouches(touches)
            for _ in 0..<20 {
                let path = randomPath()
                var entries: [ReplicaID: UInt64] = [:]
                for origin in origins where rng.chance(0.8) { entries[origin] = rng.below(10) }
                let read = VersionVector(entries)
                let expected = trie.isCovered(path: path, by: read)
                #expect(touches.cover(path, by: read, scanMax: .max) == expected, "\(path) \(touches)")
                if let bounded = touches.cover(path, by: read, scanMax: 3) {
                    #expect(bounded == expected)
                    answered += 1
                }
            }
        }
        #expect(answered > 1_000, "the bounded scan answers most questions")
    }

    /// An engine opened with touches decides a transaction from the list, and records the trie only
    /// when the touches below the transaction's node are too many to read one by one.
    @Test func anEngineRecordsTheTouchesOnlyForAWideSubtree() throws {
        let writer = try #require(ReplicaID(rawValue: 7))
        let other = try #require(ReplicaID(rawValue: 8))
        let count = CoreLimits.compactedTouchScanMax + 10
        let touches = (0..<count).map {
            CompactedTouch(path: Path(uncheckedKeys: ["users", Key(unchecked: "u\($0)")]), origin: writer, sequence: 1)
        }.sortedForStore()
        let frontier = Stamp(millis: 1_000, counter: 0, replica: writer)
        let engine = MergeEngine(
            base: .null, frontier: frontier, baseVector: VersionVector([writer: 1]), compactedTouches: touches)
        func transaction(_ path: Path, sequence: UInt64, seen: UInt64) -> Op {
            Op(
                stamp: Stamp(millis: 2_000 + sequence, counter: 0, replica: other), sequence: sequence, path: path,
                kind: .transaction(read: VersionVector([writer: seen, other: sequence - 1]), result: .int(1)))
        }
        let narrow = Path(uncheckedKeys: ["users", "u5"])
        engine.apply([transaction(narrow, sequence: 1, seen: 0)])
        #expect(engine.outcome(of: Stamp(millis: 2_001, counter: 0, replica: other)) == .rejected(.staleRead(narrow)))
        engine.apply([transaction(narrow, sequence: 2, seen: 1)])
        #expect(engine.outcome(of: Stamp(millis: 2_002, counter: 0, replica: other)) == .applied)
        #expect(engine.unrecordedTouches.count == count, "a narrow transaction reads the list")
        let wide = Path(uncheckedKeys: ["users"])
        engine.apply([transaction(wide, sequence: 3, seen: 1)])
        #expect(engine.outcome(of: Stamp(millis: 2_003, counter: 0, replica: other)) == .applied)
        #expect(engine.unrecordedTouches.isEmpty, "a wide one has the touches recorded")
        #expect(engine.allCompactedTouches().sortedForStore() == touches)
    }
}
