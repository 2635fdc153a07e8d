import WeftCore

// Reads inside a transaction or a batch: every read of one comes from one state, and the paths read
// guard the commit (a guarded batch op, applied only if nothing changed under them since).

extension Transaction {
    /// The value of a node in the state this transaction reads from (taken at its first read), and
    /// records the read: the commit then applies only if no write this replica had not seen at that
    /// moment touches the node, an ancestor or a descendant, here or on any replica (else nothing of the
    /// transaction is written, and `commit` throws `rejected`).
    ///
    /// ```swift
    /// let stock = try transaction.read(item.child("stock"))
    /// guard case .int(let left) = stock, left > 0 else { return }
    /// try transaction.set(.int(left - 1), at: item.child("stock"))
    /// ```
    /// - Throws: `WeftError` with code `invalidPath` for a node of another replica, `valueTooLarge` past
    ///   ``WeftCore/CoreLimits/guardedReadsMax`` separate paths, or `transactionCommitted`.
    public func read(_ node: DataNode) throws -> Value {
        try access.checkOwns(node)
        return try recordRead(node.location)
    }

    /// The value of a node, decoded as `T` with the replica's `jsonDecoder`; see ``read(_:)``.
    ///
    /// ```swift
    /// let post = try transaction.read(postNode, as: Post.self)
    /// ```
    /// - Throws: as ``read(_:)``, or `decodingFailed`.
    public func read<T: Decodable>(_ node: DataNode, as type: T.Type) throws -> T {
        try access.state.coding.decode(type, from: read(node), path: node.path)
    }

    /// Reads the node at `path` (for code that works on core paths) and records the read; see ``read(_:)``.
    func recordRead(_ path: Path) throws -> Value {
        try recording { try $0.read(path) }
    }
}

extension WriteBatch {
    /// The value of a node in the state this batch reads from (taken at its first read), and records
    /// the read: `performChanges` then applies the batch only if nothing changed under what it read, and
    /// runs the closure again otherwise (Dflat's serializable transactions).
    ///
    /// ```swift
    /// try await replica.performChanges { batch in
    ///     guard case .int(let left) = try batch.read(stock), left > 0 else { return batch.abort() }
    ///     try batch.set(.int(left - 1), at: stock)
    /// }
    /// ```
    /// - Throws: `WeftError` with code `invalidPath` for a node of another replica, or `valueTooLarge`
    ///   past ``WeftCore/CoreLimits/guardedReadsMax`` separate paths.
    public func read(_ node: DataNode) throws -> Value {
        try access.checkOwns(node)
        return try recorder.read(node.location)
    }

    /// The value of a node, decoded as `T` with the replica's `jsonDecoder`; see ``read(_:)``.
    ///
    /// ```swift
    /// let order = try batch.read(orderNode, as: Order.self)
    /// ```
    /// - Throws: as ``read(_:)``, or `decodingFailed`.
    public func read<T: Decodable>(_ node: DataNode, as type: T.Type) throws -> T {
        try access.state.coding.decode(type, from: read(node), path: node.path)
    }
}
