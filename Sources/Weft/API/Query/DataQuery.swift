import Dispatch
import WeftCore

/// A query over the children of a node: Firebase's `orderByChild`/`startAt`/`limitToLast` and Dflat's
/// `where`, built from a ``DataNode`` and read in the three forms of the API (async, callback, Combine),
/// once or live.
///
/// ```swift
/// let posts = replica.root / "posts"
/// let top = try posts!.orderedByChild("meta/score").starting(at: 10).limit(toLast: 20)
/// let result = try await top.fetch()                  // QueryResult: [(key, value)] in score order
/// let token = top.subscribe { change in … }           // .initial(result), then .updated(result, changes)
/// print(top.explain())                                 // index range on meta/score: read 20 entries
/// ```
///
/// Each builder checks its rule at once and throws `WeftError` with code `invalidQuery` naming what is
/// wrong (two orderings, a limit of 0, a child path no key may hold, …). The query model is WeftCore's
/// ``Query``; see `Docs/QUERIES.md`.
public struct DataQuery: Sendable, Hashable, CustomStringConvertible {
    /// The node whose children the query asks.
    public let node: DataNode
    /// The query itself.
    public let query: Query

    init(node: DataNode, query: Query) {
        self.node = node
        self.query = query
    }

    var access: ReplicaAccess { node.access }

    public var description: String { query.description }

    /// Applies a ``Query`` builder, turning its error into `WeftError(.invalidQuery)`.
    private func building(_ step: (Query) throws -> Query) throws -> DataQuery {
        do {
            return DataQuery(node: node, query: try step(query))
        } catch let error as QueryError {
            throw WeftError(error, path: node.path)
        }
    }

    // MARK: - Builders

    /// Orders the children by key (the default). See ``Query/orderedByKey()``.
    public func orderedByKey() throws -> DataQuery { try building { try $0.orderedByKey() } }

    /// Orders the children by their values. See ``Query/orderedByValue()``.
    public func orderedByValue() throws -> DataQuery { try building { try $0.orderedByValue() } }

    /// Orders the children by the value at `path` below each (`"meta/score"`).
    /// See ``Query/orderedByChild(_:)``.
    public func orderedByChild(_ path: String) throws -> DataQuery {
        try building { try $0.orderedByChild(QueryField(path)) }
    }

    /// Keeps the children from `value` on (and, among equal values, from `key` on).
    /// See ``Query/starting(at:key:)``.
    public func starting(at value: Value, key: String? = nil) throws -> DataQuery {
        try building { try $0.starting(at: value, key: key) }
    }

    /// Keeps the children up to `value` (and, among equal values, up to `key`).
    /// See ``Query/ending(at:key:)``.
    public func ending(at value: Value, key: String? = nil) throws -> DataQuery {
        try building { try $0.ending(at: value, key: key) }
    }

    /// Keeps the children whose ordering value is `value` (and key is `key`). See ``Query/equal(to:key:)``.
    public func equal(to value: Value, key: String? = nil) throws -> DataQuery {
        try building { try $0.equal(to: value, key: key) }
    }

    /// Keeps the children for which `predicate` holds; repeated calls join with `&&`.
    ///
    /// ```swift
    /// try node.query.where(QueryField("status") == "open" && QueryField("meta/score") > 3)
    /// ```
    public func `where`(_ predicate: QueryPredicate) throws -> DataQuery {
        try building { try $0.where(predicate) }
    }

    /// Keeps the first `count` children. See ``Query/limit(toFirst:)``.
    public func limit(toFirst count: Int) throws -> DataQuery { try building { try $0.limit(toFirst: count) } }

    /// Keeps the last `count` children (still in ascending order). See ``Query/limit(toLast:)``.
    public func limit(toLast count: Int) throws -> DataQuery { try building { try $0.limit(toLast: count) } }

    /// Skips `count` children at the limited end. See ``Query/offset(_:)``.
    public func offset(_ count: Int) throws -> DataQuery { try building { try $0.offset(count) } }

    // MARK: - One-shot reads

    /// The query's result now: its children in order, each with its whole value.
    ///
    /// ```swift
    /// for row in try await query.fetch() { print(row.key, row.value) }
    /// let posts = try await query.fetch().decoded(as: Post.self, using: replica.jsonDecoder)
    /// ```
    /// - Throws: `WeftError` when the replica's load failed.
    public func fetch() async throws -> QueryResult { try currentRun().result }

    /// ``fetch()`` with a completion on `queue` (nil: the replica's callback queue).
    public func fetch(
        queue: DispatchQueue? = nil, then completion: @escaping @Sendable (Result<QueryResult, WeftError>) -> Void
    ) {
        node.deliver(Result { try currentRun().result }, on: queue, to: completion)
    }

    /// The road the query takes now (through which index, reading how many entries, or a scan of how
    /// many children), found by running it.
    ///
    /// ```swift
    /// try query.explain()   // index range on meta/score: read 20 entries
    /// ```
    public func explain() throws -> QueryPlan { try currentRun().plan }

    func currentRun() throws -> QueryRun {
        let view = access.backend.queryView()
        if let failure = access.backend.loadFailure { throw failure }
        return view.run(query)
    }
}

extension DataNode {
    /// A query of every child of this node, by key: the start of a query chain.
    ///
    /// ```swift
    /// let recent = try node.query.orderedByChild("date").limit(toLast: 10)
    /// ```
    public var query: DataQuery { DataQuery(node: self, query: Query(path: location)) }

    /// `query.orderedByKey()`.
    public func orderedByKey() throws -> DataQuery { try query.orderedByKey() }
    /// `query.orderedByValue()`.
    public func orderedByValue() throws -> DataQuery { try query.orderedByValue() }
    /// `query.orderedByChild(path)`: Firebase's `orderByChild`.
    public func orderedByChild(_ path: String) throws -> DataQuery { try query.orderedByChild(path) }
    /// `query.starting(at:key:)`.
    public func starting(at value: Value, key: String? = nil) throws -> DataQuery {
        try query.starting(at: value, key: key)
    }
    /// `query.ending(at:key:)`.
    public func ending(at value: Value, key: String? = nil) throws -> DataQuery { try query.ending(at: value, key: key) }
    /// `query.equal(to:key:)`.
    public func equal(to value: Value, key: String? = nil) throws -> DataQuery { try query.equal(to: value, key: key) }
    /// `query.where(predicate)`.
    public func `where`(_ predicate: QueryPredicate) throws -> DataQuery { try query.where(predicate) }
    /// `query.limit(toFirst:)`.
    public func limit(toFirst count: Int) throws -> DataQuery { try query.limit(toFirst: count) }
    /// `query.limit(toLast:)`.
    public func limit(toLast count: Int) throws -> DataQuery { try query.limit(toLast: count) }
}

extension WeftError {
    /// The public form of a query's validation error.
    init(_ error: QueryError, path: String) {
        self.init(.invalidQuery, error.description, path: path)
    }
}
