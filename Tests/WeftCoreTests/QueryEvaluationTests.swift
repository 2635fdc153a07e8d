import PropertyBased
import Testing

@testable import WeftCore

@Suite struct QueryEvaluationTests {
    let posts = Query(path: Path(uncheckedKeys: ["posts"]))

    static func node(_ json: String) throws -> Value { try Value(json: json) }

    @Test("ordering by child puts missing values first, then mixed types in Firebase order, ties by key")
    func orderingByChildFollowsMixedTypeOrder() throws {
        let node = try Self.node(#"""
            {"a":{"s":"x"},"b":{"s":3},"c":{"t":1},"d":{"s":true},"e":{"s":1.5},"f":{"s":{"o":1}},
             "g":{"s":false},"h":{"s":3},"2":{"s":3},"i":7}
            """#)
        let result = try posts.orderedByChild("s").evaluate(node)
        #expect(result.keys.map(\.text) == ["c", "i", "g", "d", "e", "2", "b", "h", "a", "f"])
    }

    @Test("ordering by key puts integer keys first by value, then the rest by bytes")
    func orderingByKeyFollowsKeyOrder() throws {
        let node = try Self.node(#"{"b":1,"10":1,"a":1,"2":1,"-1":1,"B":1}"#)
        #expect(posts.evaluate(node).keys.map(\.text) == ["-1", "2", "10", "B", "a", "b"])
        let ranged = try posts.orderedByKey().starting(at: .string("2")).ending(at: .string("B"))
        #expect(ranged.evaluate(node).keys.map(\.text) == ["2", "10", "B"])
    }

    @Test("bounds with a tie key admit equal values from or up to that key")
    func tieKeysCutAmongEqualValues() throws {
        let node = try Self.node(#"{"a":5,"b":5,"c":5,"d":6,"e":4}"#)
        let from = try posts.orderedByValue().starting(at: .int(5), key: "b")
        #expect(from.evaluate(node).keys.map(\.text) == ["b", "c", "d"])
        let upTo = try posts.orderedByValue().ending(at: .int(5), key: "b")
        #expect(upTo.evaluate(node).keys.map(\.text) == ["e", "a", "b"])
        let exactly = try posts.orderedByValue().equal(to: .double(5.0))
        #expect(exactly.evaluate(node).keys.map(\.text) == ["a", "b", "c"])
        let one = try posts.orderedByValue().equal(to: .int(5), key: "c")
        #expect(one.evaluate(node).keys.map(\.text) == ["c"])
    }

    @Test("limits keep either end in ascending order, and offsets skip at the limited end")
    func windowsKeepTheLimitedEnd() throws {
        let node = try Self.node(#"{"a":1,"b":2,"c":3,"d":4,"e":5}"#)
        let ordered = try posts.orderedByValue()
        #expect(try ordered.limit(toFirst: 2).evaluate(node).keys.map(\.text) == ["a", "b"])
        #expect(try ordered.limit(toLast: 2).evaluate(node).keys.map(\.text) == ["d", "e"])
        #expect(try ordered.limit(toFirst: 2).offset(1).evaluate(node).keys.map(\.text) == ["b", "c"])
        #expect(try ordered.limit(toLast: 2).offset(1).evaluate(node).keys.map(\.text) == ["c", "d"])
        #expect(try ordered.offset(3).evaluate(node).keys.map(\.text) == ["d", "e"])
        #expect(try ordered.limit(toLast: 9).offset(4).evaluate(node).keys.map(\.text) == ["a"])
        #expect(try ordered.offset(9).evaluate(node).isEmpty)
    }

    @Test("ordered comparisons hold within one kind; a missing field is never below a number")
    func predicatesCompareWithinOneKind() throws {
        let node = try Self.node(#"""
            {"a":{"n":3,"s":"open"},"b":{"n":"2"},"c":{"s":"closed"},"d":{"n":12.5},"e":{"n":true}}
            """#)
        func keys(_ predicate: QueryPredicate) throws -> [String] {
            try posts.where(predicate).evaluate(node).keys.map(\.text)
        }
        #expect(try keys(QueryField("n") < .int(10)) == ["a"])
        #expect(try keys(QueryField("n") >= .int(3)) == ["a", "d"])
        #expect(try keys(QueryField("n") > .bool(false)) == ["e"])
        #expect(try keys(QueryField("n") <= .string("3")) == ["b"])
        #expect(try keys(QueryField("n") == .double(3.0)) == ["a"])
        #expect(try keys(QueryField("s") != .string("open")) == ["b", "c", "d", "e"])
        #expect(try keys(QueryField("s") == .null) == ["b", "d", "e"])
        #expect(try keys(QueryField("n").isIn([.int(12), .double(12.5), .string("2")])) == ["b", "d"])
        #expect(try keys(QueryField("s").exists && !(QueryField("s") == .string("closed"))) == ["a"])
        #expect(try keys(QueryField("s") == .string("closed") || QueryField("n") == .bool(true)) == ["c", "e"])
    }

    @Test("any query's result is sorted, admitted, within its window, and a cut of the unwindowed result")
    func resultsAreConsistentWithTheirParts() async {
        await propertyCheck(count: 500, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            var rng = SeededGenerator(seed: UInt64(seed))
            let node = QueryWorkload.collection(count: Int(rng.below(40)), rng: &rng)
            let query = QueryWorkload.query(path: posts.path, rng: &rng)
            let result = query.evaluate(node)
            for row in result {
                #expect(query.admits(key: row.key, value: row.value), "seed \(seed)")
                #expect(node[row.key] == row.value, "seed \(seed)")
            }
            for (left, right) in zip(result.rows, result.rows.dropFirst()) {
                let order = query.compare(
                    query.orderingValue(key: left.key, value: left.value), left.key,
                    query.orderingValue(key: right.key, value: right.value), right.key)
                #expect(order < 0, "seed \(seed)")
            }
            let admitted = node.children.filter { query.admits(key: $0.key, value: $0.value) }.count
            #expect(result.count == query.window(count: admitted).count, "seed \(seed)")
        }
    }
}
