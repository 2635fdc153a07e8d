import Foundation

/// The binary encoding of queries, their results and their change sets, for the client protocol.
///
/// A query is a format byte (``format``), the path, a flags byte (ordered, start, end, predicate,
/// offset, and the limit's kind in bits 5–6), the ordering, then each part the flags announce. Values use
/// ``OpCodec``'s value encoding. Decoding checks every length and count against ``CoreLimits`` before
/// allocating, then rebuilds the query through its builders, so a decoded query is valid: malformed bytes
/// throw ``CoreError/malformedEncoding(offset:reason:)``, a well-formed but invalid query a ``QueryError``.
///
/// ```swift
/// let bytes = QueryCodec.encode(query)
/// let same = try QueryCodec.decode(bytes)   // == query
/// ```
public enum QueryCodec {
    /// The query encoding's format version.
    public static let format: UInt8 = 1

    private enum Flag {
        static let ordered: UInt8 = 1 << 0
        static let start: UInt8 = 1 << 1
        static let end: UInt8 = 1 << 2
        static let predicate: UInt8 = 1 << 3
        static let offset: UInt8 = 1 << 4
        static let limitShift: UInt8 = 5
        static let known: UInt8 = 0b0111_1111
    }

    private enum PredicateTag: UInt8 { case compare = 0, isIn, exists, and, or, not }

    /// The bytes of `query`.
    public static func encode(_ query: Query) -> [UInt8] {
        var writer = ByteWriter(capacity: 64)
        write(query, to: &writer)
        return writer.bytes
    }

    /// The query encoded by `bytes`, all of them.
    ///
    /// - Throws: ``CoreError/malformedEncoding(offset:reason:)``, or a ``QueryError`` for a query that breaks
    ///   a rule.
    public static func decode(_ bytes: [UInt8]) throws -> Query {
        var reader = ByteReader(bytes)
        let query = try readQuery(from: &reader)
        guard reader.isAtEnd else {
            throw CoreError.malformedEncoding(offset: reader.offset, reason: "trailing bytes after the query")
        }
        return query
    }

    /// Appends `query` to `writer`.
    public static func write(_ query: Query, to writer: inout ByteWriter) {
        writer.write(byte: format)
        OpCodec.write(query.path, to: &writer)
        var flags: UInt8 = 0
        if query.isOrderingExplicit { flags |= Flag.ordered }
        if query.start != nil { flags |= Flag.start }
        if query.end != nil { flags |= Flag.end }
        if query.predicate != nil { flags |= Flag.predicate }
        if query.isOffsetExplicit { flags |= Flag.offset }
        switch query.limit {
        case nil: break
        case .first?: flags |= 1 << Flag.limitShift
        case .last?: flags |= 2 << Flag.limitShift
        }
        writer.write(byte: flags)
        switch query.ordering {
        case .key: writer.write(byte: 0)
        case .value: writer.write(byte: 1)
        case .child(let field):
            writer.write(byte: 2)
            write(field, to: &writer)
        }
        for bound in [query.start, query.end].compactMap({ $0 }) {
            OpCodec.write(bound.value, to: &writer)
            if let key = bound.key {
                writer.write(byte: 1)
                writer.write(string: key.text)
            } else {
                writer.write(byte: 0)
            }
        }
        if let predicate = query.predicate { write(predicate, to: &writer) }
        if let limit = query.limit { writer.write(varint: UInt64(limit.count)) }
        if query.isOffsetExplicit { writer.write(varint: UInt64(query.offset)) }
    }

