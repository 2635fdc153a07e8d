import Testing
import WeftCore

@Suite struct QueryPredicateParsingTests {
    static func parse(_ text: String) throws(QueryExpressionError) -> QueryPredicate {
        try QueryPredicate(parsing: text)
    }

    @Test("each comparison parses with its JSON literal")
    func comparisonsParse() throws {
        #expect(try Self.parse(#"status == "open""#) == (QueryField("status") == .string("open")))
        #expect(try Self.parse("meta/score != 3") == (QueryField("meta/score") != .int(3)))
        #expect(try Self.parse("a<1.5") == (QueryField("a") < .double(1.5)))
        #expect(try Self.parse("a <= -2") == (QueryField("a") <= .int(-2)))
        #expect(try Self.parse("a > true") == (QueryField("a") > .bool(true)))
        #expect(try Self.parse("a >= null") == (QueryField("a") >= .null))
        #expect(try Self.parse("a == 1e3") == (QueryField("a") == .double(1000)))
        #expect(try Self.parse(#"a == "x \" && y""#) == (QueryField("a") == .string(#"x " && y"#)))
    }

    @Test("in lists and exists parse")
    func inAndExistsParse() throws {
        #expect(
            try Self.parse(#"tag in ["a", 2, false]"#)
                == QueryField("tag").isIn([.string("a"), .int(2), .bool(false)]))
        #expect(try Self.parse("pinned exists") == QueryField("pinned").exists)
        #expect(try Self.parse("!pinned exists") == !QueryField("pinned").exists)
        // A field may be named like a keyword when the keyword follows it.
        #expect(try Self.parse("exists exists") == QueryField("exists").exists)
        #expect(try Self.parse("index in [1]") == QueryField("index").isIn([.int(1)]))
    }

    @Test("! binds tighter than &&, which binds tighter than ||; parentheses group")
    func precedence() throws {
        let a = QueryField("a") == .int(1)
        let b = QueryField("b") == .int(2)
        let c = QueryField("c") == .int(3)
        #expect(try Self.parse("a == 1 || b == 2 && c == 3") == (a || (b && c)))
        #expect(try Self.parse("(a == 1 || b == 2) && c == 3") == ((a || b) && c))
        #expect(try Self.parse("!a == 1 && b == 2") == (!a && b))
        #expect(try Self.parse("!(a == 1 && b == 2)") == !(a && b))
        #expect(try Self.parse("  ( ( a == 1 ) )  ") == a)
    }

    @Test("a long chain of && keeps its order and stays shallow enough to be a valid query")
    func longChainsStayValid() throws {
        let text = (0..<100).map { "f\($0) == \($0)" }.joined(separator: " && ")
        let predicate = try Self.parse(text)
        #expect(predicate.conjuncts == (0..<100).map { QueryField("f\($0)") == .int(Int64($0)) })
        let query = try Query(path: try Path("/posts")).where(predicate)
        #expect(query.predicate == predicate)
    }

    @Test("a parsed predicate filters as the built one does")
    func parsedPredicatesFilter() throws {
        let posts = try Value(
            json: #"{"p1":{"status":"open","score":5},"p2":{"status":"closed","score":9},"p3":{"status":"open"}}"#)
        let query = try Query(path: try Path("/posts")).where(Self.parse(#"status == "open" && !(score exists)"#))
        #expect(query.evaluate(posts).keys.map(\.text) == ["p3"])
    }

    @Test("bad text names the byte offset and what was expected", arguments: [
        ("", 0, "expected a child path"),
        ("a ==", 4, "expected a JSON value"),
        ("a = 1", 2, "expected == != < <= > >= in or exists"),
        ("a == 1 &&", 9, "expected a child path"),
        ("(a == 1", 7, "expected )"),
        ("a == 1)", 6, "expected && or || or the end"),
        (#"a == "open"#, 5, "a string is not closed"),
        ("a == open", 5, "invalid JSON"),
        ("a in 1", 5, "expected [ after in"),
        ("a in [1 2]", 8, "expected , or ]"),
        ("a == 1 & b == 2", 7, "expected && or || or the end"),
    ])
    func badTextIsRefused(text: String, offset: Int, reason: String) {
        do {
            _ = try Self.parse(text)
            Issue.record("\(text) parsed")
        } catch {
            #expect(error.offset == offset, "\(error)")
            #expect(error.reason.contains(reason), "\(error)")
        }
    }

    @Test("nesting past the query's limits is refused before the stack grows")
    func deepNestingIsRefused() {
        let deep = String(repeating: "(", count: 10_000) + "a == 1" + String(repeating: ")", count: 10_000)
        #expect(throws: QueryExpressionError.self) { try Self.parse(deep) }
        let negated = String(repeating: "!", count: 10_000) + "a exists"
        #expect(throws: QueryExpressionError.self) { try Self.parse(negated) }
        let wide = (0..<300).map { "f\($0) exists" }.joined(separator: " || ")
        #expect(throws: QueryExpressionError.self) { try Self.parse(wide) }
    }

    @Test("a field no key may hold is refused when the predicate joins a query")
    func invalidFieldsAreQueryErrors() throws {
        let predicate = try Self.parse("a/../b == 1")
        #expect(throws: QueryError.self) { try Query(path: try Path("/posts")).where(predicate) }
    }
}
