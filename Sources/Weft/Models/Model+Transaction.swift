import Foundation
import WeftCore

// Models written through a held `Transaction` (the Realtime ORM's `save(in:)`): the writes join the
// transaction's others and commit with them as one op.

extension Model {
    /// Records the changes of the object's fields in `transaction` (see ``save(in:)-(WriteBatch)``);
    /// shared fields that are not numbers add a read, so the commit is refused if they changed meanwhile.
    ///
    /// ```swift
    /// let transaction = replica.transaction()
    /// post.title = "Hello"
    /// try post.save(in: transaction)
    /// try await transaction.commit()
    /// ```
    /// - Throws: `WeftError` with code `invalidValue` for a detached or frozen object or a read-only field
    ///   assigned, `transactionAborted` for a shared field changed since it was assigned, or as the
    ///   transaction's writes (`transactionCommitted` after its commit).
    public func save(in transaction: Transaction) throws { try save(to: transaction) }

    /// Stores the detached object in `transaction`: under a new push id of its type's ``collection``, or
    /// under `node` (replacing what it held); every field is written. The object is bound at once.
    ///
    /// ```swift
    /// let post = Post()
    /// post.title = "First"
    /// try post.insert(in: transaction)
    /// ```
    /// - Throws: `WeftError` with code `invalidValue` when the object is stored already, or as the
    ///   transaction's writes.
    public func insert(in transaction: Transaction, at node: DataNode? = nil) throws {
        try insert(to: transaction, access: transaction.access, at: node)
    }

    /// Deletes the object in `transaction`, with what the links that point at it declare (nullify or
    /// cascade, see ``Relation``); the commit is refused if what the delete read changed meanwhile.
    ///
    /// ```swift
    /// try post.delete(in: transaction)
    /// ```
    /// - Throws: `WeftError` with code `invalidValue` for a detached object, or as the transaction's writes.
    public func delete(in transaction: Transaction) throws { try delete(to: transaction) }
}

extension SharedProperty {
    /// Records an increment of the field (a number) in `transaction`: increments made concurrently on
    /// several replicas add up.
    ///
    /// ```swift
    /// try post.$likes.increment(by: 1, in: transaction)
    /// ```
    /// - Throws: `WeftError` with code `invalidValue` when the object is not stored or the step is not finite.
    public func increment(by step: Number = 1, in transaction: Transaction) throws {
        try increment(by: step, writer: transaction)
    }
}

extension Values {
    /// Appends `element` after the last element, in `transaction`.
    ///
    /// ```swift
    /// try post.$tags.append("swift", in: transaction)
    /// ```
    /// - Throws: `WeftError` with code `invalidValue` for an object not stored, or as the transaction's writes.
    public func append(_ element: T, in transaction: Transaction) throws { try append(element, writer: transaction) }

    /// Inserts `element` at `index` (0 through the count), in `transaction`.
    ///
    /// - Throws: `WeftError` with code `invalidValue` for an index out of range or an object not stored,
    ///   `valueTooLarge` when the gap's keys reached ``WeftLimits/valuesKeyBytesMax``.
    public func insert(_ element: T, at index: Int, in transaction: Transaction) throws {
        try insert(element, at: index, writer: transaction)
    }

    /// Removes the element at `index`, in `transaction`.
    ///
    /// - Throws: `WeftError` with code `invalidValue` for an index out of range or an object not stored.
    public func remove(at index: Int, in transaction: Transaction) throws { try remove(at: index, writer: transaction) }

    /// Moves the element at `source` so that it ends at `destination`, in `transaction`.
    ///
    /// - Throws: `WeftError` with code `invalidValue` for an index out of range or an object not stored.
    public func move(from source: Int, to destination: Int, in transaction: Transaction) throws {
        try move(from: source, to: destination, writer: transaction)
    }
}

// MARK: - ModelWriter

extension Transaction: ModelWriter {
    func recordSet(_ value: Value, at node: DataNode) throws { try set(value, at: node) }

    func recordIncrement(by step: Number, at node: DataNode) throws { try increment(by: step, at: node) }

    // The transaction records the read, so its commit is refused when the field changes under it.
    func recordRead(_ node: DataNode) throws -> Value? { try read(node) }

    var pendingWrites: [Write] { writes }

    func reservePushKey(under node: DataNode) throws -> String {
        guard let key = try node.createChild().key else { preconditionFailure("a child has a key") }
        return key
    }
}
