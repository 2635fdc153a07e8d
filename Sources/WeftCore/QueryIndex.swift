/// One child in a ``QueryIndex``: the value it is ordered by and its key.
public struct QueryIndexEntry: Sendable, Hashable, CustomStringConvertible {
    /// The child's value at the index's field (null where missing).
    public let value: Value
    /// The child's key.
    public let key: Key

    public init(value: Value, key: Key) {
        self.value = value
        self.key = key
    }

    /// True when `lhs` sorts before `rhs`: by value (``ValueOrder``), ties by key (``KeyOrder``).
    @inlinable public static func precedes(_ lhs: QueryIndexEntry, _ rhs: QueryIndexEntry) -> Bool {
        let order = ValueOrder.compare(lhs.value, rhs.value)
        if order != 0 { return order < 0 }
        return lhs.key != rhs.key && KeyOrder.precedes(lhs.key.text, rhs.key.text)
    }

    public var description: String { "\(value.jsonString()) \(key)" }
}

/// The children of one node in the order of one child path (`meta/score`): what a query ordered by that
/// path, or filtered on it first, reads instead of scanning and sorting every child.
///
/// Entries sit in sorted chunks of at most ``CoreLimits/queryIndexChunkEntriesMax``, so that an update
/// moves a chunk's entries, not the whole index's, and a copy taken for a reader (``entries``) shares every
/// chunk until a write changes it. The index also knows each child's current value at the field, to find
/// the entry an update replaces.
///
/// ```swift
/// var index = QueryIndex.build(collection: try Path("/posts"), field: "meta/score", node: posts)
/// index.update(key: "p9", child: newPost)     // the entry of p9 moves to its new place
/// let top = query.run(on: posts, indexes: [index.entries]).result
/// ```
public struct QueryIndex: Sendable {
    /// The node whose children are indexed.
    public let collection: Path
    /// The path below each child that orders them.
    public let field: QueryField
    /// The entries, in order.
    public private(set) var entries: QueryIndexEntries
    /// Each indexed child's value at the field.
    private var orderingValues: [Key: Value]

    /// An empty index.
    public init(collection: Path, field: QueryField) {
        self.collection = collection
        self.field = field
        entries = QueryIndexEntries(field: field, chunks: [])
        orderingValues = [:]
    }

    /// An index of entries already sorted (read back from a store in order).
    ///
    /// - Returns: nil when the entries are not strictly sorted or repeat a key.
    public init?(collection: Path, field: QueryField, sorted: [QueryIndexEntry]) {
        self.init(collection: collection, field: field)
        orderingValues.reserveCapacity(sorted.count)
        for (previous, next) in zip(sorted, sorted.dropFirst()) where !QueryIndexEntry.precedes(previous, next) {
            return nil
        }
        for entry in sorted {
            guard orderingValues.updateValue(entry.value, forKey: entry.key) == nil else { return nil }
        }
        entries = QueryIndexEntries(field: field, sorted: sorted)
    }

    /// An index of the children of `node`, the collection's value: each child's entry, sorted.
    /// `progress` is told how many children were read, every ``CoreLimits/queryIndexProgressStep``.
    public static func build(
        collection: Path, field: QueryField, node: Value, progress: ((Int, Int) -> Void)? = nil
    ) -> QueryIndex {
        let children = node.children
        var sorted: [QueryIndexEntry] = []
        sorted.reserveCapacity(children.count)
        for (key, child) in children {
            sorted.append(QueryIndexEntry(value: orderingValue(of: child, field: field), key: key))
            if sorted.count % CoreLimits.queryIndexProgressStep == 0 { progress?(sorted.count, children.count) }
        }
        sorted.sort(by: QueryIndexEntry.precedes)
        progress?(sorted.count, children.count)
        var index = QueryIndex(collection: collection, field: field)
        index.orderingValues.reserveCapacity(sorted.count)
        for entry in sorted { index.orderingValues[entry.key] = entry.value }
        index.entries = QueryIndexEntries(field: field, sorted: sorted)
        return index
    }

    /// Stands for every object an index orders by: objects sort alike (their ties fall to the key), so an
    /// entry need not hold a copy of one, nor change when one changes inside.
    public static let objectMarker = Value.object(["object": .bool(true)])

    /// The value a child is ordered by in an index on `field`, objects as ``objectMarker``.
    public static func orderingValue(of child: Value, field: QueryField) -> Value {
        let value = child.value(at: field.keys[...])
        return value.isObject ? objectMarker : value
    }

    /// The number of children indexed.
    public var count: Int { orderingValues.count }

    /// The entry of the child under `key`, if indexed.
    public func entry(for key: Key) -> QueryIndexEntry? {
        orderingValues[key].map { QueryIndexEntry(value: $0, key: key) }
    }

