import WeftCore

/// A reference to a node of a replica's tree.
///
/// References are cheap values: many may refer to the same node, and every node always "exists" as a
/// reference (an absent node reads as null). Get them from a replica and move around with paths:
///
/// ```swift
/// let alice = replica.root / "users/alice"          // DataNode?
/// let score = alice?.relativeNode(for: "score")     // /users/alice/score
/// let users = score?.parent?.parent                 // /users
/// ```
///
/// Reads, writes, transactions and subscriptions each come in three forms on one engine: `async throws`
/// methods (the primary form), completion-callback overloads that take an optional `DispatchQueue`, and
/// Combine futures and publishers under ``forCombine``.
public struct DataNode: Sendable {
    let access: ReplicaAccess
    /// The node's absolute path, validated.
    let location: Path

    init(access: ReplicaAccess, location: Path) {
        self.access = access
        self.location = location
    }

    /// The absolute path of the node: its ancestors' keys and its own, each after a `/`; `/` for the root.
    ///
    /// ```swift
    /// (replica.root / "users/alice")?.path   // "/users/alice"
    /// ```
    public var path: String { location.description }

    /// The node's key (the last segment of its path), nil for the root.
    ///
    /// ```swift
    /// (replica.root / "users/alice")?.key   // "alice"
    /// ```
    public var key: String? { location.key }

    /// The parent node, nil only for the root.
    ///
    /// ```swift
    /// replica.root.parent                      // nil
    /// (replica.root / "a/b")?.parent?.path     // "/a"
    /// ```
    public var parent: DataNode? { location.parent.map { DataNode(access: access, location: $0) } }

    /// The node reached from this one by a relative path, or nil when the path is ill-formed.
    ///
    /// Segments are separated by `/`. `.` stays, `..` goes one level up (staying at the root), empty
    /// segments (a leading, trailing or doubled `/`) are ignored, and any other segment goes down to the
    /// child of that key. From `/foo/bar`:
    /// - `geek`, `/geek`, `geek/` and `/geek/` give `/foo/bar/geek`;
    /// - `../geek/noob`, `/../geek//noob/.` and `../geek/./noob/.` give `/foo/geek/noob`;
    /// - `../geek/../..//../..` gives the root.
    ///
    /// ```swift
    /// let noob = bar.relativeNode(for: "../geek//noob/.")   // /foo/geek/noob
    /// bar.relativeNode(for: "a.b")                           // nil: '.' is not allowed in keys
    /// ```
    /// - Parameter path: the relative path; a leading `/` does not make it absolute.
    /// - Returns: nil when a segment is not a valid key (empty after trimming, longer than 768 bytes, or
    ///   holding `.`, `$`, `#`, `[`, `]` or a control character) or the result is deeper than 32 levels.
    public func relativeNode(for path: String) -> DataNode? {
        guard let resolved = try? location.resolving(path) else { return nil }
        return DataNode(access: access, location: resolved)
    }

    /// The node reached from `node` by a relative path: `node.relativeNode(for: path)`.
    ///
    /// ```swift
    /// let city = replica.root / "users/alice" / "address/city"
    /// ```
    public static func / (node: DataNode, path: String) -> DataNode? { node.relativeNode(for: path) }

    /// A reference to a new child under a fresh push id, without writing anything.
    ///
    /// Push ids are 20 characters that sort chronologically across replicas and never collide, so many
    /// replicas can add children to the same node without conflict. The child reads as null until written.
    ///
    /// ```swift
    /// let message = try chat.createChild()
    /// try await message.set(Message(text: "hi"))
    /// ```
    /// - Throws: `WeftError` with code `shutDown`, `clockRefused`, or `invalidPath` when the node is at
    ///   the deepest level already.
    public func createChild() throws -> DataNode { try createChild(at: .now) }

    /// A new child under a push id reserved at `time`.
    func createChild(at time: WeftTime) throws -> DataNode {
        try access.checkOpen()
        let key = try WeftError.mapping(path: path) { try access.backend.reservePushKey(at: time) }
        let child = try WeftError.mapping(path: path) { try location.child(key) }
        return DataNode(access: access, location: child)
    }

    /// The node at `location` on the same replica.
    func node(at location: Path) -> DataNode { DataNode(access: access, location: location) }
}

/// Chains `/` through optional nodes: nil stays nil.
///
/// ```swift
/// let city = replica.root / "users" / "alice" / "city"   // DataNode?
/// ```
public func / (node: DataNode?, path: String) -> DataNode? { node?.relativeNode(for: path) }

// MARK: - Hashable

extension DataNode: Hashable {
    /// Two references are equal when they refer to the same node of the same replica.
    public static func == (lhs: DataNode, rhs: DataNode) -> Bool {
        lhs.location == rhs.location && lhs.access.isSame(as: rhs.access)
    }

    /// Hashes the replica and the path, so equal references hash alike.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(access.state))
        hasher.combine(location)
    }
}

// MARK: - CustomStringConvertible

extension DataNode: CustomStringConvertible {
    /// The node's path, such as `/users/alice`.
    public var description: String { path }
}
