import PropertyBased
import Testing

@testable import WeftCore

@Suite struct QueryChangeSetTests {
    static func result(_ pairs: [(String, Int)]) -> QueryResult {
        QueryResult(rows: pairs.map { QueryRow(key: Key(unchecked: $0.0), value: .int(Int64($0.1))) })
    }

    @Test("a row crossing the window's edge is one deletion and one insertion")
    func crossingTheEdgeIsADeletionAndAnInsertion() {
        let old = Self.result([("a", 1), ("b", 2), ("c", 3)])
        let new = Self.result([("b", 2), ("c", 3), ("d", 4)])
        let changes = QueryChangeSet(from: old, to: new)
        #expect(changes.deletions == [0])
        #expect(changes.insertions == [2])
        #expect(changes.modifications.isEmpty)
        #expect(changes.moves.isEmpty)
    }

    @Test("a row changed in place is a modification at its old index; one that passes others is a move")
    func modificationsAndMoves() {
        let old = Self.result([("a", 1), ("b", 2), ("c", 3), ("d", 4)])
        let changedInPlace = Self.result([("b", 2), ("c", 30), ("d", 4)])
        let inPlace = QueryChangeSet(from: old, to: changedInPlace)
        #expect(inPlace.deletions == [0])
        #expect(inPlace.modifications == [2])
        let moved = Self.result([("a", 1), ("c", 3), ("d", 4), ("b", 9)])
        let move = QueryChangeSet(from: old, to: moved)
        #expect(move.moves == [QueryChangeSet.Move(from: 1, to: 3)])
        #expect(move.deletions.isEmpty && move.insertions.isEmpty && move.modifications.isEmpty)
        #expect(QueryChangeSet(from: old, to: old).isEmpty)
    }

    @Test("applying the change set of two random results to the old one gives the new one")
    func applyingTheChangeSetGivesTheNewResult() async {
        await propertyCheck(count: 1000, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            var rng = SeededGenerator(seed: UInt64(seed))
            func draw() -> QueryResult {
                var keys = (0..<12).map { Key(unchecked: "k\($0)") }
                rng.shuffle(&keys)
                let count = Int(rng.below(13))
                return QueryResult(rows: keys.prefix(count).map { QueryRow(key: $0, value: .int(Int64(rng.below(3)))) })
            }
            let old = draw()
            let new = rng.below(4) == 0 ? old : draw()
            let changes = QueryChangeSet(from: old, to: new)
            #expect(changes.applied(to: old, reading: new) == new, "seed \(seed): \(changes)")
            #expect(changes.deletions.allSatisfy { $0 < old.count } && changes.modifications.allSatisfy { $0 < old.count })
            #expect(changes.insertions.allSatisfy { $0 < new.count })
            // Moves are the fewest: the rows that stay in place keep their relative order.
            let stayed = old.rows.enumerated().filter { new.keys.contains($0.element.key) }.count
            #expect(changes.moves.count <= stayed)
            #expect(changes.isEmpty == (old == new), "seed \(seed)")
        }
    }

    @Test("the change sets of a query's results over a random stream of writes replay the results")
    func changeSetsReplayQueryResultsOverWrites() async {
        await propertyCheck(count: 500, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            var rng = SeededGenerator(seed: UInt64(seed))
            let query = QueryWorkload.query(path: Path(uncheckedKeys: ["posts"]), rng: &rng)
            var node = QueryWorkload.collection(count: Int(rng.below(30)), rng: &rng)
            var shown = query.evaluate(node)
            for _ in 0..<20 {
                let key = QueryWorkload.key(rng: &rng)
                node.write(rng.below(5) == 0 ? .null : QueryWorkload.child(rng: &rng), at: [key])
                let next = query.evaluate(node)
                let changes = QueryChangeSet(from: shown, to: next)
                shown = changes.applied(to: shown, reading: next)
                #expect(shown == next, "seed \(seed)")
            }
        }
    }
}
