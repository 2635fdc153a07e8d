/// A hybrid logical clock value: 48 bits of wall milliseconds, a 16-bit logical counter, and the
/// replica that made it. Stamps are totally ordered by (milliseconds, counter, replica).
///
/// Written as a 22-character string in Firebase's push-id alphabet, whose byte order is stamp order:
///
/// ```swift
/// let s = Stamp(millis: 1_700_000_000_000, counter: 0, replica: id)
/// Stamp(text: s.text) == s   // true
/// ```
public struct Stamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Milliseconds in the high 48 bits, the logical counter in the low 16.
    public let time: UInt64
    /// The replica that made the stamp.
    public let replica: ReplicaID

    /// A stamp from its parts.
    @inlinable public init(millis: UInt64, counter: UInt16, replica: ReplicaID) {
        precondition(millis <= CoreLimits.stampMillisMax, "stamp milliseconds exceed 48 bits")
        self.time = millis << 16 | UInt64(counter)
        self.replica = replica
    }

    /// A stamp from its packed time and replica.
    @inlinable public init(time: UInt64, replica: ReplicaID) {
        self.time = time
        self.replica = replica
    }

    /// Wall milliseconds.
    @inlinable public var millis: UInt64 { time >> 16 }
    /// Logical counter within the millisecond.
    @inlinable public var counter: UInt16 { UInt16(truncatingIfNeeded: time) }

    @inlinable public static func < (lhs: Stamp, rhs: Stamp) -> Bool {
        lhs.time != rhs.time ? lhs.time < rhs.time : lhs.replica.rawValue < rhs.replica.rawValue
    }

    /// The fixed-width text form (22 characters).
    public var text: String {
        var out = PushAlphabet.encode(time, digits: 11)
        out += PushAlphabet.encode(replica.rawValue, digits: 11)
        return out
    }

    /// Parses the text form.
    /// - Throws: ``CoreError/invalidStamp(text:)``.
    public init(text: String) throws {
        let utf8 = Array(text.utf8)
        guard utf8.count == 22, let time = PushAlphabet.decode(utf8[0..<11]),
            let raw = PushAlphabet.decode(utf8[11..<22]), let replica = ReplicaID(rawValue: raw)
        else { throw CoreError.invalidStamp(text: text) }
        self.init(time: time, replica: replica)
    }

    public var description: String { text }
}

/// Firebase's push-id alphabet, in ASCII order so that fixed-width strings sort like the numbers they encode.
public enum PushAlphabet {
    /// The 64 characters, ascending.
    public static let characters: [UInt8] = Array(
        "-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz".utf8)

    static let reverse: [Int8] = {
        var table = [Int8](repeating: -1, count: 256)
        for (i, c) in characters.enumerated() { table[Int(c)] = Int8(i) }
        return table
    }()

    /// `value` as `digits` characters, most significant first (6 bits each).
    public static func encode(_ value: UInt64, digits: Int) -> String {
        var bytes = [UInt8](repeating: 0, count: digits)
        var rest = value
        for i in stride(from: digits - 1, through: 0, by: -1) {
            bytes[i] = characters[Int(rest & 63)]
            rest >>= 6
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Decodes characters made by ``encode(_:digits:)``; nil on a foreign character or overflow.
    public static func decode(_ bytes: ArraySlice<UInt8>) -> UInt64? {
        var value: UInt64 = 0
        for byte in bytes {
            let digit = reverse[Int(byte)]
            guard digit >= 0, value >> 58 == 0 else { return nil }
            value = value << 6 | UInt64(digit)
        }
        return value
    }
}
