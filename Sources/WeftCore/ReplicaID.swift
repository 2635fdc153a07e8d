/// The identity of one replica: 64 random bits, made once and stored with the replica.
///
/// ```swift
/// var rng = SeededGenerator(seed: 7)
/// let id = ReplicaID.random(using: &rng)
/// ```
public struct ReplicaID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The raw bits; never zero.
    public let rawValue: UInt64

    /// An id from raw bits; nil for zero, which no replica may use.
    public init?(rawValue: UInt64) {
        guard rawValue != 0 else { return nil }
        self.rawValue = rawValue
    }

    /// An id from raw bits known not to be zero.
    @inline(__always) init(nonZero rawValue: UInt64) {
        assert(rawValue != 0, "replica ids are never zero")
        self.rawValue = rawValue
    }

    /// A fresh id drawn from `generator` (the caller supplies randomness: the core has none of its own).
    public static func random<G: RandomNumberGenerator>(using generator: inout G) -> ReplicaID {
        while true {
            if let id = ReplicaID(rawValue: generator.next()) { return id }
        }
    }

    public static func < (lhs: ReplicaID, rhs: ReplicaID) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Sixteen hex digits.
    public var description: String {
        let hex = String(rawValue, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// Parses sixteen (or fewer) hex digits.
    public init?(hex: String) {
        guard let raw = UInt64(hex, radix: 16) else { return nil }
        self.init(rawValue: raw)
    }
}
