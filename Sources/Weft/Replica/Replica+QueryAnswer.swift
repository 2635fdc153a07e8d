import WeftCore

extension Replica {
    /// The result of `query` now, read through an index of the queried collection when one serves it
    /// (``defineIndex(on:orderedBy:progress:)``), else by scanning its children: the road the binary
    /// protocol's queries take, for the daemon's other faces (REST).
    ///
    /// ```swift
    /// let top = replica.answer(try Query(path: try Path("/posts")).orderedByChild(QueryField("score")))
    /// ```
    public func answer(_ query: Query) -> QueryResult {
        queryView().run(query).result
    }
}
