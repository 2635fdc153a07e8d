/// A digest of a state that is the same in every process and on every machine: 64-bit FNV-1a over the
/// canonical binary encoding of the value (keys sorted by UTF-8 bytes). Swift's `Hasher` is seeded per
/// process and cannot serve here.
///
/// ```swift
/// StateDigest(of: replicaA.state) == StateDigest(of: replicaB.state)
/// ```
public struct StateDigest: Sendable, Hashable, CustomStringConvertible {
    /// The 64-bit digest.
    public let rawValue: UInt64

    /// The digest of `value`.
    public init(of value: Value) {
        var hasher = FNV1a()
        hasher.add(value)
        rawValue = hasher.state
    }

    /// A digest from raw bits (for example read from a report).
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Sixteen hex digits.
    public var description: String {
        let hex = String(rawValue, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// Parses ``description``'s form: exactly sixteen hex digits; nil otherwise.
    public init?(hex: String) {
        guard hex.utf8.count == 16, let raw = UInt64(hex, radix: 16) else { return nil }
        self.init(rawValue: raw)
    }
}

/// 64-bit FNV-1a, fed with a canonical walk of values.
public struct FNV1a: Sendable {
    /// The running hash.
    public private(set) var state: UInt64 = 0xcbf2_9ce4_8422_2325

    public init() {}

    /// Mixes in one byte.
    public mutating func add(byte: UInt8) {
        state = (state ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
    }

    /// Mixes in the eight bytes of `word`, little end first.
    public mutating func add(_ word: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { add(byte: UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
    }

    /// Mixes in a string's length and UTF-8 bytes.
    public mutating func add(_ string: String) {
        var text = string
        text.withUTF8 { bytes in
            add(UInt64(bytes.count))
            for byte in bytes { add(byte: byte) }
        }
    }

    /// Mixes in a value canonically.
    public mutating func add(_ value: Value) {
        switch value {
        case .null: add(byte: 0)
        case .bool(let b): add(byte: b ? 2 : 1)
        case .int(let i):
            add(byte: 3)
            add(UInt64(bitPattern: i))
        case .double(let d):
            add(byte: 4)
            add(d.bitPattern)
        case .string(let s):
            add(byte: 5)
            add(s)
        case .object(let children):
            add(byte: 6)
            add(UInt64(children.count))
            // Sorted as pairs: sorting the keys alone meant one more table lookup per child.
            for (key, child) in children.sorted(by: { $0.key < $1.key }) {
                add(key.text)
                add(child)
            }
        }
    }
}