    /// Brings the child under `key` up to date: `child` is its value now (null when it is gone).
    ///
    /// - Returns: the entry removed and the entry added (both nil when the child's place did not change).
    @discardableResult
    public mutating func update(key: Key, child: Value) -> (removed: QueryIndexEntry?, inserted: QueryIndexEntry?) {
        let old = orderingValues[key]
        let new: Value? = child.isNull ? nil : Self.orderingValue(of: child, field: field)
        if old == new { return (nil, nil) }
        var removed: QueryIndexEntry?
        var inserted: QueryIndexEntry?
        if let old {
            let entry = QueryIndexEntry(value: old, key: key)
            entries.remove(entry)
            removed = entry
        }
        if let new {
            let entry = QueryIndexEntry(value: new, key: key)
            entries.insert(entry)
            orderingValues[key] = new
            inserted = entry
        } else {
            orderingValues.removeValue(forKey: key)
        }
        precondition(entries.count == orderingValues.count, "an index holds one entry per child")
        return (removed, inserted)
    }

    /// The keys of every indexed child (for a whole re-read of the collection).
    public var keys: Dictionary<Key, Value>.Keys { orderingValues.keys }
}

/// The sorted entries of a ``QueryIndex``, in chunks: the part a reader copies (cheaply: chunks are shared
/// until written) to run queries on a snapshot.
public struct QueryIndexEntries: Sendable {
    /// A place in the entries: a chunk and an offset in it (`chunk == chunks.count` is the end).
    public struct Position: Sendable, Hashable, Comparable {
        public var chunk: Int
        public var offset: Int

        public static func < (lhs: Position, rhs: Position) -> Bool {
            lhs.chunk != rhs.chunk ? lhs.chunk < rhs.chunk : lhs.offset < rhs.offset
        }
    }

    /// The field the entries are ordered by.
    public let field: QueryField
    private(set) var chunks: [[QueryIndexEntry]]
    /// The number of entries.
    public private(set) var count: Int

    init(field: QueryField, chunks: [[QueryIndexEntry]]) {
        self.field = field
        self.chunks = chunks
        count = chunks.reduce(0) { $0 + $1.count }
    }

    init(field: QueryField, sorted: [QueryIndexEntry]) {
        let size = CoreLimits.queryIndexChunkEntriesMax / 2
        var chunks: [[QueryIndexEntry]] = []
        chunks.reserveCapacity(sorted.count / size + 1)
        var start = 0
        while start < sorted.count {
            let end = min(sorted.count, start + size)
            chunks.append(Array(sorted[start..<end]))
            start = end
        }
        self.init(field: field, chunks: chunks)
    }

    /// The first position.
    public var startPosition: Position { Position(chunk: 0, offset: 0) }
    /// The position after the last entry.
    public var endPosition: Position { Position(chunk: chunks.count, offset: 0) }

    /// The entry at `position` (before ``endPosition``).
    public subscript(position: Position) -> QueryIndexEntry { chunks[position.chunk][position.offset] }

    /// The position after `position`.
    public func position(after position: Position) -> Position {
        if position.offset + 1 < chunks[position.chunk].count {
            return Position(chunk: position.chunk, offset: position.offset + 1)
        }
        return Position(chunk: position.chunk + 1, offset: 0)
    }

    /// The position before `position` (after ``startPosition``).
    public func position(before position: Position) -> Position {
        if position.offset > 0 { return Position(chunk: position.chunk, offset: position.offset - 1) }
        return Position(chunk: position.chunk - 1, offset: chunks[position.chunk - 1].count - 1)
    }

    /// The first position whose entry `isPast` holds for (``endPosition`` when none), for a predicate
    /// false then true along the order; a binary search over chunks, then in one.
    public func partitionPoint(where isPast: (QueryIndexEntry) -> Bool) -> Position {
        let chunk = chunks.partitionPoint { chunk in chunk.last.map(isPast) ?? true }
        guard chunk < chunks.count else { return endPosition }
        return Position(chunk: chunk, offset: chunks[chunk].partitionPoint(where: isPast))
    }

    /// Every entry, in order (for tests and for writing the index out).
    public var all: [QueryIndexEntry] { Array(chunks.joined()) }

    mutating func insert(_ entry: QueryIndexEntry) {
        let position = partitionPoint { !QueryIndexEntry.precedes($0, entry) }
        count += 1
        guard !chunks.isEmpty else {
            chunks = [[entry]]
            return
        }
        // At the end, the entry joins the last chunk.
        let chunk = position.chunk == chunks.count ? chunks.count - 1 : position.chunk
        let offset = position.chunk == chunks.count ? chunks[chunk].count : position.offset
        chunks[chunk].insert(entry, at: offset)
        if chunks[chunk].count > CoreLimits.queryIndexChunkEntriesMax {
            let half = chunks[chunk].count / 2
            let upper = Array(chunks[chunk][half...])
            chunks[chunk].removeSubrange(half...)
            chunks.insert(upper, at: chunk + 1)
        }
    }

    mutating func remove(_ entry: QueryIndexEntry) {
        let position = partitionPoint { !QueryIndexEntry.precedes($0, entry) }
        precondition(position < endPosition && self[position] == entry, "an index removes an entry it holds")
        count -= 1
        chunks[position.chunk].remove(at: position.offset)
        if chunks[position.chunk].isEmpty { chunks.remove(at: position.chunk) }
    }
}
