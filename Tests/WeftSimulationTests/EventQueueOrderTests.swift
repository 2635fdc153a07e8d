import Testing
import WeftCore
@testable import WeftSimulation

@Suite struct EventQueueOrderTests {
    static func index(_ event: Event?) -> Int? {
        if case .write(let index) = event { return index }
        return nil
    }

    @Test func eventsComeOutByTickThenInTheOrderTheyWereScheduled() {
        var queue = EventQueue()
        var generator = SeededGeneratorBox(seed: 11)
        var expected: [(UInt64, Int)] = []
        for index in 0..<500 {
            let tick = generator.below(40)
            queue.schedule(.write(index: index), at: tick)
            expected.append((tick, index))
        }
        expected.sort { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
        var seen: [(UInt64, Int)] = []
        while let (tick, event) = queue.next() { seen.append((tick, Self.index(event)!)) }
        #expect(seen.map(\.0) == expected.map(\.0))
        #expect(seen.map(\.1) == expected.map(\.1))
        #expect(queue.isEmpty)
    }

    @Test func anEventScheduledNowRunsAfterTheOthersOfTheSameTick() {
        var queue = EventQueue()
        queue.schedule(.write(index: 1), at: 5)
        queue.schedule(.write(index: 2), at: 5)
        let first = queue.next()
        queue.schedule(.write(index: 3), at: 5)
        #expect(Self.index(first?.event) == 1)
        #expect(Self.index(queue.next()?.event) == 2)
        #expect(Self.index(queue.next()?.event) == 3)
        #expect(queue.next() == nil)
    }
}

/// A seeded generator for tests.
struct SeededGeneratorBox {
    var generator: SeededGenerator

    init(seed: UInt64) { generator = SeededGenerator(seed: seed) }

    mutating func below(_ bound: UInt64) -> UInt64 { generator.below(bound) }
}
