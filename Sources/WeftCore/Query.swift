/// What a query sorts the children of its node by.
public enum QueryOrdering: Sendable, Hashable, CustomStringConvertible {
    /// By key, in Firebase's key order (``KeyOrder``): the default.
    case key
    /// By the child's own value, in Firebase's order of mixed types (``ValueOrder``); ties by key.
    case value
    /// By the value at a path below each child (null where it is missing); ties by key.
    case child(QueryField)

    public var description: String {
        switch self {
        case .key: return "by key"
        case .value: return "by value"
        case .child(let field): return "by child \(field)"
        }
    }
}

/// A bound of a query's range: a value of the ordering and, for ties, a key.
///
/// With ``QueryOrdering/key`` the value is the key itself (a string) and there is no tie key.
public struct QueryBound: Sendable, Hashable {
    /// The ordering value the bound sits at.
    public let value: Value
    /// Among children whose ordering value equals ``value``, the first (of a start) or last (of an end)
    /// key admitted; nil admits them all.
    public let key: Key?

    public init(value: Value, key: Key? = nil) {
        self.value = value
        self.key = key
    }
}

/// Which end of the ordered children a query keeps.
public enum QueryLimit: Sendable, Hashable {
    /// The first `count` children (`limit(toFirst:)`).
    case first(Int)
    /// The last `count` children (`limit(toLast:)`), still returned in ascending order.
    case last(Int)

    /// The number of children kept.
    public var count: Int {
        switch self {
        case .first(let count), .last(let count): return count
        }
    }
}

/// A question asked of the children of one node: an ordering, a range and a predicate that filter, and a
/// window (limit and offset) that keeps part of what is left. Firebase's query model, with Dflat's `where`.
///
/// A query is a value built by throwing calls, each checking its rule at once, so an invalid query is
/// never built (see ``QueryError``). It is pure: ``evaluate(_:)`` gives its result over any node value.
///
/// ```swift
/// let top = try Query(path: Path("/posts"))
///     .orderedByChild("meta/score")
///     .starting(at: .int(10))
///     .where(QueryField("status") == .string("open"))
///     .limit(toLast: 20)
/// let rows = top.evaluate(tree.value(at: top.path))   // the 20 best open posts scoring 10 or more
/// ```
///
/// - Ordering: by key unless ``orderedByKey()``, ``orderedByValue()`` or ``orderedByChild(_:)`` says
///   otherwise (once). Results always come in ascending order, ties by key.
/// - Range: ``starting(at:key:)`` and ``ending(at:key:)`` (or ``equal(to:key:)`` for both) on the ordering
///   value, optionally with the key for ties.
/// - Predicate: ``where(_:)``, repeatable (the predicates are joined by `&&`).
/// - Window: ``limit(toFirst:)`` or ``limit(toLast:)``, and ``offset(_:)`` which skips that many children at
///   the limited end (from the start without a limit or with `toFirst`, from the end with `toLast`).
public struct Query: Sendable, Hashable, CustomStringConvertible {
    /// The node whose children are asked.
    public let path: Path
    /// What the children are sorted by.
    public private(set) var ordering: QueryOrdering = .key
    /// The lowest admitted ordering value, if any.
    public private(set) var start: QueryBound?
    /// The highest admitted ordering value, if any.
    public private(set) var end: QueryBound?
    /// What each admitted child satisfies, if anything.
    public private(set) var predicate: QueryPredicate?
    /// Which end is kept, and how much of it.
    public private(set) var limit: QueryLimit?
    /// Children skipped at the limited end.
    public private(set) var offset: Int = 0
    /// True once an ordering was asked for (a second is an error, even of the same kind).
    public private(set) var isOrderingExplicit = false
    /// True once an offset was given (a second is an error).
    public private(set) var isOffsetExplicit = false

    /// A query of every child of the node at `path`, by key.
    public init(path: Path) { self.path = path }

    // MARK: - Ordering

    /// Orders the children by key (``KeyOrder``), as a query does by default.
    ///
    /// - Throws: ``QueryError/orderingTwice(first:second:)``; ``QueryError/invalidBound(reason:)`` when a
    ///   bound already set does not fit.
    public func orderedByKey() throws -> Query { try ordered(.key) }

