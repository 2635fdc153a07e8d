import WeftCore

/// Reads of one consistent state of a replica, whatever writes happen meanwhile (Dflat's
/// `fetchWithinASnapshot`). Get one from `replica.readSnapshot { reader in … }`.
///
/// ```swift
/// let (order, lines) = try replica.readSnapshot { reader in
///     (try reader.decodedValue(of: order, as: Order.self), try reader.childrenKeys(of: (order / "lines")!))
/// }
/// ```
public struct SnapshotReader: Sendable {
    let access: ReplicaAccess
    /// The whole tree at the time of the snapshot (copy-on-write: taking it copies nothing).
    let tree: Value
    /// The entries of the query indexes, taken with `tree`.
    var indexes: [Path: [QueryIndexEntries]] = [:]

    /// The value of a node in the snapshot (null when absent).
    ///
    /// ```swift
    /// let total = try reader.value(of: (order / "total")!)
    /// ```
    /// - Throws: `WeftError` with code `invalidPath` for a node of another replica.
    public func value(of node: DataNode) throws -> Value {
        try access.checkOwns(node)
        return tree.value(at: node.location)
    }

    /// The value at an absolute path in the snapshot.
    ///
    /// ```swift
    /// let total = try reader.value(at: "/orders/1/total")
    /// ```
    /// - Throws: `WeftError` with code `invalidPath` when the path is ill-formed.
    public func value(at path: String) throws -> Value {
        guard let node = access.node(for: path) else {
            throw WeftError(.invalidPath, "\"\(path.prefix(200))\" is not a valid path", path: path)
        }
        return try value(of: node)
    }

    /// The value of a node in the snapshot, decoded as `T` with the replica's `jsonDecoder`.
    ///
    /// ```swift
    /// let order = try reader.decodedValue(of: orderNode, as: Order.self)
    /// ```
    /// - Throws: `WeftError` with code `decodingFailed` (saying where and why) or `invalidPath`.
    public func decodedValue<T: Decodable>(of node: DataNode, as type: T.Type = T.self) throws -> T {
        try access.state.coding.decode(type, from: value(of: node), path: node.path)
    }

    /// The keys of a node's children in the snapshot, in key order.
    ///
    /// ```swift
    /// let lineIDs = try reader.childrenKeys(of: (order / "lines")!)
    /// ```
    /// - Throws: `WeftError` with code `invalidPath` for a node of another replica.
    public func childrenKeys(of node: DataNode) throws -> [String] {
        try value(of: node).children.keys.map(\.text).sorted(by: KeyOrder.precedes)
    }

    /// True when the node holds a value in the snapshot.
    ///
    /// ```swift
    /// if try reader.exists(cart) { … }
    /// ```
    /// - Throws: `WeftError` with code `invalidPath` for a node of another replica.
    public func exists(_ node: DataNode) throws -> Bool { try !value(of: node).isNull }
}

extension ReplicaAccess {
    /// Runs `body` with a reader of one consistent snapshot; see `Replica.readSnapshot`.
    func readSnapshot<T>(_ body: (SnapshotReader) throws -> T) rethrows -> T {
        let view = backend.queryView()
        return try body(SnapshotReader(access: self, tree: view.tree, indexes: view.indexes))
    }
}
