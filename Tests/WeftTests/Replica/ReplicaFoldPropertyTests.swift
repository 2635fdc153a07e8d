import Foundation
import Testing
import WeftStore

@testable import WeftCore
@_spi(Engine) @testable import Weft

/// A SQLite replica driven at random through what a real one meets: its own writes, remote ops from
/// three writers arriving a stream at a time, reopenings, and compactions up to what every writer has
/// sent. After each reopening it holds what it held before; at the end its state, the state it loads
/// from its file, and the tree stored in the file all equal the reference fold of every op it made or
/// received. The simulator checks the engine and the store this way; this checks the `Replica` layer
/// above them (group commit, preserved regions, base overrides, the lazy load).
@Suite(.timeLimit(.minutes(5))) struct ReplicaFoldPropertyTests {
    @Test(arguments: Array(1...16) as [UInt64])
    func aReplicaLandsOnTheFoldOfEverythingItMadeOrReceived(seed: UInt64) async throws {
        let fixture = try ReplicaFixture(.sqlite, seed: seed + 1000)
        var generator = SeededGenerator(seed: seed)
        var traffic = ReplicaTraffic(
            localSeed: seed &+ 1, remoteSeed: seed &+ 2, remoteWriters: 3, items: 12, counters: 4,
            startMillis: fixture.clock.now)
        var delivered: [Op] = []
        var lastDelivered: [ReplicaID: Stamp] = [:]
        var made = OwnOps()
        var (reopenings, compactions) = (0, 0)
        for _ in 0..<300 {
            let replica = fixture.replica
            switch generator.below(100) {
            case 0..<40:
                try traffic.write(to: replica)
            case 40..<75:
                let writer = Int(generator.below(3))
                let ops = traffic.remoteOps(from: writer, count: Int(generator.below(12)) + 1)
                traffic.keepAhead(fixture.clock)
                let report = try replica.applyRemote(ops)
                #expect(report.refused.isEmpty)
                delivered += ops
                lastDelivered[ops[0].origin] = ops.last?.stamp
            case 75..<85:
                fixture.clock.advance(by: generator.below(50))
            case 85..<92:
                try await replica.flush()
                let before = replica.snapshot()
                try await fixture.reopen()
                try await fixture.replica.waitUntilLoaded()
                #expect(fixture.replica.snapshot() == before, "seed \(seed): a reopening changed the state")
                reopenings += 1
            case 92..<96:
                // Stable up to what every writer has sent: none of their later ops is stamped below it.
                guard lastDelivered.count == 3, let frontier = lastDelivered.values.min() else { continue }
                try await made.collect(from: replica)
                replica.markStable(through: frontier)
                _ = try await replica.compact(vacuum: generator.chance(0.5))
                compactions += 1
            default:
                try await replica.flush()
            }
        }
        try await made.collect(from: fixture.replica)
        let expected = ReferenceFold.fold(made.ops + delivered, registry: Workload.registry).state
        #expect(fixture.replica.snapshot() == expected, "seed \(seed)")
        try await fixture.reopen()
        try await fixture.replica.waitUntilLoaded()
        #expect(fixture.replica.snapshot() == expected, "seed \(seed): loaded from the file")
        await fixture.replica.shutdown()
        let store = try fixture.openStore()
        #expect(try store.readTree() == expected, "seed \(seed): the stored tree")
        try store.close()
        #expect(reopenings > 0 && compactions > 0 && made.ops.count > 50 && delivered.count > 200)
        await fixture.finish()
    }

    /// This replica's own ops, read back from it before a compaction takes them out of its log.
    struct OwnOps {
        var ops: [Op] = []
        var through: UInt64 = 0

        mutating func collect(from replica: Replica) async throws {
            try await replica.flush()
            while true {
                let page = replica.ops(from: replica.replicaID, after: through, limit: 500)
                guard let last = page.last else { return }
                ops += page
                through = last.sequence
            }
        }
    }
}
