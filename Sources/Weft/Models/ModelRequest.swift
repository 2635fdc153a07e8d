import Foundation
import WeftCore

/// A typed query made untyped: the ``DataQuery`` the query layer runs (through an index when one fits),
/// and what is done to its result to give the typed order and window.
///
/// - No ordering: by key (push ids: creation order), the limit in the query.
/// - Comparisons of the first ordering's field (`>`, `>=`, `<`, `<=`, `==`, among the predicate's
///   top-level `&&`) also set the query's range, which an index on that field reads directly.
/// - One ordering: `orderedByChild` on its field; ascending takes `limit(toFirst:)`, descending
///   `limit(toLast:)` and reverses the rows (ties by key, descending).
/// - More orderings: the first in the query (to narrow through its index), the rows sorted by all of
///   them (ties by key, in the last ordering's direction), then the limit.
struct ModelRequest: Sendable, Hashable {
    let query: DataQuery
    let orders: [FieldOrder]
    let limit: Int?

    init(collection: DataNode, predicate: QueryPredicate?, limit: Int?, orders: [FieldOrder]) throws {
        if let limit, limit < 1 {
            throw WeftError(.invalidQuery, "a limit is at least 1; got \(limit)", path: collection.path)
        }
        var query = collection.query
        if let first = orders.first {
            guard !first.keys.isEmpty else {
                throw WeftError(.invalidQuery, "an ordering names a field", path: collection.path)
            }
            query = try query.orderedByChild(first.path)
        }
        if let first = orders.first, let predicate {
            // Comparisons of the ordering's field become the query's range too, so an index on it reads
            // only the entries in range; the predicate stays, to refuse the other kinds the range admits.
            let field = QueryField(keys: first.keys)
            let (lower, upper) = Self.bounds(of: predicate, on: field)
            if let lower { query = try query.starting(at: lower) }
            if let upper { query = try query.ending(at: upper) }
        }
        if let predicate { query = try query.where(predicate) }
        if let limit, orders.count <= 1 {
            query = try (orders.first?.isAscending ?? true) ? query.limit(toFirst: limit) : query.limit(toLast: limit)
        }
        self.query = query
        self.orders = orders
        self.limit = limit
    }

    /// The values a conjunct of `predicate` bounds `field` from below and from above with (the first of
    /// each): `>`, `>=` and `==` give a lower bound, `<`, `<=` and `==` an upper one.
    static func bounds(of predicate: QueryPredicate, on field: QueryField) -> (lower: Value?, upper: Value?) {
        var lower: Value?
        var upper: Value?
        for conjunct in predicate.conjuncts {
            guard case let .compare(compared, comparison, value) = conjunct, compared == field, !value.isNull else {
                continue
            }
            switch comparison {
            case .greater, .greaterOrEqual: lower = lower ?? value
            case .less, .lessOrEqual: upper = upper ?? value
            case .equal:
                lower = lower ?? value
                upper = upper ?? value
            case .notEqual: break
            }
        }
        return (lower, upper)
    }

    /// The typed result of the query's result.
    func arrange(_ result: QueryResult) -> [QueryRow] {
        switch orders.count {
        case 0: return result.rows
        case 1: return orders[0].isAscending ? result.rows : result.rows.reversed()
        default:
            let lastAscending = orders[orders.count - 1].isAscending
            let sorted = result.rows.sorted { left, right in
                for order in orders {
                    let comparison = ValueOrder.compare(
                        left.value.value(at: order.keys[...]), right.value.value(at: order.keys[...]))
                    if comparison != 0 { return order.isAscending ? comparison < 0 : comparison > 0 }
                }
                return lastAscending
                    ? KeyOrder.precedes(left.key.text, right.key.text) : KeyOrder.precedes(right.key.text, left.key.text)
            }
            return limit.map { Array(sorted.prefix($0)) } ?? sorted
        }
    }

    /// Runs the query now.
    func fetch<M: Model>(_ type: M.Type) throws -> FetchedResult<M> {
        FetchedResult(collection: query.node, rows: arrange(try query.currentRun().result), request: self)
    }

    func result<M: Model>(of event: QueryEvent, as type: M.Type) -> FetchedResult<M> {
        FetchedResult(collection: query.node, rows: arrange(event.result), request: self)
    }
}

/// Builds a typed query of `M`'s collection, then makes `Output` of it: a ``FetchedResult`` for
/// `replica.fetch(for:)`, a publisher for `replica.publisher(for:)`, a sequence for `replica.changes(for:)`.
///
/// ```swift
/// let top = try replica.fetch(for: Post.self).where(\.$priority > 100, limit: 20, orderBy: [\.$title.ascending])
/// let all = try replica.fetch(for: Post.self).all(orderBy: [\.$createdAt.descending])
/// ```
public struct ModelQuery<M: Model, Output> {
    let access: ReplicaAccess
    let make: (ModelRequest) throws -> Output

    /// The objects for which `predicate` holds, ordered by `orderBy` (by key when empty), at most `limit`.
    ///
    /// - Parameters:
    ///   - predicate: key-path comparisons joined with `&&`, `||`, `!` (see ``ModelPredicate``).
    ///   - limit: the most objects (nil: no limit).
    ///   - orderBy: `\.$field.ascending` or `\.$field.descending`, most significant first.
    /// - Throws: `WeftError` with code `invalidQuery` (a limit below 1, a predicate too large, …),
    ///   `invalidPath` when the type's `collection` is not a valid path, or the load's failure.
    public func `where`(
        _ predicate: ModelPredicate<M>, limit: Int? = nil, orderBy: [KeyPath<M, FieldOrder>] = []
    ) throws -> Output {
        try make(request(predicate: predicate, limit: limit, orderBy: orderBy))
    }

    /// Every object, ordered by `orderBy` (by key when empty), at most `limit`.
    ///
    /// - Throws: as ``where(_:limit:orderBy:)``.
    public func all(limit: Int? = nil, orderBy: [KeyPath<M, FieldOrder>] = []) throws -> Output {
        try make(request(predicate: nil, limit: limit, orderBy: orderBy))
    }

    private func request(predicate: ModelPredicate<M>?, limit: Int?, orderBy: [KeyPath<M, FieldOrder>]) throws
        -> ModelRequest
    {
        let schema = ModelSchema.of(M.self)
        let orders = orderBy.map { schema.field(at: $0, in: M.self) }
        let collection = try M.collectionNode(in: access)
        let built = try predicate.map { try $0.build(access.state.coding) }
        do {
            return try ModelRequest(collection: collection, predicate: built, limit: limit, orders: orders)
        } catch let error as QueryError {
            throw WeftError(error, path: collection.path)
        }
    }
}

extension Replica {
    /// A typed query of `type`'s collection (Dflat's `fetch(for:)`), answered now.
    ///
    /// ```swift
    /// let posts = try replica.fetch(for: Post.self).where(\.$priority > 100 && \.$color == .red, limit: 20)
    /// try replica.fetch(for: Post.self).explain(\.$priority > 100)   // index range on priority: …
    /// ```
    public func fetch<M: Model>(for type: M.Type) -> ModelQuery<M, FetchedResult<M>> {
        ModelQuery(access: access) { try $0.fetch(M.self) }
    }

    /// The road a typed query takes (through which index, reading how many entries), found by running it.
    ///
    /// ```swift
    /// try replica.explain(for: Post.self).where(\.$priority > 100)   // index candidates on priority: …
    /// ```
    public func explain<M: Model>(for type: M.Type) -> ModelQuery<M, QueryPlan> {
        ModelQuery(access: access) { try $0.query.explain() }
    }
}
