import Foundation
import WeftCore

extension QueryResult {
    /// The rows' values decoded as `T` with `decoder`, each with its key, in order.
    ///
    /// ```swift
    /// let posts = try await query.fetch().decoded(as: Post.self)   // [(key: "p1", value: Post(…)), …]
    /// ```
    /// - Throws: `WeftError` with code `decodingFailed`, naming the row's key.
    public func decoded<T: Decodable>(
        as type: T.Type = T.self, using decoder: JSONDecoder = JSONDecoder()
    ) throws -> [(key: String, value: T)] {
        let coding = ValueCoding(encoder: JSONEncoder(), decoder: decoder)
        return try rows.map { row in (row.key.text, try coding.decode(type, from: row.value, path: row.key.text)) }
    }

    /// The rows as `(key, value)` pairs, keys as text.
    public var pairs: [(key: String, value: Value)] { rows.map { ($0.key.text, $0.value) } }
}

extension DataQuery {
    /// The query's result now, each row decoded as `T` with the replica's decoder.
    ///
    /// ```swift
    /// for (key, post) in try await query.fetch(as: Post.self) { print(key, post.title) }
    /// ```
    /// - Throws: `WeftError` with code `decodingFailed`, or the load's failure.
    public func fetch<T: Decodable>(as type: T.Type) async throws -> [(key: String, value: T)] {
        let coding = access.state.coding
        return try currentRun().result.rows.map { row in
            (row.key.text, try coding.decode(type, from: row.value, path: node.path + "/" + row.key.text))
        }
    }

    /// The Combine form of the one-shot reads.
    public var forCombine: CombineWrapper { CombineWrapper(query: self) }
}

extension SnapshotReader {
    /// The query's result in this snapshot: the same state as the snapshot's path reads, through the
    /// indexes as they were when it was taken (Dflat's `fetchWithinASnapshot`).
    ///
    /// ```swift
    /// let (top, count) = try replica.readSnapshot { reader in
    ///     (try reader.fetch(topPosts), try reader.childrenKeys(of: posts).count)
    /// }
    /// ```
    /// - Throws: `WeftError` with code `invalidPath` when the query belongs to another replica.
    public func fetch(_ query: DataQuery) throws -> QueryResult {
        try access.checkOwns(query.node)
        return QueryView(tree: tree, indexes: indexes).run(query.query).result
    }
}
