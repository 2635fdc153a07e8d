import PropertyBased
import Testing

@testable import WeftCore

@Suite struct StampClockTests {
    let one = ReplicaID(rawValue: 1)!
    let two = ReplicaID(rawValue: 2)!
    let alphabet = Set(PushAlphabet.characters)

    func time(_ millis: UInt64, _ counter: UInt16) -> UInt64 { millis << 16 | UInt64(counter) }

    // MARK: - Stamps

    @Test func stampsOrderByMillisThenCounterThenReplica() {
        let ordered = [
            Stamp(millis: 1, counter: 0, replica: two),
            Stamp(millis: 1, counter: 1, replica: one),
            Stamp(millis: 1, counter: 1, replica: two),
            Stamp(millis: 1, counter: .max, replica: one),
            Stamp(millis: 2, counter: 0, replica: one),
            Stamp(millis: CoreLimits.stampMillisMax, counter: .max, replica: ReplicaID(rawValue: .max)!),
        ]
        for (earlier, later) in zip(ordered, ordered.dropFirst()) {
            #expect(earlier < later)
            #expect(!(later < earlier))
        }
        #expect(ordered.reversed().sorted() == ordered)
        let stamp = Stamp(millis: 7, counter: 3, replica: one)
        #expect(stamp.millis == 7)
        #expect(stamp.counter == 3)
        #expect(stamp == Stamp(time: time(7, 3), replica: one))
        #expect(!(stamp < stamp))
    }

    @Test func textIsTwentyTwoCharactersOfThePushAlphabet() {
        let stamp = Stamp(millis: 1_700_000_000_000, counter: 42, replica: ReplicaID(rawValue: 0xDEAD_BEEF)!)
        #expect(stamp.text.utf8.count == 22)
        #expect(stamp.text.utf8.allSatisfy(alphabet.contains))
        #expect(stamp.description == stamp.text)
    }

    @Test func textOfTheSmallestAndLargestStampsIsPinned() {
        #expect(Stamp(time: 0, replica: one).text == "-----------" + "----------0")
        #expect(Stamp(time: .max, replica: ReplicaID(rawValue: .max)!).text == "Ezzzzzzzzzz" + "Ezzzzzzzzzz")
        #expect(Stamp(millis: 1, counter: 0, replica: one).text == "--------F--" + "----------0")
    }

    @Test func byteOrderOfTextsIsStampOrder() async {
        await propertyCheck(count: 1000, input: seeds) { seed in
            var random = RandomCore(seed: seed)
            let a = random.stamp()
            let b = random.rng.chance(0.1) ? a : random.stamp()
            let aText = Array(a.text.utf8)
            let bText = Array(b.text.utf8)
            #expect(aText.lexicographicallyPrecedes(bText) == (a < b))
            #expect(bText.lexicographicallyPrecedes(aText) == (b < a))
            #expect((aText == bText) == (a == b))
        }
    }

    @Test func textRoundTrips() async throws {
        await propertyCheck(count: 500, input: seeds) { seed in
            var random = RandomCore(seed: seed)
            let stamp = random.stamp()
            let back = try Stamp(text: stamp.text)
            #expect(back == stamp)
        }
        let extreme = Stamp(time: .max, replica: ReplicaID(rawValue: .max)!)
        #expect(try Stamp(text: extreme.text) == extreme)
    }

    @Test(arguments: [
        "", "-----------", String(repeating: "-", count: 21) + "0" + "-", String(repeating: "-", count: 21),
        "----------!----------0", "-----------" + "-----------", "F----------" + "----------0",
        "-----------" + "z----------", String(repeating: "-", count: 20) + "é", "----------- ---------0",
    ])
    func malformedTextThrowsInvalidStamp(text: String) {
        #expect(coreError { try Stamp(text: text) } == .invalidStamp(text: text))
    }

    // MARK: - Hybrid clock

    @Test func stampsFollowTheWallClockWhenItMovesForward() throws {
        var clock = HybridClock(replica: one)
        let a = try clock.next(wallMillis: 1000)
        let b = try clock.next(wallMillis: 1005)
        #expect(a == Stamp(millis: 1000, counter: 0, replica: one))
        #expect(b == Stamp(millis: 1005, counter: 0, replica: one))
        #expect(clock.last == b)
    }

