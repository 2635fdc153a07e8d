import PropertyBased
import Testing

@testable import WeftCore

@Suite struct QueryIndexTests {
    static let posts = Path(uncheckedKeys: ["posts"])

    @Test("an index updated through random writes holds what a build from the final node holds")
    func updatesKeepTheIndexEqualToABuild() async {
        await propertyCheck(count: 500, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            var rng = SeededGenerator(seed: UInt64(seed))
            let field = QueryWorkload.fields[Int(rng.below(UInt64(QueryWorkload.fields.count)))]
            var node = QueryWorkload.collection(count: Int(rng.below(30)), rng: &rng)
            var index = QueryIndex.build(collection: Self.posts, field: field, node: node)
            for _ in 0..<Int(rng.below(60)) {
                let key = QueryWorkload.key(rng: &rng)
                node.write(rng.below(4) == 0 ? .null : QueryWorkload.child(rng: &rng), at: [key])
                index.update(key: key, child: node[key])
            }
            let built = QueryIndex.build(collection: Self.posts, field: field, node: node)
            #expect(index.entries.all == built.entries.all, "seed \(seed)")
            #expect(index.count == node.children.count, "seed \(seed)")
            let reread = QueryIndex(collection: Self.posts, field: field, sorted: index.entries.all)
            #expect(reread?.entries.all == built.entries.all, "seed \(seed)")
        }
    }

    @Test("chunks split as they fill and stay sorted over thousands of children")
    func largeIndexesStaySorted() {
        var rng = SeededGenerator(seed: 3)
        var node = Value.null
        var index = QueryIndex(collection: Self.posts, field: "score")
        for number in 0..<5_000 {
            let key = Key(unchecked: "k\(number)")
            let child = Value.object(["score": .int(Int64(rng.below(300)))])
            node.write(child, at: [key])
            index.update(key: key, child: child)
        }
        for number in stride(from: 0, to: 5_000, by: 3) {
            let key = Key(unchecked: "k\(number)")
            node.write(.null, at: [key])
            index.update(key: key, child: .null)
        }
        let all = index.entries.all
        #expect(all.count == node.children.count)
        #expect(zip(all, all.dropFirst()).allSatisfy { QueryIndexEntry.precedes($0, $1) })
        #expect(index.entries.chunks.allSatisfy { $0.count <= CoreLimits.queryIndexChunkEntriesMax && !$0.isEmpty })
    }

    @Test("a sort key's byte order is the entries' order")
    func sortKeysOrderAsEntries() async {
        await propertyCheck(count: 500, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            var rng = SeededGenerator(seed: UInt64(seed))
            func draw() -> QueryIndexEntry {
                let value: Value =
                    switch rng.below(4) {
                    case 0: .int(Int64(bitPattern: rng.next()) >> Int64(rng.below(64)))
                    case 1: .double(Double(Int64(bitPattern: rng.next()) >> 20) / Double(1 + rng.below(1000)))
                    case 2: .string(["", "a", "a\u{0}", "a\u{0}b", "ab", "é", "\u{0}"][Int(rng.below(7))])
                    default: QueryWorkload.scalar(rng: &rng)
                    }
                return QueryIndexEntry(value: value, key: QueryWorkload.key(rng: &rng))
            }
            let left = draw()
            let right = rng.below(8) == 0 ? QueryIndexEntry(value: left.value, key: QueryWorkload.key(rng: &rng)) : draw()
            let byBytes = left.sortKey.lexicographicallyPrecedes(right.sortKey)
            #expect(byBytes == QueryIndexEntry.precedes(left, right), "seed \(seed): \(left) vs \(right)")
            #expect((left.sortKey == right.sortKey) == (left.key == right.key && ValueOrder.compare(left.value, right.value) == 0))
        }
        // Integers beyond 2^53 beside the doubles they round to.
        let big: [Value] = [.int(9_007_199_254_740_993), .double(9_007_199_254_740_992), .int(.max), .int(.min), .double(-1e300)]
        for a in big {
            for b in big {
                let x = QueryIndexEntry(value: a, key: "k")
                let y = QueryIndexEntry(value: b, key: "k")
                #expect(x.sortKey.lexicographicallyPrecedes(y.sortKey) == (ValueOrder.compare(a, b) < 0), "\(a) \(b)")
            }
        }
    }

    @Test("a query through an index gives the reference result, and says which road it took")
    func indexedQueriesEqualTheReference() async {
        await propertyCheck(count: 1000, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            var rng = SeededGenerator(seed: UInt64(seed))
            let node = QueryWorkload.collection(count: Int(rng.below(40)), rng: &rng)
            let indexes = QueryWorkload.fields.filter { _ in rng.below(2) == 0 }.map {
                QueryIndex.build(collection: Self.posts, field: $0, node: node).entries
            }
            let query = QueryWorkload.query(path: Self.posts, rng: &rng)
            let run = query.run(on: node, indexes: indexes)
            #expect(run.result == query.evaluate(node), "seed \(seed): \(query) by \(run.plan)")
            if case .child(let field) = query.ordering, indexes.contains(where: { $0.field == field }) {
                #expect(run.plan.usesIndex, "seed \(seed)")
            }
            if indexes.isEmpty { #expect(run.plan == .scan(children: node.children.count)) }
        }
    }

    @Test("an index range reads only the window when no predicate skips entries")
    func indexRangesReadOnlyTheWindow() throws {
        var children: [Key: Value] = [:]
        for number in 0..<2_000 { children[Key(unchecked: "p\(number)")] = .object(["score": .int(Int64(number))]) }
        let node = Value.object(children)
        let index = QueryIndex.build(collection: Self.posts, field: "score", node: node)
        let query = try Query(path: Self.posts).orderedByChild("score").starting(at: .int(100)).limit(toLast: 20)
        let run = query.run(on: node, indexes: [index.entries])
        #expect(run.plan == .indexRange(field: "score", entriesRead: 20))
        #expect(run.result.keys.map(\.text) == (1980..<2000).map { "p\($0)" })
        let first = try Query(path: Self.posts).orderedByKey().where(QueryField("score") < .int(5))
        #expect(first.run(on: node, indexes: [index.entries]).plan == .indexCandidates(field: "score", candidates: 5))
    }
}