    /// Reads a query written by ``write(_:to:)``.
    ///
    /// - Throws: ``CoreError/malformedEncoding(offset:reason:)`` or ``QueryError``.
    public static func readQuery(from reader: inout ByteReader) throws -> Query {
        guard reader.remaining <= CoreLimits.queryBytesMax else {
            throw CoreError.malformedEncoding(
                offset: reader.offset, reason: "a query is at most \(CoreLimits.queryBytesMax) bytes")
        }
        let version = try reader.readByte()
        guard version == format else {
            throw CoreError.malformedEncoding(offset: reader.offset - 1, reason: "unknown query format \(version)")
        }
        let path = try OpCodec.readPath(from: &reader)
        let flags = try reader.readByte()
        guard flags & ~Flag.known == 0, flags >> Flag.limitShift != 3 else {
            throw CoreError.malformedEncoding(offset: reader.offset - 1, reason: "unknown query flags \(flags)")
        }
        let orderingTag = try reader.readByte()
        var query = Query(path: path)
        switch orderingTag {
        case 0: if flags & Flag.ordered != 0 { query = try query.orderedByKey() }
        case 1: query = try query.orderedByValue()
        case 2: query = try query.orderedByChild(try readField(from: &reader))
        default:
            throw CoreError.malformedEncoding(offset: reader.offset - 1, reason: "unknown ordering \(orderingTag)")
        }
        guard orderingTag == 0 || flags & Flag.ordered != 0 else {
            throw CoreError.malformedEncoding(offset: reader.offset, reason: "an ordering without its flag")
        }
        if flags & Flag.start != 0 {
            let (value, key) = try readBound(from: &reader)
            query = try query.starting(at: value, key: key)
        }
        if flags & Flag.end != 0 {
            let (value, key) = try readBound(from: &reader)
            query = try query.ending(at: value, key: key)
        }
        if flags & Flag.predicate != 0 {
            var nodes = 0
            query = try query.where(readPredicate(from: &reader, depth: 1, nodes: &nodes))
        }
        switch flags >> Flag.limitShift {
        case 1: query = try query.limit(toFirst: readInt(from: &reader))
        case 2: query = try query.limit(toLast: readInt(from: &reader))
        default: break
        }
        if flags & Flag.offset != 0 { query = try query.offset(readInt(from: &reader)) }
        return query
    }

    // MARK: - Parts

    private static func write(_ field: QueryField, to writer: inout ByteWriter) {
        writer.write(varint: UInt64(field.keys.count))
        for key in field.keys { writer.write(string: key.text) }
    }

    private static func readField(from reader: inout ByteReader) throws -> QueryField {
        let count = try reader.readCount(max: CoreLimits.pathDepthMax, minimumBytes: 2)
        var keys: [Key] = []
        keys.reserveCapacity(count)
        // Checked by the builder the field is given to, with the query's depth.
        for _ in 0..<count { keys.append(Key(unchecked: try reader.readString(max: CoreLimits.keyBytesMax))) }
        return QueryField(keys: keys)
    }

    private static func readBound(from reader: inout ByteReader) throws -> (Value, String?) {
        let value = try OpCodec.readValue(from: &reader, depth: CoreLimits.pathDepthMax)
        switch try reader.readByte() {
        case 0: return (value, nil)
        case 1: return (value, try reader.readString(max: CoreLimits.keyBytesMax))
        case let other:
            throw CoreError.malformedEncoding(offset: reader.offset - 1, reason: "unknown tie key flag \(other)")
        }
    }

    private static func readInt(from reader: inout ByteReader) throws -> Int {
        let raw = try reader.readVarint()
        guard raw <= UInt64(Int32.max) else {
            throw CoreError.malformedEncoding(offset: reader.offset, reason: "count \(raw) is out of range")
        }
        return Int(raw)
    }

    private static func write(_ predicate: QueryPredicate, to writer: inout ByteWriter) {
        switch predicate {
        case let .compare(field, comparison, value):
            writer.write(byte: PredicateTag.compare.rawValue)
            write(field, to: &writer)
            writer.write(byte: comparison.rawValue)
            OpCodec.write(value, to: &writer)
        case let .isIn(field, values):
            writer.write(byte: PredicateTag.isIn.rawValue)
            write(field, to: &writer)
            writer.write(varint: UInt64(values.count))
            for value in values { OpCodec.write(value, to: &writer) }
        case let .exists(field):
            writer.write(byte: PredicateTag.exists.rawValue)
            write(field, to: &writer)
        case let .and(left, right), let .or(left, right):
            let isAnd = if case .and = predicate { true } else { false }
            writer.write(byte: (isAnd ? PredicateTag.and : PredicateTag.or).rawValue)
            write(left, to: &writer)
            write(right, to: &writer)
        case let .not(inner):
            writer.write(byte: PredicateTag.not.rawValue)
            write(inner, to: &writer)
        }
    }

