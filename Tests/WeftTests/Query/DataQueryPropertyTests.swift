import Foundation
import Testing

@_spi(Engine) @testable import Weft
@testable import WeftCore

/// Queries on a replica equal the naive filter-and-sort of the children, through indexes or not, while
/// the replica takes its own writes and remote ops from three writers (late ones, which re-fold, included).
@Suite(.timeLimit(.minutes(5))) struct DataQueryPropertyTests {
    static let items = Path(uncheckedKeys: ["items"])
    /// The child paths the workload writes under each item.
    static let fields: [QueryField] = ["score", "name", "deep/x0", "tags"]

    @Test("random queries over a replica equal the naive evaluation, indexed and unindexed, across random ops")
    func queriesEqualTheNaiveEvaluation() async throws {
        var checked = 0
        var indexed = 0
        for seed in 0..<UInt64(500) {
            await Task.yield()  // CPU-bound seeds: the run's other tests go between them
            let fixture = try ReplicaFixture(.memory, seed: seed)
            var rng = SeededGenerator(seed: seed)
            var traffic = ReplicaTraffic(
                localSeed: seed &+ 11, remoteSeed: seed &+ 12, remoteWriters: 3, items: 10, counters: 2,
                startMillis: fixture.clock.now)
            let replica = fixture.replica
            let node = try #require(replica.node(for: "/items"))
            let defined = Self.fields.filter { _ in rng.below(2) == 0 }
            let defineAt = Int(rng.below(20))
            for step in 0..<30 {
                if step == defineAt {
                    for field in defined { try replica.defineIndex(on: "/items", orderedBy: field.description) }
                }
                if rng.below(2) == 0 {
                    try traffic.write(to: replica)
                } else {
                    let writer = Int(rng.below(3))
                    let ops = traffic.remoteOps(from: writer, count: 1 + Int(rng.below(6)))
                    traffic.keepAhead(fixture.clock)
                    _ = try replica.applyRemote(ops)
                }
                guard rng.below(3) == 0 else { continue }
                let query = QueryWorkload.query(path: Self.items, fields: Self.fields, values: Self.values, rng: &rng)
                let dataQuery = DataQuery(node: node, query: query)
                let expected = query.evaluate(replica.snapshot().value(at: Self.items))
                #expect(try await dataQuery.fetch() == expected, "seed \(seed) step \(step): \(query)")
                if try dataQuery.explain().usesIndex { indexed += 1 }
                checked += 1
            }
            try Self.expectIndexesInStep(replica, seed: seed)
            await fixture.finish()
        }
        #expect(checked >= 500 && indexed >= 100, "\(checked) queries checked, \(indexed) through an index")
    }

    /// Values the workload writes (and a few it does not), for bounds and comparisons that hit.
    static let values: [Value] = [
        .int(-500), .int(-3), .int(0), .int(17), .int(250), .double(12.5), .double(-0.125), .string("s1"),
        .string("s30"), .string("n"), .bool(true), .bool(false), .null,
    ]

    /// Every index holds exactly the entries a build from the replica's state holds.
    static func expectIndexesInStep(_ replica: Replica, seed: UInt64) throws {
        let (held, state) = replica.condition.withLock { (replica.queryIndexes.held, replica.engine?.state ?? .null) }
        for index in held.map(\.index) {
            let built = QueryIndex.build(collection: index.collection, field: index.field, node: state.value(at: index.collection))
            #expect(index.entries.all == built.entries.all, "seed \(seed): index by \(index.field)")
        }
    }
}
