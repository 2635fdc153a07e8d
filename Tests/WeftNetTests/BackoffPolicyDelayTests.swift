import Testing
import WeftCore

@testable import WeftNet

/// Draws `count` delays from a policy with a seeded generator.
private func delays(_ policy: inout BackoffPolicy, seed: UInt64, count: Int) -> [Int] {
    var random = SeededGenerator(seed: seed)
    return (0..<count).map { _ in policy.nextDelay(using: &random) }
}

@Suite(.timeLimit(.minutes(5))) struct BackoffPolicyDelayTests {
    @Test func delaysStartAtTheMinimumBandAndNeverShrinkUntilTheCap() {
        let min = NetLimits.reconnectDelayMillisecondsMin
        let max = NetLimits.reconnectDelayMillisecondsMax
        // Bands double from [min, 2 min] until their top reaches max.
        var uncappedAttempts = 0
        while min << (uncappedAttempts + 1) < max { uncappedAttempts += 1 }
        for seed in 0..<20 {
            var policy = BackoffPolicy()
            let drawn = delays(&policy, seed: UInt64(seed), count: uncappedAttempts)
            #expect((min...2 * min).contains(drawn[0]))
            #expect((2 * min...4 * min).contains(drawn[1]))
            #expect(zip(drawn, drawn.dropFirst()).allSatisfy { $0 <= $1 }, "seed \(seed): \(drawn)")
        }
    }

    @Test func delaysDoubleTheirBandEachAttempt() throws {
        var policy = try BackoffPolicy(delayMillisecondsMin: 100, delayMillisecondsMax: 100_000)
        var random = SeededGenerator(seed: 3)
        for attempt in 0..<8 {
            let ceiling = 100 << (attempt + 1)
            let delay = policy.nextDelay(using: &random)
            #expect((ceiling / 2...ceiling).contains(delay), "attempt \(attempt): \(delay)")
        }
    }

    @Test func delaysAreCappedAtTheMaximumAndStayJitteredThere() {
        var policy = BackoffPolicy()
        let drawn = delays(&policy, seed: 5, count: 200)
        let max = NetLimits.reconnectDelayMillisecondsMax
        #expect(drawn.allSatisfy { $0 <= max })
        let capped = drawn.suffix(100)
        #expect(capped.allSatisfy { (max / 2...max).contains($0) })
        #expect(Set(capped).count > 50)
        #expect(policy.attempt < 20)
    }

    @Test func theSameSeedGivesTheSameDelaysAndOtherSeedsJitterThem() {
        var first = BackoffPolicy()
        var second = BackoffPolicy()
        #expect(delays(&first, seed: 42, count: 12) == delays(&second, seed: 42, count: 12))
        let firstDelays = (0..<10).map { seed -> Int in
            var policy = BackoffPolicy()
            return delays(&policy, seed: UInt64(seed), count: 1)[0]
        }
        #expect(Set(firstDelays).count > 5)
    }

    @Test func resetStartsOverFromTheFirstBand() {
        var policy = BackoffPolicy()
        _ = delays(&policy, seed: 1, count: 10)
        #expect(policy.attempt > 0)
        policy.reset()
        #expect(policy.attempt == 0)
        let min = NetLimits.reconnectDelayMillisecondsMin
        let next = delays(&policy, seed: 2, count: 1)[0]
        #expect((min...2 * min).contains(next))
    }

    @Test func equalBoundsGiveAConstantDelay() throws {
        var policy = try BackoffPolicy(delayMillisecondsMin: 250, delayMillisecondsMax: 250)
        #expect(delays(&policy, seed: 9, count: 10) == Array(repeating: 250, count: 10))
    }

    @Test func hugeBoundsNeitherOverflowNorEscapeTheirRange() throws {
        var policy = try BackoffPolicy(delayMillisecondsMin: 1, delayMillisecondsMax: Int.max / 2)
        let drawn = delays(&policy, seed: 8, count: 200)
        #expect(drawn.allSatisfy { (1...Int.max / 2).contains($0) })
        #expect(drawn.suffix(50).allSatisfy { $0 >= Int.max / 4 })
    }

    @Test func boundsThatMakeNoSenseAreRefused() {
        #expect(throws: NetError.self) { try BackoffPolicy(delayMillisecondsMin: 0, delayMillisecondsMax: 10) }
        #expect(throws: NetError.self) { try BackoffPolicy(delayMillisecondsMin: 20, delayMillisecondsMax: 10) }
        do throws(NetError) {
            _ = try BackoffPolicy(delayMillisecondsMin: -5, delayMillisecondsMax: 10)
        } catch {
            #expect(error.code == .invalidArgument)
        }
    }
}
