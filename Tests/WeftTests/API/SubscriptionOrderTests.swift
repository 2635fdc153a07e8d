import Foundation
import Testing

@_spi(Engine) @testable import Weft
@testable import WeftCore

/// Callbacks of several subscriptions on one queue run in the order of the changes. An app that keeps
/// a list with one subscription each for additions, changes and removals (the canonical Firebase list)
/// must end with the node's children. Each subscription drained everything waiting in its own feed,
/// so a removal from one change could run after an addition from a later one, and the list lost a child
/// (before the change, 6 expectations of the 12 seeds below failed in each of two runs).
@Suite(.timeLimit(.minutes(5))) struct SubscriptionOrderTests {
    /// What the callbacks of one node rebuilt: its value, and its children from child events.
    final class Mirror: @unchecked Sendable {
        private let lock = NSLock()
        private var storedValue: Value = .null
        private var storedChildren: [String: Value] = [:]

        var value: Value { lock.withLock { storedValue } }
        var children: [String: Value] { lock.withLock { storedChildren } }

        func take(_ event: DataEvent) {
            lock.withLock {
                switch event.type {
                case .valueChange: storedValue = event.value
                case .childRemoval: storedChildren[event.node.key ?? ""] = nil
                case .childAddition, .childChange: storedChildren[event.node.key ?? ""] = event.value
                }
            }
        }

        func matches(_ value: Value) -> Bool {
            var expected: [String: Value] = [:]
            if case .object(let members) = value { for (key, child) in members { expected[key.text] = child } }
            return self.value == value && children == expected
        }
    }

    static let paths = ["/", "/items", "/items/i1", "/counters", "/accounts", "/chat"]

    @Test(arguments: Array(1...12) as [UInt64])
    func childEventsOfThreeSubscriptionsRebuildTheChildrenWhateverArrivesLate(seed: UInt64) async throws {
        let fixture = try ReplicaFixture(.memory, seed: seed + 4000)
        let replica = fixture.replica
        var mirrors: [(Path, Mirror)] = []
        var tokens: [ObservationToken] = []
        for text in Self.paths {
            let node = try #require(replica.node(for: text))
            let mirror = Mirror()
            for type in [DataEventType.valueChange, .childAddition, .childChange, .childRemoval] {
                tokens.append(node.subscribe(to: type) { mirror.take($0) })
            }
            mirrors.append((node.location, mirror))
        }
        var generator = SeededGenerator(seed: seed)
        var traffic = ReplicaTraffic(
            localSeed: seed &+ 1, remoteSeed: seed &+ 2, remoteWriters: 3, items: 8, counters: 3,
            startMillis: fixture.clock.now)
        // Each writer's ops are held back a while, then delivered: many arrive late and are re-folded.
        var held: [[Op]] = [[], [], []]
        func deliver(_ writer: Int, count: Int) throws {
            let ops = Array(held[writer].prefix(count))
            held[writer].removeFirst(ops.count)
            traffic.keepAhead(fixture.clock)
            if !ops.isEmpty { try replica.applyRemote(ops) }
        }
        for _ in 0..<300 {
            let writer = Int(generator.below(3))
            switch generator.below(10) {
            case 0..<4: try traffic.write(to: replica)
            case 4..<7: held[writer] += traffic.remoteOps(from: writer, count: Int(generator.below(6)) + 1)
            default: try deliver(writer, count: Int(generator.below(UInt64(held[writer].count + 1))))
            }
        }
        for writer in 0..<3 { try deliver(writer, count: held[writer].count) }
        #expect(replica.mergeStatistics.refolds > 0)
        try await replica.flush()
        let settled = mirrors
        #expect(await eventually(timeoutSeconds: 10) { settled.allSatisfy { $0.1.matches(replica.value(at: $0.0)) } })
        for (path, mirror) in mirrors {
            #expect(mirror.value == replica.value(at: path), "seed \(seed): value at \(path)")
            #expect(mirror.matches(replica.value(at: path)), "seed \(seed): children at \(path)")
        }
        tokens.removeAll()
        await fixture.finish()
    }

    @Test func aSubscriberFarBehindIsCaughtUpInOneDeliveryAndEndsOnTheLatestValue() async throws {
        let fixture = try ReplicaFixture(.memory)
        let node = try #require(fixture.replica.node(for: "/n"))
        let queue = DispatchQueue(label: "held")
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }
        let mirror = Mirror()
        let token = node.subscribe(to: .valueChange, queue: queue) { mirror.take($0) }
        let writes = CallbackSink.outstandingMax * 3
        for value in 1...writes { try fixture.replica.submit(path: node.location, kind: .set(.int(Int64(value)))) }
        try await fixture.replica.flush()
        gate.signal()
        #expect(await eventually(timeoutSeconds: 10) { mirror.value == .int(Int64(writes)) })
        token.invalidate()
        await fixture.finish()
    }
}