    /// Orders the children by their own values, in Firebase's order of mixed types (``ValueOrder``).
    ///
    /// - Throws: ``QueryError/orderingTwice(first:second:)``.
    public func orderedByValue() throws -> Query { try ordered(.value) }

    /// Orders the children by the value at `field` below each (`"meta/score"`); a child without one sorts
    /// as null, first.
    ///
    /// - Throws: ``QueryError/orderingTwice(first:second:)``, ``QueryError/invalidChildPath(path:reason:)``.
    public func orderedByChild(_ field: QueryField) throws -> Query {
        try field.validate(collectionDepth: path.depth)
        return try ordered(.child(field))
    }

    private func ordered(_ ordering: QueryOrdering) throws -> Query {
        guard !isOrderingExplicit else { throw QueryError.orderingTwice(first: self.ordering, second: ordering) }
        var query = self
        query.ordering = ordering
        query.isOrderingExplicit = true
        try query.checkBounds()
        return query
    }

    // MARK: - Range

    /// Admits only children whose ordering value is `value` or after it; among those equal to `value`,
    /// only keys from `key` on when given.
    ///
    /// ```swift
    /// try query.orderedByChild("score").starting(at: .int(10))            // score >= 10
    /// try query.orderedByChild("score").starting(at: .int(10), key: "k")  // (score, key) >= (10, "k")
    /// ```
    /// - Throws: ``QueryError/boundTwice(bound:)``, ``QueryError/invalidBound(reason:)``.
    public func starting(at value: Value, key: String? = nil) throws -> Query {
        guard start == nil else { throw QueryError.boundTwice(bound: "starting(at:)") }
        var query = self
        query.start = try Self.bound(value, key: key)
        try query.checkBounds()
        return query
    }

    /// Admits only children whose ordering value is `value` or before it; among those equal to `value`,
    /// only keys up to `key` when given.
    ///
    /// - Throws: ``QueryError/boundTwice(bound:)``, ``QueryError/invalidBound(reason:)``.
    public func ending(at value: Value, key: String? = nil) throws -> Query {
        guard end == nil else { throw QueryError.boundTwice(bound: "ending(at:)") }
        var query = self
        query.end = try Self.bound(value, key: key)
        try query.checkBounds()
        return query
    }

    /// Admits only children whose ordering value is `value` (and whose key is `key` when given): both
    /// bounds at once.
    ///
    /// - Throws: ``QueryError/boundTwice(bound:)``, ``QueryError/invalidBound(reason:)``.
    public func equal(to value: Value, key: String? = nil) throws -> Query {
        guard start == nil, end == nil else { throw QueryError.boundTwice(bound: "equal(to:)") }
        var query = self
        let bound = try Self.bound(value, key: key)
        query.start = bound
        query.end = bound
        try query.checkBounds()
        return query
    }

    private static func bound(_ value: Value, key: String?) throws -> QueryBound {
        switch value {
        case .object: throw QueryError.invalidBound(reason: "a bound is a scalar value, not an object")
        case .double(let number) where !number.isFinite: throw QueryError.invalidBound(reason: "numbers are finite")
        case .string(let text) where text.utf8.count > CoreLimits.stringBytesMax:
            throw QueryError.invalidBound(reason: "the string is longer than \(CoreLimits.stringBytesMax) bytes")
        default: break
        }
        // -0.0 and 0.0 sort alike; the canonical zero keeps equal queries equal and encodable.
        let canonical: Value = if case .double(let number) = value, number == 0 { .double(0) } else { value }
        guard let key else { return QueryBound(value: canonical) }
        do {
            return QueryBound(value: canonical, key: try Key(validating: key))
        } catch let error as CoreError {
            throw QueryError.invalidBound(reason: "the tie key is not a key: \(error)")
        }
    }

    /// With the key ordering, bounds are keys: strings, without a tie key.
    private func checkBounds() throws {
        guard ordering == .key else { return }
        for bound in [start, end].compactMap({ $0 }) {
            guard case .string(let text) = bound.value else {
                throw QueryError.invalidBound(reason: "ordered by key, a bound is a key (a string)")
            }
            guard bound.key == nil else {
                throw QueryError.invalidBound(reason: "ordered by key, a bound takes no tie key")
            }
            guard (try? Key.validate(text)) != nil else {
                throw QueryError.invalidBound(reason: "ordered by key, the bound \"\(text.prefix(80))\" is not a key")
            }
        }
    }

