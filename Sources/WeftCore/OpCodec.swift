/// The one compact binary encoding of values, paths, stamps and ops, shared by the store and the wire.
///
/// Layout (all counts and lengths are LEB128 varints):
/// - value: tag `0` null, `1` false, `2` true, `3` int (zigzag), `4` double (8 bytes, IEEE bits
///   big-endian), `5` string (length, UTF-8), `6` object (count, then key and value, keys sorted)
/// - path: count, then each key (length, UTF-8)
/// - stamp: 8 bytes packed time, 8 bytes replica, big-endian
/// - op: format byte `1` (`2` for a partial op, ``Op/isPartial``), stamp, sequence, path, kind tag and its
///   payload (see `Docs/PROTOCOL.md`); kind
///   `7` (a guarded batch) is new: data written before it never holds one, so it stays readable
///
/// Decoding validates every key, depth, length and count, and rejects trailing bytes.
///
/// ```swift
/// let bytes = OpCodec.encode(op)
/// let back = try OpCodec.decode(bytes)   // == op
/// ```
public enum OpCodec {
    /// The op encoding's format version.
    public static let format: UInt8 = 1

    /// The format byte of a partial op (``Op/isPartial``): the same layout, except that a guarded batch
    /// may have no read path and no write (a withheld placeholder, ``OpProjection``).
    public static let partialFormat: UInt8 = 2

    /// Encodes one op.
    public static func encode(_ op: Op) -> [UInt8] {
        var writer = ByteWriter(capacity: 64)
        write(op, to: &writer)
        return writer.bytes
    }

    /// Decodes one op that fills `bytes` exactly.
    /// - Throws: ``CoreError/malformedEncoding(offset:reason:)`` and the validation errors of keys and values.
    public static func decode(_ bytes: [UInt8]) throws -> Op {
        guard bytes.count <= CoreLimits.opBytesMax else {
            throw CoreError.malformedEncoding(offset: 0, reason: "op is larger than \(CoreLimits.opBytesMax) bytes")
        }
        var reader = ByteReader(bytes)
        let op = try read(from: &reader)
        guard reader.isAtEnd else {
            throw CoreError.malformedEncoding(offset: reader.offset, reason: "trailing bytes after the op")
        }
        return op
    }

    // MARK: - Ops

    public static func write(_ op: Op, to writer: inout ByteWriter) {
        writer.write(byte: op.isPartial ? partialFormat : format)
        write(op.stamp, to: &writer)
        writer.write(varint: op.sequence)
        write(op.path, to: &writer)
        switch op.kind {
        case .set(let value):
            writer.write(byte: 1)
            write(value, to: &writer)
        case .merge(let children):
            writer.write(byte: 2)
            write(children, to: &writer)
        case .increment(let by, let from):
            writer.write(byte: 3)
            write(by.value, to: &writer)
            write(from.value, to: &writer)
        case .batch(let writes):
            writer.write(byte: 4)
            write(writes, to: &writer)
        case .transaction(let read, let result):
            writer.write(byte: 5)
            write(read, to: &writer)
            write(result, to: &writer)
        case .call(let call):
            writer.write(byte: 6)
            writer.write(string: call.name)
            writer.write(varint: UInt64(call.version))
            write(call.arguments, to: &writer)
        case .guardedBatch(let read, let reads, let writes):
            writer.write(byte: 7)
            write(read, to: &writer)
            writer.write(varint: UInt64(reads.count))
            for path in reads { write(path, to: &writer) }
            write(writes, to: &writer)
        }
    }

    /// The parts of a batch: their count, then each part's tag (`1` set, `2` merge, `3` increment),
    /// path and payload.
    private static func write(_ writes: [Write], to writer: inout ByteWriter) {
        writer.write(varint: UInt64(writes.count))
        for part in writes {
            switch part {
            case .set(let path, let value):
                writer.write(byte: 1)
                write(path, to: &writer)
                write(value, to: &writer)
            case .merge(let path, let children):
                writer.write(byte: 2)
                write(path, to: &writer)
                write(children, to: &writer)
            case .increment(let path, let by, let from):
                writer.write(byte: 3)
                write(path, to: &writer)
                write(by.value, to: &writer)
                write(from.value, to: &writer)
            }
        }
    }

