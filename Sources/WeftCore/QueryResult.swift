/// One child in a query's result: its key and its whole value.
public struct QueryRow: Sendable, Hashable, CustomStringConvertible {
    /// The child's key.
    public let key: Key
    /// The child's value (never null: a missing child is not in a result).
    public let value: Value

    public init(key: Key, value: Value) {
        self.key = key
        self.value = value
    }

    public var description: String { "\(key): \(value.jsonString())" }
}

/// The children a query returns, in its order (ascending, ties by key), as an array of ``QueryRow``.
///
/// ```swift
/// let result = query.evaluate(node)
/// for row in result { print(row.key, row.value) }
/// result.keys   // ["p3", "p7", …]
/// ```
public struct QueryResult: Sendable, Hashable, RandomAccessCollection, ExpressibleByArrayLiteral {
    /// The rows, in order.
    public let rows: [QueryRow]

    public init(rows: [QueryRow]) { self.rows = rows }

    public init(arrayLiteral rows: QueryRow...) { self.rows = rows }

    /// The keys of the rows, in order.
    public var keys: [Key] { rows.map(\.key) }

    /// The rows as an object keyed by child key (the order is lost): the value a path read of the same
    /// children would give.
    public var value: Value {
        var children: [Key: Value] = [:]
        children.reserveCapacity(rows.count)
        for row in rows { children[row.key] = row.value }
        return .object(normalizing: children)
    }

    public var startIndex: Int { rows.startIndex }
    public var endIndex: Int { rows.endIndex }
    public subscript(position: Int) -> QueryRow { rows[position] }
}