    // MARK: - Predicate

    /// Admits only children for which `predicate` holds; a second call joins the two with `&&`.
    ///
    /// ```swift
    /// try query.where(QueryField("status") == .string("open") && QueryField("meta/score") > .int(3))
    /// ```
    /// - Throws: ``QueryError/invalidChildPath(path:reason:)``, ``QueryError/invalidComparand(field:reason:)``,
    ///   ``QueryError/predicateTooLarge(nodes:depth:)``.
    public func `where`(_ predicate: QueryPredicate) throws -> Query {
        let joined = self.predicate.map { QueryPredicate.and($0, predicate) } ?? predicate
        try joined.validate(collectionDepth: path.depth)
        var query = self
        query.predicate = joined
        return query
    }

    // MARK: - Window

    /// Keeps the first `count` children that pass the range and the predicate.
    ///
    /// - Throws: ``QueryError/limitTwice``, ``QueryError/limitNotPositive(_:)``,
    ///   ``QueryError/limitTooLarge(count:max:)``.
    public func limit(toFirst count: Int) throws -> Query { try limited(.first(count)) }

    /// Keeps the last `count` children that pass the range and the predicate (returned in ascending order).
    ///
    /// - Throws: ``QueryError/limitTwice``, ``QueryError/limitNotPositive(_:)``,
    ///   ``QueryError/limitTooLarge(count:max:)``.
    public func limit(toLast count: Int) throws -> Query { try limited(.last(count)) }

    private func limited(_ limit: QueryLimit) throws -> Query {
        guard self.limit == nil else { throw QueryError.limitTwice }
        guard limit.count > 0 else { throw QueryError.limitNotPositive(limit.count) }
        guard limit.count <= CoreLimits.queryLimitMax else {
            throw QueryError.limitTooLarge(count: limit.count, max: CoreLimits.queryLimitMax)
        }
        var query = self
        query.limit = limit
        return query
    }

    /// Skips `count` children at the limited end: from the start, or from the end with `limit(toLast:)`.
    ///
    /// - Throws: ``QueryError/offsetTwice``, ``QueryError/offsetOutOfRange(count:max:)``.
    public func offset(_ count: Int) throws -> Query {
        guard !isOffsetExplicit else { throw QueryError.offsetTwice }
        guard count >= 0, count <= CoreLimits.queryOffsetMax else {
            throw QueryError.offsetOutOfRange(count: count, max: CoreLimits.queryOffsetMax)
        }
        var query = self
        query.offset = count
        query.isOffsetExplicit = true
        return query
    }

    /// The same question asked of another node (a query read from the wire for a node given apart, a typed
    /// collection at another path). The child paths are checked again for the new depth.
    ///
    /// - Throws: ``QueryError/invalidChildPath(path:reason:)``.
    public func moved(to path: Path) throws -> Query {
        var query = Query(path: path)
        query.ordering = ordering
        query.isOrderingExplicit = isOrderingExplicit
        query.start = start
        query.end = end
        query.predicate = predicate
        query.limit = limit
        query.offset = offset
        query.isOffsetExplicit = isOffsetExplicit
        if case .child(let field) = ordering { try field.validate(collectionDepth: path.depth) }
        try predicate?.validate(collectionDepth: path.depth)
        return query
    }

    public var description: String {
        var parts = ["query \(path) \(ordering)"]
        if let start { parts.append("from \(start.value.jsonString())\(start.key.map { " key \($0)" } ?? "")") }
        if let end { parts.append("to \(end.value.jsonString())\(end.key.map { " key \($0)" } ?? "")") }
        if let predicate { parts.append("where \(predicate)") }
        switch limit {
        case .first(let count)?: parts.append("first \(count)")
        case .last(let count)?: parts.append("last \(count)")
        case nil: break
        }
        if offset > 0 { parts.append("offset \(offset)") }
        return parts.joined(separator: " ")
    }
}
