import Testing

@testable import WeftCore

@Suite struct QueryValidationTests {
    let posts = Query(path: Path(uncheckedKeys: ["posts"]))

    @Test("a second ordering is refused, even of the same kind")
    func secondOrderingIsRefused() throws {
        #expect(throws: QueryError.orderingTwice(first: .key, second: .value)) {
            try posts.orderedByKey().orderedByValue()
        }
        #expect(throws: QueryError.orderingTwice(first: .child("a"), second: .child("a"))) {
            try posts.orderedByChild("a").orderedByChild("a")
        }
    }

    @Test("a limit of zero or less, or a second limit, is refused")
    func badLimitsAreRefused() throws {
        #expect(throws: QueryError.limitNotPositive(0)) { try posts.limit(toFirst: 0) }
        #expect(throws: QueryError.limitNotPositive(-3)) { try posts.limit(toLast: -3) }
        #expect(throws: QueryError.limitTwice) { try posts.limit(toFirst: 2).limit(toLast: 2) }
        #expect(throws: QueryError.limitTooLarge(count: CoreLimits.queryLimitMax + 1, max: CoreLimits.queryLimitMax)) {
            try posts.limit(toFirst: CoreLimits.queryLimitMax + 1)
        }
        #expect(throws: QueryError.offsetOutOfRange(count: -1, max: CoreLimits.queryOffsetMax)) { try posts.offset(-1) }
        #expect(throws: QueryError.offsetTwice) { try posts.offset(1).offset(2) }
    }

    @Test("a child path no key may hold is refused")
    func impossibleChildPathsAreRefused() throws {
        for bad in ["a.b", "x/$y", "", "/", "a/../b", "c[0]"] {
            #expect(throws: QueryError.self, "\(bad)") { try posts.orderedByChild(QueryField(bad)) }
            #expect(throws: QueryError.self, "\(bad)") { try posts.where(QueryField(bad).exists) }
        }
        let deep = QueryField(keys: (0..<31).map { Key(unchecked: "k\($0)") })
        #expect(throws: QueryError.self) { try posts.orderedByChild(deep) }
        let fits = QueryField(keys: (0..<30).map { Key(unchecked: "k\($0)") })
        #expect(try posts.orderedByChild(fits).ordering == .child(fits))
    }

    @Test("bounds twice, object bounds and key-order bounds that are not keys are refused")
    func badBoundsAreRefused() throws {
        #expect(throws: QueryError.boundTwice(bound: "starting(at:)")) {
            try posts.orderedByValue().starting(at: .int(1)).starting(at: .int(2))
        }
        #expect(throws: QueryError.boundTwice(bound: "equal(to:)")) {
            try posts.orderedByValue().ending(at: .int(1)).equal(to: .int(2))
        }
        #expect(throws: QueryError.self) { try posts.orderedByValue().starting(at: .object(["a": .int(1)])) }
        #expect(throws: QueryError.self) { try posts.starting(at: .int(3)) }
        #expect(throws: QueryError.self) { try posts.orderedByKey().starting(at: .string("a"), key: "b") }
        #expect(throws: QueryError.self) { try posts.orderedByKey().starting(at: .string("a/b")) }
        #expect(throws: QueryError.self) { try posts.orderedByValue().starting(at: .int(1), key: "a.b") }
        // A key bound given before the ordering is a key whatever ordering comes next.
        let keyed = try posts.ending(at: .string("k")).orderedByChild("x")
        #expect(keyed.end == QueryBound(value: .string("k")))
    }

    @Test("predicates compare with scalars, lists in holds 1 to 1024 values, and their size is bounded")
    func badPredicatesAreRefused() throws {
        #expect(throws: QueryError.self) { try posts.where(QueryField("a") == .object(["b": .int(1)])) }
        #expect(throws: QueryError.self) { try posts.where(QueryField("a") < .null) }
        #expect(throws: QueryError.self) { try posts.where(QueryField("a").isIn([])) }
        #expect(throws: QueryError.self) {
            try posts.where(QueryField("a").isIn(Array(repeating: .int(1), count: CoreLimits.queryInValuesMax + 1)))
        }
        var deep = QueryField("a").exists
        for _ in 0..<CoreLimits.queryPredicateDepthMax { deep = !deep }
        #expect(throws: QueryError.predicateTooLarge(nodes: 33, depth: 33)) { try posts.where(deep) }
        var wide = QueryField("a").exists
        for _ in 0..<200 { wide = wide || QueryField("b").exists }
        #expect(throws: QueryError.self) { try posts.where(wide) }
        // `== null` and `!= null` are fine: they ask for a missing node.
        let missing = try posts.where(QueryField("a") == .null)
        #expect(missing.predicate == .compare("a", .equal, .null))
    }

    @Test("where called twice joins the predicates with and")
    func whereTwiceJoinsWithAnd() throws {
        let query = try posts.where(QueryField("a").exists).where(QueryField("b") == .int(1))
        #expect(query.predicate == .and(.exists("a"), .compare("b", .equal, .int(1))))
        #expect(query.predicate?.conjuncts.count == 2)
    }

    @Test("errors read as sentences naming what is wrong")
    func errorsNameTheProblem() {
        #expect(QueryError.limitNotPositive(0).description.contains("at least 1"))
        #expect(QueryError.invalidChildPath(path: "a.b", reason: "r").description.contains("a.b"))
        #expect(QueryError.orderingTwice(first: .key, second: .child("s")).description.contains("by child s"))
    }
}
