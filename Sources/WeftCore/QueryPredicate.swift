/// A path below each child of a queried node, such as `meta/score`: what a predicate or an ordering reads.
///
/// Made from text (`"meta/score"` as a literal, or ``init(_:)``), split on `/` with empty segments
/// ignored; the segments are checked when the field joins a query (``Query/where(_:)``,
/// ``Query/orderedByChild(_:)``), which throws ``QueryError/invalidChildPath(path:reason:)`` for one no
/// key may hold.
///
/// ```swift
/// let score: QueryField = "meta/score"
/// let open = QueryField("status") == .string("open")
/// ```
public struct QueryField: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The keys from the child down, not yet validated.
    public let keys: [Key]

    /// A field from its text; see the type's summary for when it is checked.
    public init(_ text: String) {
        keys = text.split(separator: "/", omittingEmptySubsequences: true).map { Key(unchecked: String($0)) }
    }

    /// A field from keys already valid (decoded, or taken from a valid path).
    public init(keys: [Key]) { self.keys = keys }

    public init(stringLiteral value: String) { self.init(value) }

    /// The field as text, `meta/score`.
    public var description: String { keys.map(\.text).joined(separator: "/") }

    /// Checks every key and the depth a child's node at this field would have below a node at
    /// `collectionDepth` (the child adds one level).
    ///
    /// - Throws: ``QueryError/invalidChildPath(path:reason:)``.
    func validate(collectionDepth: Int) throws {
        guard !keys.isEmpty else {
            throw QueryError.invalidChildPath(path: description, reason: "a child path names at least one key")
        }
        for key in keys {
            guard key.text != ".", key.text != ".." else {
                throw QueryError.invalidChildPath(path: description, reason: "\"\(key.text)\" would leave the child")
            }
            do { try Key.validate(key.text) } catch let error as CoreError {
                throw QueryError.invalidChildPath(path: description, reason: error.description)
            }
        }
        let depth = collectionDepth + 1 + keys.count
        guard depth <= CoreLimits.pathDepthMax else {
            throw QueryError.invalidChildPath(
                path: description,
                reason: "it reaches \(depth) levels below the root; at most \(CoreLimits.pathDepthMax) exist")
        }
    }
}

/// How a comparison predicate compares a field with its value.
public enum QueryComparison: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case equal = 0, notEqual, less, lessOrEqual, greater, greaterOrEqual

    public var description: String {
        switch self {
        case .equal: return "=="
        case .notEqual: return "!="
        case .less: return "<"
        case .lessOrEqual: return "<="
        case .greater: return ">"
        case .greaterOrEqual: return ">="
        }
    }
}

