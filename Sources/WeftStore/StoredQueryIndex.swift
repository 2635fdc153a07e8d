import WeftCore

/// A query index kept by a store: which collection's children, ordered by which child path, under which
/// id (see ``StoreBatch/IndexWrite``).
public struct StoredQueryIndex: Sendable, Hashable {
    /// The store's id of the index, chosen by its writer, unique per store.
    public var id: Int64
    /// The node whose children are indexed.
    public var collection: Path
    /// The child path that orders them.
    public var field: QueryField

    public init(id: Int64, collection: Path, field: QueryField) {
        self.id = id
        self.collection = collection
        self.field = field
    }
}

extension StoreBatch {
    /// A change to the query indexes a store keeps. Writes apply in order, after the tree writes, in the
    /// same transaction: an index committed is always in step with the tree committed.
    public enum IndexWrite: Sendable, Hashable {
        /// Defines an index (its entries follow as inserts).
        case define(StoredQueryIndex)
        /// Drops an index and its entries.
        case drop(id: Int64)
        /// Adds an entry (replacing one with the same sort key).
        case insert(id: Int64, entry: QueryIndexEntry)
        /// Removes an entry.
        case delete(id: Int64, entry: QueryIndexEntry)
    }
}