    private static func readWrites(from reader: inout ByteReader, allowsEmpty: Bool = false) throws -> [Write] {
        let count = try reader.readCount(max: CoreLimits.batchPartsMax, minimumBytes: 2)
        guard count > 0 || allowsEmpty else {
            throw CoreError.malformedEncoding(offset: reader.offset, reason: "empty batch")
        }
        var writes: [Write] = []
        writes.reserveCapacity(count)
        for _ in 0..<count {
            let partTag = try reader.readByte()
            let partPath = try readPath(from: &reader)
            switch partTag {
            case 1: writes.append(.set(partPath, try readValue(from: &reader, depth: partPath.depth)))
            case 2: writes.append(.merge(partPath, try readChildren(from: &reader, depth: partPath.depth)))
            case 3:
                writes.append(
                    .increment(partPath, by: try readNumber(from: &reader), from: try readNumber(from: &reader)))
            default:
                throw CoreError.malformedEncoding(offset: reader.offset, reason: "unknown batch part \(partTag)")
            }
        }
        return writes
    }

    /// The read paths of a guarded batch: at least one, at most ``CoreLimits/guardedReadsMax``, in
    /// increasing order, none inside another (the form ``OpKind/guarded(read:reads:writes:)`` gives).
    private static func readGuardedPaths(from reader: inout ByteReader, allowsEmpty: Bool = false) throws -> [Path] {
        let count = try reader.readCount(max: CoreLimits.guardedReadsMax, minimumBytes: 1)
        guard count > 0 || allowsEmpty else {
            throw CoreError.malformedEncoding(offset: reader.offset, reason: "a guarded batch without reads")
        }
        var reads: [Path] = []
        reads.reserveCapacity(count)
        for _ in 0..<count {
            let path = try readPath(from: &reader)
            if let last = reads.last, !(last < path) || last.isAncestorOrSelf(of: path) {
                throw CoreError.malformedEncoding(
                    offset: reader.offset, reason: "guarded read paths out of order or inside one another")
            }
            reads.append(path)
        }
        return reads
    }

    public static func read(from reader: inout ByteReader) throws -> Op {
        let version = try reader.readByte()
        guard version == format || version == partialFormat else {
            throw CoreError.malformedEncoding(offset: reader.offset - 1, reason: "unknown op format \(version)")
        }
        let isPartial = version == partialFormat
        let stamp = try readStamp(from: &reader)
        let sequence = try reader.readVarint()
        guard sequence >= 1 else { throw CoreError.malformedEncoding(offset: reader.offset, reason: "sequence 0") }
        let path = try readPath(from: &reader)
        let tag = try reader.readByte()
        let kind: OpKind
        switch tag {
        case 1: kind = .set(try readValue(from: &reader, depth: path.depth))
        case 2: kind = .merge(try readChildren(from: &reader, depth: path.depth))
        case 3: kind = .increment(by: try readNumber(from: &reader), from: try readNumber(from: &reader))
        case 4:
            kind = .batch(try readWrites(from: &reader))
        case 5:
            let read = try readVersionVector(from: &reader)
            kind = .transaction(read: read, result: try readValue(from: &reader, depth: path.depth))
        case 6:
            let name = try reader.readString(max: CoreLimits.functionNameBytesMax)
            let version = try reader.readVarint()
            guard version <= UInt64(UInt32.max) else {
                throw CoreError.malformedEncoding(offset: reader.offset, reason: "function version out of range")
            }
            let arguments = try readValue(from: &reader, depth: 0)
            kind = .call(FunctionCall(name: name, version: UInt32(version), arguments: arguments))
        case 7:
            let read = try readVersionVector(from: &reader)
            let reads = try readGuardedPaths(from: &reader, allowsEmpty: isPartial)
            let writes = try readWrites(from: &reader, allowsEmpty: isPartial)
            kind = .guardedBatch(read: read, reads: reads, writes: writes)
        default:
            throw CoreError.malformedEncoding(offset: reader.offset - 1, reason: "unknown op kind \(tag)")
        }
        return Op(stamp: stamp, sequence: sequence, path: path, kind: kind, isPartial: isPartial)
    }

    // MARK: - Parts

    public static func write(_ stamp: Stamp, to writer: inout ByteWriter) {
        writer.write(fixed: stamp.time)
        writer.write(fixed: stamp.replica.rawValue)
    }

