import Foundation
import WeftCore

/// An object of a typed query's result: its node and its value when the query ran, immutable and
/// `Sendable`, so results pass between threads (Dflat's fetched elements).
///
/// Its fields read as the model's do, through key paths to the model (`snapshot.title`), decoded from the
/// snapshot's value with the replica's coders; ``object`` is a frozen model reading the same value.
///
/// ```swift
/// let posts = try replica.fetch(for: Post.self).where(\.$priority > 100)
/// for post in posts { print(post.id, post.title, post.priority) }
/// let live = Post(node: posts[0].node)          // a live object of the same node
/// ```
@dynamicMemberLookup
public struct ModelSnapshot<M: Model>: Sendable, Hashable, Identifiable {
    /// The object's node.
    public let node: DataNode
    /// The object's whole value when the snapshot was taken.
    public let value: Value

    /// The object's key in its collection.
    public var id: String { node.key ?? "" }

    /// A frozen object reading the snapshot's value (a new one each time: it is not `Sendable`).
    public var object: M {
        let object = M()
        object.source = .frozen(node, value)
        return object
    }

    /// A field of the object, read from the snapshot: `snapshot.title`.
    public subscript<T>(dynamicMember keyPath: KeyPath<M, T>) -> T { object[keyPath: keyPath] }

    public static func == (lhs: ModelSnapshot, rhs: ModelSnapshot) -> Bool {
        lhs.node == rhs.node && lhs.value == rhs.value
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(node)
        hasher.combine(value)
    }
}

/// The result of a typed query: its objects in order, as ``ModelSnapshot``s (Dflat's `FetchedResult`).
/// A value, `Sendable`: it does not change when the replica does (subscribe to follow it).
///
/// ```swift
/// let top = try replica.fetch(for: Post.self).where(\.$priority > 100, limit: 20, orderBy: [\.$priority.descending])
/// print(top.count, top.first?.title ?? "-")
/// ```
public struct FetchedResult<M: Model>: RandomAccessCollection, Sendable, Hashable {
    /// The collection's node.
    let collection: DataNode
    /// The rows, in the result's order.
    let rows: [QueryRow]
    /// How the result was asked for (to follow it).
    let request: ModelRequest

    public var startIndex: Int { rows.startIndex }
    public var endIndex: Int { rows.endIndex }

    public subscript(position: Int) -> ModelSnapshot<M> {
        let row = rows[position]
        guard let node = collection.child(key: row.key) else {
            preconditionFailure("a child in the tree has a valid path: \(collection.path)/\(row.key)")
        }
        return ModelSnapshot(node: node, value: row.value)
    }

    /// The objects' keys, in order.
    public var ids: [String] { rows.map(\.key.text) }

    /// The result as an untyped ``QueryResult`` (the same rows).
    public var queryResult: QueryResult { QueryResult(rows: rows) }

    public static func == (lhs: FetchedResult, rhs: FetchedResult) -> Bool {
        lhs.collection == rhs.collection && lhs.rows == rhs.rows
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(collection)
        hasher.combine(rows)
    }
}