    @Test func theCounterCountsStampsWithinOneMillisecond() throws {
        var clock = HybridClock(replica: one)
        let stamps = try (0..<5).map { _ in try clock.next(wallMillis: 1000) }
        #expect(stamps.map(\.millis) == Array(repeating: 1000, count: 5))
        #expect(stamps.map(\.counter) == [0, 1, 2, 3, 4])
    }

    @Test func stampsStayMonotonicWhenTheWallClockGoesBack() throws {
        var clock = HybridClock(replica: one)
        let a = try clock.next(wallMillis: 5000)
        let b = try clock.next(wallMillis: 1000)
        let c = try clock.next(wallMillis: 0)
        #expect(a < b)
        #expect(b < c)
        #expect(b == Stamp(millis: 5000, counter: 1, replica: one))
        #expect(c == Stamp(millis: 5000, counter: 2, replica: one))
        let d = try clock.next(wallMillis: 5001)
        #expect(d == Stamp(millis: 5001, counter: 0, replica: one))
    }

    @Test func aClockResumedFromItsLastTimeStaysMonotonicAfterARestart() throws {
        var before = HybridClock(replica: one)
        let last = try before.next(wallMillis: 9000)
        var after = HybridClock(replica: one, lastTime: before.lastTime)
        #expect(try after.next(wallMillis: 10) > last)
    }

    @Test func counterOverflowBorrowsTheNextMillisecond() throws {
        var clock = HybridClock(replica: one, lastTime: time(1000, .max))
        let next = try clock.next(wallMillis: 1000)
        #expect(next == Stamp(millis: 1001, counter: 0, replica: one))
        let after = try clock.next(wallMillis: 1000)
        #expect(after == Stamp(millis: 1001, counter: 1, replica: one))
    }

    @Test func reserveGivesConsecutiveCountersInOneMillisecond() throws {
        var clock = HybridClock(replica: one)
        _ = try clock.next(wallMillis: 1000)
        let first = try clock.reserve(count: 5, wallMillis: 1000)
        #expect(first == Stamp(millis: 1000, counter: 1, replica: one))
        #expect(clock.lastTime == time(1000, 5))
        #expect(try clock.next(wallMillis: 1000) == Stamp(millis: 1000, counter: 6, replica: one))
    }

    @Test func aReservationThatWouldOverflowTheCounterMovesToTheNextMillisecond() throws {
        var clock = HybridClock(replica: one, lastTime: time(1000, 0xFFF0))
        let first = try clock.reserve(count: 32, wallMillis: 1000)
        #expect(first == Stamp(millis: 1001, counter: 0, replica: one))
        #expect(clock.lastTime == time(1001, 31))
        // A reservation that exactly fits stays in its millisecond.
        var fitting = HybridClock(replica: one, lastTime: time(1000, 0xFFF0))
        #expect(try fitting.reserve(count: 15, wallMillis: 1000) == Stamp(millis: 1000, counter: 0xFFF1, replica: one))
        #expect(fitting.lastTime == time(1000, .max))
    }

    @Test func aReceivedStampMakesLaterStampsGreater() throws {
        var clock = HybridClock(replica: two)
        _ = try clock.next(wallMillis: 1000)
        let remote = Stamp(millis: 1500, counter: 7, replica: ReplicaID(rawValue: .max)!)
        try clock.receive(remote, wallMillis: 1000)
        let next = try clock.next(wallMillis: 1000)
        #expect(next > remote)
        #expect(next == Stamp(millis: 1500, counter: 8, replica: two))
    }

    @Test func aReceivedStampWithTheSameTimeAndAGreaterReplicaIsStillExceeded() throws {
        var clock = HybridClock(replica: one)
        let remote = Stamp(millis: 1000, counter: 0, replica: ReplicaID(rawValue: .max)!)
        try clock.receive(remote, wallMillis: 1000)
        #expect(try clock.next(wallMillis: 1000) > remote)
    }