    public static func readStamp(from reader: inout ByteReader) throws -> Stamp {
        let time = try reader.readFixed()
        guard let replica = ReplicaID(rawValue: try reader.readFixed()) else {
            throw CoreError.malformedEncoding(offset: reader.offset - 8, reason: "replica id 0")
        }
        return Stamp(time: time, replica: replica)
    }

    public static func write(_ path: Path, to writer: inout ByteWriter) {
        writer.write(varint: UInt64(path.keys.count))
        for key in path.keys { writer.write(string: key.text) }
    }

    public static func readPath(from reader: inout ByteReader) throws -> Path {
        guard reader.paths != nil else { return try decodePath(from: &reader) }
        let start = reader.offset
        if let end = pathEnd(in: reader), let path = reader.paths?.path(encodedBy: reader.bytes[start..<end]) {
            reader.skip(to: end)
            return path
        }
        let path = try decodePath(from: &reader)
        reader.paths?.store(path, encodedBy: reader.bytes[start..<reader.offset])
        return path
    }

    /// Where the path at the reader's offset ends, read from its lengths alone; nil when they are
    /// malformed (decoding then says how).
    private static func pathEnd(in reader: ByteReader) -> Int? {
        var probe = reader
        probe.paths = nil
        guard let count = try? probe.readCount(max: CoreLimits.pathDepthMax, minimumBytes: 2) else { return nil }
        for _ in 0..<count {
            guard let length = try? probe.readCount(max: CoreLimits.keyBytesMax) else { return nil }
            probe.skip(to: probe.offset + length)
        }
        return probe.offset
    }

    private static func decodePath(from reader: inout ByteReader) throws -> Path {
        let count = try reader.readCount(max: CoreLimits.pathDepthMax, minimumBytes: 2)
        var keys: [Key] = []
        keys.reserveCapacity(count)
        for _ in 0..<count {
            keys.append(try Key(validating: reader.readString(max: CoreLimits.keyBytesMax)))
        }
        return Path(uncheckedKeys: keys)
    }

    public static func write(_ vector: VersionVector, to writer: inout ByteWriter) {
        let sorted = vector.entries.sorted { $0.key < $1.key }
        writer.write(varint: UInt64(sorted.count))
        for (origin, sequence) in sorted {
            writer.write(fixed: origin.rawValue)
            writer.write(varint: sequence)
        }
    }

    public static func readVersionVector(from reader: inout ByteReader) throws -> VersionVector {
        let count = try reader.readCount(max: CoreLimits.versionVectorEntriesMax, minimumBytes: 9)
        var entries: [ReplicaID: UInt64] = [:]
        entries.reserveCapacity(count)
        for _ in 0..<count {
            guard let origin = ReplicaID(rawValue: try reader.readFixed()) else {
                throw CoreError.malformedEncoding(offset: reader.offset - 8, reason: "replica id 0")
            }
            entries[origin] = try reader.readVarint()
        }
        return VersionVector(entries)
    }

    static func write(_ children: [MergeChild], to writer: inout ByteWriter) {
        writer.write(varint: UInt64(children.count))
        for child in children {
            write(child.relative, to: &writer)
            write(child.value, to: &writer)
        }
    }

    static func readChildren(from reader: inout ByteReader, depth: Int) throws -> [MergeChild] {
        let count = try reader.readCount(max: CoreLimits.batchPartsMax, minimumBytes: 2)
        var children: [MergeChild] = []
        children.reserveCapacity(count)
        for _ in 0..<count {
            let relative = try readPath(from: &reader)
            guard depth + relative.depth <= CoreLimits.pathDepthMax else {
                throw CoreError.malformedEncoding(offset: reader.offset, reason: "merge child path too deep")
            }
            children.append(
                MergeChild(relative: relative, value: try readValue(from: &reader, depth: depth + relative.depth)))
        }
        do {
            return try MergeChild.validated(children)
        } catch {
            throw CoreError.malformedEncoding(offset: reader.offset, reason: "\(error)")
        }
    }

    static func readNumber(from reader: inout ByteReader) throws -> Number {
        guard let number = Number(try readValue(from: &reader, depth: 0)) else {
            throw CoreError.malformedEncoding(offset: reader.offset, reason: "expected a number")
        }
        return number
    }

