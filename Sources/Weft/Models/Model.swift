import Foundation
import WeftCore

/// A typed object stored at one node of a replica (`/posts/<id>`), whose fields are child nodes: the base
/// class of every model (the Realtime ORM's `Object`).
///
/// Declare fields with the property wrappers of this module; each maps to the child named after the
/// property (or the key given to the wrapper):
///
/// ```swift
/// final class Post: Model {
///     override class var collection: String { "posts" }
///     @Property var title: String
///     @Property(key: "prio") var priority: Int = 0
///     @ReadonlyProperty var createdAt: Date
///     @SharedProperty var likes: Int
///     @Values var tags: [String]
///     @Reference var author: Person?
/// }
///
/// let post = try Post(id: "p1", in: replica)    // bound to /posts/p1: fields read the replica
/// print(post.title, post.likes)
/// post.title = "Hello"                           // a change, kept on the object until saved
/// let transaction = replica.transaction()
/// try post.save(in: transaction)
/// try await transaction.commit()
/// ```
///
/// A model is either *detached* (made with `init()`, not yet inserted: its fields hold what was assigned),
/// *live* (bound to a node: its fields read the replica's current state, plus the changes not yet saved)
/// or *frozen* (the object of a ``ModelSnapshot``: its fields read the snapshot). Models are not
/// `Sendable`: pass a ``ModelSnapshot`` (or the node) between threads.
open class Model {
    /// Where the fields read from.
    var source: ModelSource = .detached

    /// A detached object: its fields hold their defaults until assigned, and ``insert(in:)`` stores it.
    ///
    /// ```swift
    /// let post = Post()
    /// post.title = "Draft"
    /// ```
    public required init() {}

    /// An object bound to `node`: its fields read the node's children.
    ///
    /// ```swift
    /// let post = Post(node: (replica.root / "posts/p1")!)
    /// ```
    public convenience init(node: DataNode) {
        self.init()
        source = .live(node)
    }

    /// The object stored under `id` in the type's ``collection`` of `replica`.
    ///
    /// ```swift
    /// let post = try Post(id: "p1", in: replica)    // /posts/p1
    /// ```
    /// - Throws: `WeftError` with code `invalidKey` when `id` is not a valid key.
    public convenience init(id: String, in replica: Replica) throws {
        let node = try Self.collectionNode(in: replica.access).childNode(validating: id)
        self.init(node: node)
    }

    /// The path of the node holding this type's objects, relative to the root (default: the type's name
    /// with a lowercase initial, plus `s`: `Post` → `posts`). Override it to choose another.
    ///
    /// ```swift
    /// override class var collection: String { "blog/posts" }
    /// ```
    open class var collection: String {
        let name = String(describing: self)
        return name.prefix(1).lowercased() + name.dropFirst() + "s"
    }

    /// The node the object is stored at; nil while detached.
    public var node: DataNode? {
        switch source {
        case .detached: return nil
        case .live(let node), .frozen(let node, _): return node
        }
    }

    /// The object's key (its id in the collection); nil while detached.
    public var id: String? { node?.key }

    /// True for the object of a snapshot: its fields read the snapshot, and it cannot be saved.
    public var isFrozen: Bool {
        if case .frozen = source { return true }
        return false
    }

    /// The collection node of this type in a replica.
    static func collectionNode(in access: ReplicaAccess) throws -> DataNode {
        guard let node = access.root.relativeNode(for: collection) else {
            throw WeftError(
                .invalidPath, "\(self).collection \"\(collection.prefix(200))\" is not a valid path",
                path: collection)
        }
        return node
    }

    /// The value of the field under `key`: nil while detached (the field then holds what was assigned),
    /// null when the node has no such child.
    func storedValue(key: Key) -> Value? {
        switch source {
        case .detached: return nil
        case .live(let node): return node.access.backend.value(at: node.location)[key]
        case .frozen(_, let value): return value[key]
        }
    }

    /// The coders of the replica the object is bound to (the defaults while detached).
    var coding: ValueCoding {
        switch source {
        case .detached: return ValueCoding.standard
        case .live(let node), .frozen(let node, _): return node.access.state.coding
        }
    }
}

/// Where a model's fields read from.
enum ModelSource {
    /// Not stored yet: fields hold what was assigned.
    case detached
    /// The current state of a node.
    case live(DataNode)
    /// A node's value at the time of a snapshot.
    case frozen(DataNode, Value)
}

extension ValueCoding {
    /// Plain `JSONEncoder` and `JSONDecoder`, for detached objects.
    static let standard = ValueCoding(encoder: JSONEncoder(), decoder: JSONDecoder())
}

extension DataNode {
    /// The child under a key known to be valid (a field's key, or a key read from the tree); nil when it
    /// would be deeper than paths go.
    func child(key: Key) -> DataNode? { (try? location.child(key)).map { node(at: $0) } }

    /// The child under `key`, checking that it is one key.
    ///
    /// - Throws: `WeftError` with code `invalidKey`.
    func childNode(validating key: String) throws -> DataNode {
        do {
            try Key.validate(key)
        } catch {
            throw WeftError(.invalidKey, "\"\(key.prefix(200))\" is not a valid key: \(error)", path: path)
        }
        return try WeftError.mapping(path: path) { node(at: try location.child(key)) }
    }
}
