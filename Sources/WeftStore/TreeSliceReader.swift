import WeftCore

/// A read of the whole materialized tree in slices of rows, so that other calls on the store (a read of
/// one subtree, say) can run between the slices instead of waiting for the whole tree.
///
/// A replica opening a large database serves its first reads with ``Store/readTree(at:)`` while it
/// loads the tree this way in the background:
///
/// ```swift
/// var reader = TreeSliceReader()
/// while !reader.isFinished {
///     try store.readTreeSlice(&reader, rowsMax: 8192)   // other calls may run in between
/// }
/// let tree = reader.tree
/// ```
///
/// The slices must not be separated by commits: the result would mix the tree before and after them.
/// After a slice throws, start again with a new reader.
public struct TreeSliceReader: Sendable {
    /// Rebuilds the tree from the rows read so far; made by the first slice.
    var builder: TreeBuilder?
    /// Text key of the last row read; nil before the first row.
    var lastText: String?
    /// The tree, once every row has been read.
    private var finished: Value?
    /// Rows read so far.
    public internal(set) var rowsRead = 0

    /// A reader at the start of the tree.
    public init() {}

    /// True once every row has been read; ``tree`` is then the whole tree.
    public var isFinished: Bool { finished != nil }

    /// The tree read (`.null` until ``isFinished``).
    public var tree: Value { finished ?? .null }

    /// Ends the read with the rows added so far.
    mutating func finish() {
        precondition(finished == nil, "a tree read ends once")
        finished = builder?.finish() ?? .null
        builder = nil
    }

    /// Ends the read with a whole tree read at once (a store held in memory).
    mutating func finish(with tree: Value) {
        precondition(finished == nil, "a tree read ends once")
        finished = tree
        builder = nil
    }
}