    /// Encodes a value canonically (object keys sorted by UTF-8 bytes).
    public static func write(_ value: Value, to writer: inout ByteWriter) {
        switch value {
        case .null: writer.write(byte: 0)
        case .bool(let b): writer.write(byte: b ? 2 : 1)
        case .int(let i):
            writer.write(byte: 3)
            writer.write(zigzag: i)
        case .double(let d):
            writer.write(byte: 4)
            writer.write(fixed: d.bitPattern)
        case .string(let s):
            writer.write(byte: 5)
            writer.write(string: s)
        case .object(let children):
            writer.write(byte: 6)
            writer.write(varint: UInt64(children.count))
            for key in children.keys.sorted() {
                writer.write(string: key.text)
                write(children[key]!, to: &writer)
            }
        }
    }

    /// The size of `value`'s encoding, counted without encoding it.
    public static func byteCount(of value: Value) -> Int {
        switch value {
        case .null, .bool: return 1
        case .int(let int): return 1 + varintByteCount(UInt64(bitPattern: (int << 1) ^ (int >> 63)))
        case .double: return 9
        case .string(let string): return 1 + byteCount(ofText: string)
        case .object(let children):
            var total = 1 + varintByteCount(UInt64(children.count))
            for (key, child) in children { total += byteCount(ofText: key.text) + byteCount(of: child) }
            return total
        }
    }

    /// The size of a path's encoding, counted without encoding it.
    public static func byteCount(of path: Path) -> Int {
        path.keys.reduce(varintByteCount(UInt64(path.depth))) { $0 + byteCount(ofText: $1.text) }
    }

    /// The size of a length-prefixed text (a key, a string).
    public static func byteCount(ofText text: String) -> Int {
        let count = text.utf8.count
        return varintByteCount(UInt64(count)) + count
    }

    /// The size of a varint.
    public static func varintByteCount(_ value: UInt64) -> Int {
        var count = 1
        var rest = value >> 7
        while rest > 0 {
            count += 1
            rest >>= 7
        }
        return count
    }

    /// Encodes a value into fresh bytes.
    public static func encode(_ value: Value) -> [UInt8] {
        var writer = ByteWriter()
        write(value, to: &writer)
        return writer.bytes
    }

    /// Decodes a value that fills `bytes` exactly.
    public static func decodeValue(_ bytes: [UInt8]) throws -> Value {
        var reader = ByteReader(bytes)
        let value = try readValue(from: &reader, depth: 0)
        guard reader.isAtEnd else {
            throw CoreError.malformedEncoding(offset: reader.offset, reason: "trailing bytes after the value")
        }
        return value
    }

    /// Reads a value found `depth` levels below the root, enforcing the depth limit and normalization.
    public static func readValue(from reader: inout ByteReader, depth: Int) throws -> Value {
        let tag = try reader.readByte()
        switch tag {
        case 0: return .null
        case 1: return .bool(false)
        case 2: return .bool(true)
        case 3: return .int(try reader.readZigzag())
        case 4:
            let d = Double(bitPattern: try reader.readFixed())
            guard d.isFinite else {
                throw CoreError.malformedEncoding(offset: reader.offset, reason: "non-finite double")
            }
            guard d != 0 || d.sign == .plus else {
                throw CoreError.malformedEncoding(offset: reader.offset, reason: "negative zero is not canonical")
            }
            return .double(d)
        case 5: return .string(try reader.readString(max: CoreLimits.stringBytesMax))
        case 6:
            guard depth < CoreLimits.pathDepthMax else {
                throw CoreError.malformedEncoding(offset: reader.offset, reason: "value nested too deep")
            }
            let count = try reader.readCount(max: CoreLimits.objectChildrenMax, minimumBytes: 3)
            guard count > 0 else { throw CoreError.malformedEncoding(offset: reader.offset, reason: "empty object") }
            var children: [Key: Value] = [:]
            children.reserveCapacity(count)
            for _ in 0..<count {
                let key = try Key(validating: reader.readString(max: CoreLimits.keyBytesMax))
                let child = try readValue(from: &reader, depth: depth + 1)
                guard !child.isNull else {
                    throw CoreError.malformedEncoding(offset: reader.offset, reason: "null child in object")
                }
                guard children.updateValue(child, forKey: key) == nil else {
                    throw CoreError.malformedEncoding(offset: reader.offset, reason: "duplicate key \(key)")
                }
            }
            return .object(children)
        default:
            throw CoreError.malformedEncoding(offset: reader.offset - 1, reason: "unknown value tag \(tag)")
        }
    }
}
