/// Why a query is invalid. The ``Query`` builders throw these as soon as a call breaks a rule, so an
/// invalid query is never built; ``QueryCodec`` throws them for encoded queries that break one.
///
/// ```swift
/// try Query(path: posts).orderedByKey().orderedByValue()   // throws .orderingTwice
/// try Query(path: posts).limit(toFirst: 0)                  // throws .limitNotPositive(0)
/// ```
public enum QueryError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A second ordering was asked for; a query has one.
    case orderingTwice(first: QueryOrdering, second: QueryOrdering)
    /// `starting(at:)`, `ending(at:)` or `equal(to:)` was given where a bound is already set (`bound`
    /// names the call).
    case boundTwice(bound: String)
    /// A bound's value or tie key does not fit the ordering (a non-string bound or a tie key with
    /// ``QueryOrdering/key``, an object bound, a tie key that is not a valid key).
    case invalidBound(reason: String)
    /// A second `limit(toFirst:)` or `limit(toLast:)`.
    case limitTwice
    /// A limit of zero or less.
    case limitNotPositive(Int)
    /// A limit above ``CoreLimits/queryLimitMax``.
    case limitTooLarge(count: Int, max: Int)
    /// A second `offset(_:)`.
    case offsetTwice
    /// An offset below zero or above ``CoreLimits/queryOffsetMax``.
    case offsetOutOfRange(count: Int, max: Int)
    /// A child path (of an ordering or a predicate) that no child's key may hold: empty, a segment that is
    /// not a valid key, or deeper than ``CoreLimits/pathDepthMax`` below the queried node.
    case invalidChildPath(path: String, reason: String)
    /// A predicate compares with a value it cannot (an object, null with `<`, an empty or too long `in`).
    case invalidComparand(field: String, reason: String)
    /// A predicate with more than ``CoreLimits/queryPredicateNodesMax`` nodes or nested deeper than
    /// ``CoreLimits/queryPredicateDepthMax``.
    case predicateTooLarge(nodes: Int, depth: Int)

    public var description: String {
        switch self {
        case let .orderingTwice(first, second):
            return "a query has one ordering: it is ordered \(first) and was asked to order \(second)"
        case let .boundTwice(bound): return "\(bound) was called where the query already has that bound"
        case let .invalidBound(reason): return "invalid bound: \(reason)"
        case .limitTwice: return "a query has one limit: limit(toFirst:) or limit(toLast:), once"
        case let .limitNotPositive(count): return "a limit must be at least 1, not \(count)"
        case let .limitTooLarge(count, max): return "a limit of \(count) is above the largest allowed, \(max)"
        case .offsetTwice: return "a query has one offset"
        case let .offsetOutOfRange(count, max): return "an offset of \(count) is outside 0...\(max)"
        case let .invalidChildPath(path, reason): return "invalid child path \"\(path.prefix(200))\": \(reason)"
        case let .invalidComparand(field, reason): return "invalid comparison on \(field.prefix(200)): \(reason)"
        case let .predicateTooLarge(nodes, depth):
            return "the predicate has \(nodes) nodes nested \(depth) deep; at most "
                + "\(CoreLimits.queryPredicateNodesMax) nodes and \(CoreLimits.queryPredicateDepthMax) levels"
        }
    }
}