    /// Reads a predicate node at `depth`, counting nodes so that a hostile encoding is refused before it
    /// nests or grows past the limits.
    private static func readPredicate(from reader: inout ByteReader, depth: Int, nodes: inout Int) throws
        -> QueryPredicate
    {
        nodes += 1
        guard depth <= CoreLimits.queryPredicateDepthMax, nodes <= CoreLimits.queryPredicateNodesMax else {
            throw QueryError.predicateTooLarge(nodes: nodes, depth: depth)
        }
        let tagByte = try reader.readByte()
        guard let tag = PredicateTag(rawValue: tagByte) else {
            throw CoreError.malformedEncoding(offset: reader.offset - 1, reason: "unknown predicate tag \(tagByte)")
        }
        switch tag {
        case .compare:
            let field = try readField(from: &reader)
            let comparisonByte = try reader.readByte()
            guard let comparison = QueryComparison(rawValue: comparisonByte) else {
                throw CoreError.malformedEncoding(offset: reader.offset - 1, reason: "unknown comparison \(comparisonByte)")
            }
            return .compare(field, comparison, try OpCodec.readValue(from: &reader, depth: CoreLimits.pathDepthMax))
        case .isIn:
            let field = try readField(from: &reader)
            let count = try reader.readCount(max: CoreLimits.queryInValuesMax)
            var values: [Value] = []
            values.reserveCapacity(count)
            for _ in 0..<count { values.append(try OpCodec.readValue(from: &reader, depth: CoreLimits.pathDepthMax)) }
            return .isIn(field, values)
        case .exists: return .exists(try readField(from: &reader))
        case .and, .or:
            let left = try readPredicate(from: &reader, depth: depth + 1, nodes: &nodes)
            let right = try readPredicate(from: &reader, depth: depth + 1, nodes: &nodes)
            return tag == .and ? .and(left, right) : .or(left, right)
        case .not: return .not(try readPredicate(from: &reader, depth: depth + 1, nodes: &nodes))
        }
    }
}

// MARK: - Results and change sets

extension QueryCodec {
    /// Appends a result: a count, then each row's key and value.
    public static func write(_ result: QueryResult, to writer: inout ByteWriter) {
        writer.write(varint: UInt64(result.count))
        for row in result {
            writer.write(string: row.key.text)
            OpCodec.write(row.value, to: &writer)
        }
    }

    /// Reads a result written by ``write(_:to:)-(QueryResult,_)`` for a query on a node `depth` levels deep.
    ///
    /// - Throws: ``CoreError/malformedEncoding(offset:reason:)`` (null rows and repeated keys included).
    public static func readResult(from reader: inout ByteReader, depth: Int) throws -> QueryResult {
        let count = try reader.readCount(max: CoreLimits.queryLimitMax, minimumBytes: 3)
        var rows: [QueryRow] = []
        rows.reserveCapacity(count)
        var seen = Set<Key>()
        for _ in 0..<count {
            let key = try Key(validating: reader.readString(max: CoreLimits.keyBytesMax))
            let value = try OpCodec.readValue(from: &reader, depth: depth + 1)
            guard !value.isNull, seen.insert(key).inserted else {
                throw CoreError.malformedEncoding(offset: reader.offset, reason: "a null or repeated row \(key)")
            }
            rows.append(QueryRow(key: key, value: value))
        }
        return QueryResult(rows: rows)
    }

    /// Appends a change set: deletions, insertions and modifications as ascending index lists, then the
    /// moves as pairs.
    public static func write(_ changes: QueryChangeSet, to writer: inout ByteWriter) {
        for indexes in [changes.deletions, changes.insertions, changes.modifications] {
            writer.write(varint: UInt64(indexes.count))
            for index in indexes { writer.write(varint: UInt64(index)) }
        }
        writer.write(varint: UInt64(changes.moves.count))
        for move in changes.moves {
            writer.write(varint: UInt64(move.from))
            writer.write(varint: UInt64(move.to))
        }
    }

    /// Reads a change set written by ``write(_:to:)-(QueryChangeSet,_)``.
    ///
    /// - Throws: ``CoreError/malformedEncoding(offset:reason:)`` (an index out of range or repeated).
    public static func readChangeSet(from reader: inout ByteReader) throws -> QueryChangeSet {
        var sets: [IndexSet] = []
        for _ in 0..<3 {
            let count = try reader.readCount(max: CoreLimits.queryLimitMax)
            var indexes = IndexSet()
            for _ in 0..<count {
                let index = try readInt(from: &reader)
                guard !indexes.contains(index) else {
                    throw CoreError.malformedEncoding(offset: reader.offset, reason: "index \(index) repeated")
                }
                indexes.insert(index)
            }
            sets.append(indexes)
        }
        let count = try reader.readCount(max: CoreLimits.queryLimitMax, minimumBytes: 2)
        var moves: [QueryChangeSet.Move] = []
        moves.reserveCapacity(count)
        for _ in 0..<count { moves.append(QueryChangeSet.Move(from: try readInt(from: &reader), to: try readInt(from: &reader))) }
        return QueryChangeSet(deletions: sets[0], insertions: sets[1], modifications: sets[2], moves: moves)
    }
}