    @Test func anOlderReceivedStampChangesNothing() throws {
        var clock = HybridClock(replica: one)
        _ = try clock.next(wallMillis: 2000)
        let before = clock
        try clock.receive(Stamp(millis: 1000, counter: 5, replica: two), wallMillis: 2000)
        #expect(clock == before)
    }

    @Test func aStampBeyondTheMaximumDriftIsRefusedAndNotAdopted() throws {
        var clock = HybridClock(replica: one, driftMillisMax: 60_000)
        _ = try clock.next(wallMillis: 1_000_000)
        let before = clock
        let far = Stamp(millis: 1_060_001, counter: 0, replica: two)
        #expect(
            coreError { try clock.receive(far, wallMillis: 1_000_000) }
                == .clockDrift(aheadMillis: 60_001, maxMillis: 60_000))
        #expect(clock == before)
        let farther = Stamp(millis: 1_500_000, counter: 0, replica: two)
        #expect(
            coreError { try clock.check(farther, wallMillis: 1_000_000) }
                == .clockDrift(aheadMillis: 500_000, maxMillis: 60_000))
        #expect(try clock.next(wallMillis: 1_000_000) < far)
    }

    @Test func aStampExactlyAtTheMaximumDriftIsAccepted() throws {
        var clock = HybridClock(replica: one, driftMillisMax: 60_000)
        let edge = Stamp(millis: 1_060_000, counter: 3, replica: two)
        try clock.check(edge, wallMillis: 1_000_000)
        #expect(clock.lastTime == 0)
        try clock.receive(edge, wallMillis: 1_000_000)
        #expect(clock.lastTime == edge.time)
        #expect(HybridClock(replica: one).driftMillisMax == CoreLimits.driftMillisMaxDefault)
    }

    @Test func theClockIsExhaustedAtTheEndOfFortyEightBits() throws {
        let millisMax = CoreLimits.stampMillisMax
        var clock = HybridClock(replica: one, lastTime: time(millisMax, .max - 1))
        #expect(try clock.next(wallMillis: millisMax) == Stamp(millis: millisMax, counter: .max, replica: one))
        let before = clock
        #expect(coreError { try clock.next(wallMillis: millisMax) } == .clockExhausted)
        #expect(coreError { try clock.next(wallMillis: .max) } == .clockExhausted)
        #expect(clock == before)
        var reserving = HybridClock(replica: one, lastTime: time(millisMax, .max - 1))
        #expect(coreError { try reserving.reserve(count: 2, wallMillis: millisMax) } == .clockExhausted)
        #expect(reserving.lastTime == time(millisMax, .max - 1))
    }

    @Test func aWallClockBeyondFortyEightBitsIsClampedToTheLastMillisecond() throws {
        var clock = HybridClock(replica: one)
        #expect(try clock.next(wallMillis: .max) == Stamp(millis: CoreLimits.stampMillisMax, counter: 0, replica: one))
    }

    @Test func everyStampExceedsEverythingMadeOrReceivedBefore() async {
        await propertyCheck(count: 300, input: seeds) { seed in
            var rng = SeededGenerator(seed: seed)
            var clock = HybridClock(replica: ReplicaID.random(using: &rng), driftMillisMax: 50)
            var wall: UInt64 = 1_000
            var greatest: Stamp?
            for _ in 0..<50 {
                // The wall clock jitters back and forth.
                wall = UInt64(max(0, Int(wall) + rng.int(in: -20...30)))
                if rng.chance(0.3) {
                    let remote = Stamp(
                        millis: wall + rng.below(60), counter: UInt16(rng.below(3)),
                        replica: ReplicaID.random(using: &rng))
                    do {
                        try clock.receive(remote, wallMillis: wall)
                        greatest = max(greatest ?? remote, remote)
                    } catch let error as CoreError {
                        #expect(remote.millis - wall > 50)
                        #expect(error == .clockDrift(aheadMillis: remote.millis - wall, maxMillis: 50))
                    }
                } else {
                    let stamp = try clock.next(wallMillis: wall)
                    if let greatest { #expect(stamp > greatest) }
                    #expect(stamp.millis >= wall)
                    greatest = stamp
                }
            }
        }
    }
}
