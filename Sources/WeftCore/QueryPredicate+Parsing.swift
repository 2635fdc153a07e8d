/// Why a predicate's text did not parse: the UTF-8 byte offset where parsing stopped and what was expected.
public struct QueryExpressionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The UTF-8 byte offset in the text where the problem is.
    public let offset: Int
    /// What was wrong there.
    public let reason: String

    /// An error at `offset` for `reason`.
    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    public var description: String { "invalid where expression at byte \(offset): \(reason)" }
}

// The text form of predicates, for the command line (`weft query --where …`):
//
//     expression := or
//     or         := and ( "||" and )*
//     and        := unary ( "&&" unary )*
//     unary      := "!" unary | "(" expression ")" | field test
//     test       := ( "==" | "!=" | "<" | "<=" | ">" | ">=" ) literal
//                 | "in" "[" literal ( "," literal )* "]"
//                 | "exists"
//     field      := a child path such as meta/score (no spaces nor ( ) ! = < > & | , [ ] ")
//     literal    := a JSON scalar: "text", 12, -1.5e3, true, false, null
extension QueryPredicate {
    /// Parses a predicate from its text form: child paths, `==` `!=` `<` `<=` `>` `>=` with JSON scalars,
    /// `in [ … ]`, `exists`, `&&`, `||`, `!` and parentheses (`!` binds tighter than `&&`, which binds
    /// tighter than `||`).
    ///
    /// ```swift
    /// let open = try QueryPredicate(parsing: #"status == "open" && (meta/score >= 10 || pinned exists)"#)
    /// ```
    /// The fields are checked when the predicate joins a query (``Query/where(_:)``).
    /// - Throws: ``QueryExpressionError`` naming the byte offset and what was expected there.
    public init(parsing text: String) throws(QueryExpressionError) {
        guard text.utf8.count <= CoreLimits.queryBytesMax else {
            throw QueryExpressionError(offset: 0, reason: "the text exceeds \(CoreLimits.queryBytesMax) bytes")
        }
        var parser = PredicateParser(bytes: Array(text.utf8))
        let predicate = try parser.parseOr(depth: 0)
        parser.skipSpaces()
        guard parser.isAtEnd else {
            throw QueryExpressionError(offset: parser.offset, reason: "expected && or || or the end, found \(parser.peekText)")
        }
        self = predicate
    }
}

/// A recursive-descent parser over UTF-8 bytes; nesting and node counts are bounded by the query limits
/// before the stack could grow with hostile text.
private struct PredicateParser {
    let bytes: [UInt8]
    var offset = 0
    var nodes = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { offset >= bytes.count }

    /// What lies at the offset, for messages.
    var peekText: String {
        guard !isAtEnd else { return "the end" }
        let end = min(bytes.count, offset + 20)
        return "\"\(String(decoding: bytes[offset..<end], as: UTF8.self))\""
    }

