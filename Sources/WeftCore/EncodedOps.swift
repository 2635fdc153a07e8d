/// Ops together with the bytes that encode each of them (``OpCodec/encode(_:)``).
///
/// Ops read from the wire keep the bytes they were read from, so that a replica stores what arrived
/// instead of encoding every op a second time. A collection of its ops; two values are equal when
/// their ops are (the bytes follow from the ops).
///
/// ```swift
/// var reader = ByteReader(frame)
/// let batch = try EncodedOps.read(from: &reader, countMax: 512)
/// batch.encodings[0]   // OpCodec.encode(batch[0]), without encoding it
/// ```
public struct EncodedOps: Sendable, Hashable, RandomAccessCollection, ExpressibleByArrayLiteral {
    /// The ops.
    public private(set) var ops: [Op]
    /// `encodings[i]` holds `OpCodec.encode(ops[i])`: a slice of the bytes they were read from.
    public private(set) var encodings: [ArraySlice<UInt8>]

    /// Ops encoded here.
    public init(_ ops: [Op]) {
        self.ops = ops
        self.encodings = ops.map { OpCodec.encode($0)[...] }
    }

    public init(arrayLiteral ops: Op...) { self.init(ops) }

    /// Ops with the bytes kept for them: `encodings[i]` must be `OpCodec.encode(ops[i])` (bytes read
    /// from the wire or the store, for instance).
    public init(ops: [Op], encodings: [ArraySlice<UInt8>]) {
        precondition(ops.count == encodings.count, "one encoding per op")
        self.ops = ops
        self.encodings = encodings
    }

    /// Reads ops until the end of the reader, keeping each op's bytes.
    ///
    /// - Throws: ``CoreError/malformedEncoding(offset:reason:)`` for garbage, a truncated op, or more
    ///   than `countMax` ops.
    public static func read(from reader: inout ByteReader, countMax: Int) throws -> EncodedOps {
        var ops: [Op] = []
        var encodings: [ArraySlice<UInt8>] = []
        // A frame's ops name the same paths again and again: each is decoded and validated once. A reader
        // may bring a cache of its own (a session's, kept across frames); else one serves these bytes.
        // An op takes at least a dozen bytes, most several dozen: a slot per 16 bytes left is plenty.
        let ownsCache = reader.paths == nil
        if ownsCache { reader.paths = PathCache(expectedPaths: (reader.bytes.endIndex - reader.offset) / 16) }
        defer { if ownsCache { reader.paths = nil } }
        while !reader.isAtEnd {
            guard ops.count < countMax else { throw reader.fail("more than \(countMax) ops") }
            let start = reader.offset
            ops.append(try OpCodec.read(from: &reader))
            encodings.append(reader.bytes[start..<reader.offset])
        }
        return EncodedOps(ops: ops, encodings: encodings)
    }

    /// The ops at `positions`, with their bytes.
    /// Adds `other`'s ops after these.
    public mutating func append(contentsOf other: EncodedOps) {
        ops += other.ops
        encodings += other.encodings
    }

    public func subset(_ positions: [Int]) -> EncodedOps {
        EncodedOps(ops: positions.map { ops[$0] }, encodings: positions.map { encodings[$0] })
    }

    public var startIndex: Int { ops.startIndex }
    public var endIndex: Int { ops.endIndex }
    public subscript(position: Int) -> Op { ops[position] }

    public static func == (lhs: EncodedOps, rhs: EncodedOps) -> Bool { lhs.ops == rhs.ops }
    public func hash(into hasher: inout Hasher) { hasher.combine(ops) }
}
