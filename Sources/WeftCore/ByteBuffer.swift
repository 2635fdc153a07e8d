import Foundation

/// Appends the primitives of Weft's binary encodings: LEB128 varints, zigzag integers, fixed-width
/// big-endian words, length-prefixed strings.
public struct ByteWriter: Sendable {
    /// The bytes written so far.
    public internal(set) var bytes: [UInt8]

    public init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public mutating func write(byte: UInt8) { bytes.append(byte) }

    public mutating func write(varint value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    public mutating func write(zigzag value: Int64) {
        write(varint: UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    /// Eight bytes, big-endian, in one append.
    public mutating func write(fixed value: UInt64) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// Four bytes, big-endian, in one append.
    public mutating func write(fixed32 value: UInt32) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    public mutating func write(string: String) {
        write(varint: UInt64(string.utf8.count))
        bytes.append(contentsOf: string.utf8)
    }

    public mutating func write(bytes other: some Collection<UInt8>) {
        write(varint: UInt64(other.count))
        bytes.append(contentsOf: other)
    }

    public mutating func write(raw other: some Sequence<UInt8>) { bytes.append(contentsOf: other) }
}

/// Reads what ``ByteWriter`` wrote. Every length and count is checked against the bytes left and a
/// limit before anything is allocated; malformed input throws ``CoreError/malformedEncoding(offset:reason:)``.
public struct ByteReader {
    public let bytes: [UInt8]
    /// Position of the next byte to read.
    public private(set) var offset: Int
    let end: Int
    /// Paths already decoded, when the reader reads many ops (see ``PathCache``).
    public var paths: PathCache?

    public init(_ bytes: [UInt8], offset: Int = 0, end: Int? = nil) {
        self.bytes = bytes
        self.offset = offset
        self.end = end ?? bytes.count
    }

    /// Bytes left.
    public var remaining: Int { end - offset }

    /// Moves to `position`, at or after the current offset and within the bytes.
    mutating func skip(to position: Int) {
        precondition(position >= offset && position <= end, "a reader skips forward within its bytes")
        offset = position
    }
    /// True when every byte was read.
    public var isAtEnd: Bool { offset >= end }

    func fail(_ reason: String) -> CoreError { .malformedEncoding(offset: offset, reason: reason) }

    public mutating func readByte() throws -> UInt8 {
        guard offset < end else { throw fail("unexpected end of data") }
        defer { offset += 1 }
        return bytes[offset]
    }

    public mutating func readVarint() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try readByte()
            guard shift < 64, !(shift == 63 && byte > 1) else { throw fail("varint is too long") }
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return result }
            shift += 7
        }
    }

    public mutating func readZigzag() throws -> Int64 {
        let raw = try readVarint()
        return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }

    public mutating func readFixed() throws -> UInt64 {
        guard remaining >= 8 else { throw fail("unexpected end of data") }
        var value: UInt64 = 0
        for i in 0..<8 { value = value << 8 | UInt64(bytes[offset + i]) }
        offset += 8
        return value
    }

    public mutating func readFixed32() throws -> UInt32 {
        guard remaining >= 4 else { throw fail("unexpected end of data") }
        var value: UInt32 = 0
        for i in 0..<4 { value = value << 8 | UInt32(bytes[offset + i]) }
        offset += 4
        return value
    }

    /// A count of items each taking at least `minimumBytes`, checked against the bytes left and `max`.
    public mutating func readCount(max: Int, minimumBytes: Int = 1) throws -> Int {
        let raw = try readVarint()
        guard raw <= UInt64(max) else { throw fail("count \(raw) exceeds the limit \(max)") }
        let count = Int(raw)
        guard count * minimumBytes <= remaining else { throw fail("count \(count) exceeds the bytes left") }
        return count
    }

    public mutating func readString(max: Int) throws -> String {
        let count = try readCount(max: max)
        defer { offset += count }
        let start = offset
        let string: String? = bytes.withUnsafeBufferPointer { buffer in
            let text = UnsafeBufferPointer(rebasing: buffer[start..<(start + count)])
            // ASCII, the usual key, is valid UTF-8 as it is: decoded without the generic validation.
            var high: UInt8 = 0
            for byte in text { high |= byte }
            if high < 0x80 { return String(decoding: text, as: UTF8.self) }
            return String(validating: text, as: UTF8.self)
        }
        guard let string else { throw fail("string is not valid UTF-8") }
        return string
    }

    public mutating func readBytes(max: Int) throws -> [UInt8] {
        let count = try readCount(max: max)
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }
}

/// Paths already decoded, by their encoded bytes: the ops of a batch, and of a peer's batches one after
/// another, name the same few paths again and again (hot counters, shared objects), and a repeat is
/// found by hashing and comparing its bytes instead of building and validating every key again. A fixed
/// number of slots, the newest path taking the slot of its hash; each slot keeps a copy of its bytes, so
/// a cache outlives the buffers it read.
///
/// A reader gets one for the ops of one buffer (``EncodedOps/read(from:countMax:)``); a sync session
/// keeps one across the frames of its peer.
public struct PathCache: Sendable {
    /// Most slots a cache has.
    public static let slotCountMax = 256
    private let slotCount: Int
    private var slots: [(bytes: [UInt8], path: Path)?]

    /// A cache for about `expectedPaths` paths: a power of two of slots, from 8 to ``slotCountMax``
    /// (a small frame does not make and free hundreds of empty slots).
    public init(expectedPaths: Int = PathCache.slotCountMax) {
        var count = 8
        while count < min(expectedPaths, Self.slotCountMax) { count <<= 1 }
        slotCount = count
        slots = Array(repeating: nil, count: count)
    }

    /// The path encoded by `bytes`, if decoded before.
    func path(encodedBy bytes: ArraySlice<UInt8>) -> Path? {
        guard let slot = slots[slot(of: bytes)], slot.bytes[...].hasSameBytes(as: bytes) else { return nil }
        return slot.path
    }

    /// Keeps `path`, decoded from `bytes`.
    mutating func store(_ path: Path, encodedBy bytes: ArraySlice<UInt8>) {
        slots[slot(of: bytes)] = (Array(bytes), path)
    }

    /// A slot from the length and the first and last eight bytes (a path's keys differ at their ends;
    /// two paths sharing a slot only cost a miss, as their bytes are compared).
    private func slot(of bytes: ArraySlice<UInt8>) -> Int {
        let hash = bytes.withUnsafeBytes { raw -> UInt64 in
            var state = UInt64(raw.count)
            if raw.count >= 8 {
                state ^= raw.loadUnaligned(as: UInt64.self)
                state = FastHash.finalize(state) ^ raw.loadUnaligned(fromByteOffset: raw.count - 8, as: UInt64.self)
            } else {
                for byte in raw { state = state << 8 | UInt64(byte) }
            }
            return FastHash.finalize(state)
        }
        return Int(truncatingIfNeeded: hash % UInt64(slotCount))
    }
}

extension ArraySlice where Element == UInt8 {
    /// True when both hold the same bytes, compared as memory (`memcmp`) rather than element by element.
    @inlinable public func hasSameBytes(as other: ArraySlice<UInt8>) -> Bool {
        guard count == other.count else { return false }
        return withUnsafeBytes { mine in
            other.withUnsafeBytes { theirs in
                guard let first = mine.baseAddress, let second = theirs.baseAddress else { return true }
                return memcmp(first, second, mine.count) == 0
            }
        }
    }
}
