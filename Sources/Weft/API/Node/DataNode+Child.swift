import WeftCore

// The throwing accessors: Firebase's `child(_:)` and a root-relative `node(at:)`, for code that would
// otherwise unwrap `relativeNode(for:)` or `/` (nil for an ill-formed path) with a helper of its own.

extension DataNode {
    /// The node reached from this one by a relative path, in the grammar of ``relativeNode(for:)``;
    /// throws where that returns nil (Firebase's `child(_:)`).
    ///
    /// ```swift
    /// let city = try alice.child("address/city")      // /users/alice/address/city
    /// let sibling = try alice.child("../bob")          // /users/bob
    /// try alice.child("a.b")                           // throws invalidKey: '.' is not allowed in keys
    /// ```
    /// - Parameter path: the relative path; a leading `/` does not make it absolute.
    /// - Returns: the node; nothing is read or written.
    /// - Throws: `WeftError` with code `invalidKey` (a segment that is not a valid key, the key in
    ///   `path`) or `invalidPath` (deeper than 32 levels).
    public func child(_ path: String) throws -> DataNode {
        let resolved = try WeftError.mapping(path: self.path) { try location.resolving(path) }
        return DataNode(access: access, location: resolved)
    }
}

extension Replica {
    /// The node at a path resolved from the root; throws where ``node(for:)`` returns nil.
    ///
    /// ```swift
    /// let messages = try replica.node(at: "/rooms/general/messages")
    /// ```
    /// - Throws: `WeftError` with code `invalidKey` or `invalidPath`.
    public func node(at path: String) throws -> DataNode { try root.child(path) }
}

extension DataNode.CombineWrapper {
    /// The node reached by a relative path; throws where ``relativeNode(for:)`` returns nil. See
    /// ``DataNode/child(_:)``.
    ///
    /// ```swift
    /// let city = try alice.forCombine.child("address/city")
    /// ```
    /// - Throws: `WeftError` with code `invalidKey` or `invalidPath`.
    public func child(_ path: String) throws -> DataNode.CombineWrapper { try dataNode.child(path).forCombine }
}