    mutating func skipSpaces() {
        while offset < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[offset]) { offset += 1 }
    }

    /// Consumes `token` (after spaces) when it comes next.
    mutating func take(_ token: String) -> Bool {
        skipSpaces()
        let utf8 = Array(token.utf8)
        guard offset + utf8.count <= bytes.count, Array(bytes[offset..<(offset + utf8.count)]) == utf8 else {
            return false
        }
        offset += utf8.count
        return true
    }

    mutating func count(depth: Int) throws(QueryExpressionError) {
        nodes += 1
        guard depth <= CoreLimits.queryPredicateDepthMax, nodes <= CoreLimits.queryPredicateNodesMax else {
            throw QueryExpressionError(
                offset: offset,
                reason: "at most \(CoreLimits.queryPredicateNodesMax) tests and operators, "
                    + "nested at most \(CoreLimits.queryPredicateDepthMax) deep")
        }
    }

    mutating func parseOr(depth: Int) throws(QueryExpressionError) -> QueryPredicate {
        var operands = [try parseAnd(depth: depth)]
        while take("||") {
            try count(depth: depth)
            operands.append(try parseAnd(depth: depth))
        }
        return Self.balanced(operands[...], join: QueryPredicate.or)
    }

    mutating func parseAnd(depth: Int) throws(QueryExpressionError) -> QueryPredicate {
        var operands = [try parseUnary(depth: depth)]
        while take("&&") {
            try count(depth: depth)
            operands.append(try parseUnary(depth: depth))
        }
        return Self.balanced(operands[...], join: QueryPredicate.and)
    }

    /// A chain joined as a balanced tree (`&&` and `||` are associative), keeping long chains shallow;
    /// left to right order is kept, so the first conjunct stays first.
    static func balanced(
        _ operands: ArraySlice<QueryPredicate>, join: (QueryPredicate, QueryPredicate) -> QueryPredicate
    ) -> QueryPredicate {
        if operands.count == 1, let only = operands.first { return only }
        let middle = operands.startIndex + operands.count / 2
        return join(balanced(operands[..<middle], join: join), balanced(operands[middle...], join: join))
    }

    mutating func parseUnary(depth: Int) throws(QueryExpressionError) -> QueryPredicate {
        skipSpaces()
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "!"),
            offset + 1 >= bytes.count || bytes[offset + 1] != UInt8(ascii: "=")
        {
            offset += 1
            try count(depth: depth + 1)
            return .not(try parseUnary(depth: depth + 1))
        }
        if take("(") {
            try count(depth: depth + 1)
            let inner = try parseOr(depth: depth + 1)
            guard take(")") else { throw QueryExpressionError(offset: offset, reason: "expected ), found \(peekText)") }
            return inner
        }
        return try parseTest(depth: depth)
    }

    mutating func parseTest(depth: Int) throws(QueryExpressionError) -> QueryPredicate {
        try count(depth: depth)
        let field = try parseField()
        let comparisons: [(String, QueryComparison)] = [
            ("==", .equal), ("!=", .notEqual), ("<=", .lessOrEqual), (">=", .greaterOrEqual),
            ("<", .less), (">", .greater),
        ]
        for (token, comparison) in comparisons where take(token) {
            return .compare(field, comparison, try parseLiteral())
        }
        if takeWord("exists") { return .exists(field) }
        if takeWord("in") {
            guard take("[") else { throw QueryExpressionError(offset: offset, reason: "expected [ after in") }
            var values = [try parseLiteral()]
            while take(",") {
                guard values.count < CoreLimits.queryInValuesMax else {
                    throw QueryExpressionError(
                        offset: offset, reason: "an in list holds at most \(CoreLimits.queryInValuesMax) values")
                }
                values.append(try parseLiteral())
            }
            guard take("]") else { throw QueryExpressionError(offset: offset, reason: "expected , or ], found \(peekText)") }
            return .isIn(field, values)
        }
        throw QueryExpressionError(
            offset: offset, reason: "expected == != < <= > >= in or exists after \(field), found \(peekText)")
    }

    /// Consumes a word when it comes next and is not the start of a longer name.
    mutating func takeWord(_ word: String) -> Bool {
        let start = offset
        guard take(word) else { return false }
        if offset < bytes.count, !Self.isDelimiter(bytes[offset]) {
            offset = start
            return false
        }
        return true
    }

    static func isDelimiter(_ byte: UInt8) -> Bool {
        Array(" \t\r\n()!=<>&|,[]\"".utf8).contains(byte)
    }

    mutating func parseField() throws(QueryExpressionError) -> QueryField {
        skipSpaces()
        let start = offset
        while offset < bytes.count, !Self.isDelimiter(bytes[offset]) { offset += 1 }
        guard offset > start else {
            throw QueryExpressionError(offset: offset, reason: "expected a child path, found \(peekText)")
        }
        return QueryField(String(decoding: bytes[start..<offset], as: UTF8.self))
    }

    mutating func parseLiteral() throws(QueryExpressionError) -> Value {
        skipSpaces()
        let start = offset
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") {
            offset += 1
            while offset < bytes.count, bytes[offset] != UInt8(ascii: "\"") {
                offset += bytes[offset] == UInt8(ascii: "\\") ? 2 : 1
            }
            guard offset < bytes.count else {
                throw QueryExpressionError(offset: start, reason: "a string is not closed")
            }
            offset += 1
        } else {
            let scalar = Array("+-.0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)
            while offset < bytes.count, scalar.contains(bytes[offset]) { offset += 1 }
        }
        guard offset > start else {
            throw QueryExpressionError(offset: offset, reason: "expected a JSON value, found \(peekText)")
        }
        do {
            return try Value(jsonBytes: bytes[start..<offset])
        } catch {
            throw QueryExpressionError(offset: start, reason: "\(error)")
        }
    }
}