/// A condition on each child of a queried node (`where` in Dflat's words), read at child paths.
///
/// - `==` holds when the field's node equals the value (numbers by numeric value, so `2 == 2.0`; `== null`
///   holds for a missing node); `!=` is its negation.
/// - `<`, `<=`, `>`, `>=` hold only between values of one kind (numbers with numbers, strings with strings
///   by UTF-8 bytes, booleans with booleans, false first): a missing node is never less than 10.
/// - `in` holds when `==` holds for one of the listed values; `exists` when the node is not null.
/// - `&&`, `||`, `!` combine predicates.
///
/// ```swift
/// let hot = QueryField("status") == .string("open") && QueryField("meta/score") >= .int(10)
/// let tagged = QueryField("tag").isIn([.string("a"), .string("b")]) || !QueryField("draft").exists
/// ```
public indirect enum QueryPredicate: Sendable, Hashable, CustomStringConvertible {
    case compare(QueryField, QueryComparison, Value)
    case isIn(QueryField, [Value])
    case exists(QueryField)
    case and(QueryPredicate, QueryPredicate)
    case or(QueryPredicate, QueryPredicate)
    case not(QueryPredicate)

    /// True when the predicate holds for a child whose value is `child`.
    public func holds(for child: Value) -> Bool {
        switch self {
        case let .compare(field, comparison, value):
            return Self.compare(child.value(at: field.keys[...]), comparison, value)
        case let .isIn(field, values):
            let node = child.value(at: field.keys[...])
            return values.contains { ValueOrder.compare(node, $0) == 0 }
        case let .exists(field): return !child.value(at: field.keys[...]).isNull
        case let .and(left, right): return left.holds(for: child) && right.holds(for: child)
        case let .or(left, right): return left.holds(for: child) || right.holds(for: child)
        case let .not(inner): return !inner.holds(for: child)
        }
    }

    /// `node comparison value` with the rules in the type's summary.
    static func compare(_ node: Value, _ comparison: QueryComparison, _ value: Value) -> Bool {
        switch comparison {
        case .equal: return ValueOrder.compare(node, value) == 0
        case .notEqual: return ValueOrder.compare(node, value) != 0
        default:
            guard kind(node) == kind(value), !node.isNull, !node.isObject else { return false }
            let order = ValueOrder.compare(node, value)
            switch comparison {
            case .less: return order < 0
            case .lessOrEqual: return order <= 0
            case .greater: return order > 0
            default: return order >= 0
            }
        }
    }

    /// The kind of a value for ordered comparisons: booleans are one kind here (two ranks in the mixed order).
    private static func kind(_ value: Value) -> Int {
        let rank = ValueOrder.rank(value)
        return rank == 2 ? 1 : rank
    }

    /// The predicates joined by `&&` at the top of this one, left to right (the first is the one an index
    /// may serve).
    public var conjuncts: [QueryPredicate] {
        if case let .and(left, right) = self { return left.conjuncts + right.conjuncts }
        return [self]
    }

    /// The fields this predicate reads.
    public var fields: [QueryField] {
        switch self {
        case let .compare(field, _, _), let .isIn(field, _), let .exists(field): return [field]
        case let .and(left, right), let .or(left, right): return left.fields + right.fields
        case let .not(inner): return inner.fields
        }
    }

    /// The number of nodes and the depth of the predicate.
    var size: (nodes: Int, depth: Int) {
        switch self {
        case .compare, .isIn, .exists: return (1, 1)
        case let .and(left, right), let .or(left, right):
            let (l, r) = (left.size, right.size)
            return (1 + l.nodes + r.nodes, 1 + max(l.depth, r.depth))
        case let .not(inner):
            let size = inner.size
            return (1 + size.nodes, 1 + size.depth)
        }
    }

    /// Checks the predicate's size, fields and comparands for a query on a node at `collectionDepth`.
    ///
    /// - Throws: ``QueryError``.
    func validate(collectionDepth: Int) throws {
        let size = self.size
        guard size.nodes <= CoreLimits.queryPredicateNodesMax, size.depth <= CoreLimits.queryPredicateDepthMax else {
            throw QueryError.predicateTooLarge(nodes: size.nodes, depth: size.depth)
        }
        try validateNodes(collectionDepth: collectionDepth)
    }

    private func validateNodes(collectionDepth: Int) throws {
        switch self {
        case let .compare(field, comparison, value):
            try field.validate(collectionDepth: collectionDepth)
            try Self.validate(comparand: value, field: field)
            if value.isNull, comparison != .equal, comparison != .notEqual {
                throw QueryError.invalidComparand(
                    field: field.description, reason: "null compares only with == and != (or use exists)")
            }
        case let .isIn(field, values):
            try field.validate(collectionDepth: collectionDepth)
            guard !values.isEmpty, values.count <= CoreLimits.queryInValuesMax else {
                throw QueryError.invalidComparand(
                    field: field.description,
                    reason: "in lists 1 to \(CoreLimits.queryInValuesMax) values, not \(values.count)")
            }
            for value in values { try Self.validate(comparand: value, field: field) }
        case let .exists(field): try field.validate(collectionDepth: collectionDepth)
        case let .and(left, right), let .or(left, right):
            try left.validateNodes(collectionDepth: collectionDepth)
            try right.validateNodes(collectionDepth: collectionDepth)
        case let .not(inner): try inner.validateNodes(collectionDepth: collectionDepth)
        }
    }

    private static func validate(comparand value: Value, field: QueryField) throws {
        switch value {
        case .object:
            throw QueryError.invalidComparand(field: field.description, reason: "a predicate compares with scalars")
        case .double(let number) where !number.isFinite:
            throw QueryError.invalidComparand(field: field.description, reason: "numbers are finite")
        case .string(let text) where text.utf8.count > CoreLimits.stringBytesMax:
            throw QueryError.invalidComparand(field: field.description, reason: "the string is too long")
        default: return
        }
    }

    public var description: String {
        switch self {
        case let .compare(field, comparison, value): return "\(field) \(comparison) \(value.jsonString())"
        case let .isIn(field, values): return "\(field) in [\(values.map { $0.jsonString() }.joined(separator: ", "))]"
        case let .exists(field): return "exists \(field)"
        case let .and(left, right): return "(\(left) && \(right))"
        case let .or(left, right): return "(\(left) || \(right))"
        case let .not(inner): return "!\(inner)"
        }
    }
}

// MARK: - Building predicates

extension QueryField {
    /// The field's node equals `value` (numbers by numeric value; `== .null` holds for a missing node).
    public static func == (field: QueryField, value: Value) -> QueryPredicate { .compare(field, .equal, value) }
    /// The field's node differs from `value`.
    public static func != (field: QueryField, value: Value) -> QueryPredicate { .compare(field, .notEqual, value) }
    /// The field's node is of `value`'s kind and below it.
    public static func < (field: QueryField, value: Value) -> QueryPredicate { .compare(field, .less, value) }
    /// The field's node is of `value`'s kind and at most it.
    public static func <= (field: QueryField, value: Value) -> QueryPredicate { .compare(field, .lessOrEqual, value) }
    /// The field's node is of `value`'s kind and above it.
    public static func > (field: QueryField, value: Value) -> QueryPredicate { .compare(field, .greater, value) }
    /// The field's node is of `value`'s kind and at least it.
    public static func >= (field: QueryField, value: Value) -> QueryPredicate {
        .compare(field, .greaterOrEqual, value)
    }
    /// The field's node equals one of `values`.
    public func isIn(_ values: [Value]) -> QueryPredicate { .isIn(self, values) }
    /// The field's node is not null.
    public var exists: QueryPredicate { .exists(self) }
}

extension QueryPredicate {
    /// Both hold.
    public static func && (left: QueryPredicate, right: QueryPredicate) -> QueryPredicate { .and(left, right) }
    /// Either holds.
    public static func || (left: QueryPredicate, right: QueryPredicate) -> QueryPredicate { .or(left, right) }
    /// It does not hold.
    public static prefix func ! (inner: QueryPredicate) -> QueryPredicate { .not(inner) }
}
