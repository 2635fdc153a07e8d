import Foundation

/// Validation of the keys that name children in the tree.
///
/// A key is non-empty UTF-8 of at most ``CoreLimits/keyBytesMax`` bytes, without `.`, `$`, `#`, `[`,
/// `]`, `/` or ASCII control characters, in Unicode normalization form C.
///
/// NFC matters for convergence: Swift compares strings by canonical equivalence, so two keys that
/// differ only in normalization would be one dictionary entry whose stored bytes depend on arrival
/// order. Requiring NFC makes equal keys equal byte for byte.
///
/// A key carries a hash of its bytes, computed once when it is made: paths and objects are tables
/// keyed by keys, and an op's keys are looked up many times (in the tree, the path index, every
/// re-fold that replays the op), so a lookup only mixes the stored hash with the table's seed instead
/// of hashing the text again.
///
/// ```swift
/// let key = try Key(validating: "alice")  // text from outside
/// let literal: Key = "users"              // literals in code are trusted, not validated
/// key.text                                // "alice"
/// ```
///
/// The validating initializer has a label on purpose: `Key("a.b")` with a literal is a literal, which
/// Swift never passes to an initializer.
public struct Key: Sendable, Hashable, Comparable, CustomStringConvertible, ExpressibleByStringInterpolation {
    /// The key's text.
    public let text: String
    /// The hash of the text's UTF-8 bytes (in NFC), stable across processes.
    @usableFromInline let hashBits: UInt64

    /// A key from text already known to be valid (read from a validated source or written in code).
    @inlinable public init(unchecked text: String) {
        self.text = text
        hashBits = FastHash.finalize(FastHash.fold(key: text, into: 0))
    }

    /// A validated key.
    ///
    /// - Throws: ``CoreError/invalidKey(key:reason:)`` naming the key and the rule it breaks.
    public init(validating text: String) throws {
        try Key.validate(text)
        self.init(unchecked: text)
    }

    public init(stringLiteral value: String) { self.init(unchecked: value) }

    public init(stringInterpolation: DefaultStringInterpolation) {
        self.init(unchecked: String(stringInterpolation: stringInterpolation))
    }

    @inlinable public static func == (lhs: Key, rhs: Key) -> Bool {
        lhs.hashBits == rhs.hashBits && lhs.text == rhs.text
    }

    @inlinable public func hash(into hasher: inout Hasher) { hasher.combine(hashBits) }

    @inlinable public func _rawHashValue(seed: Int) -> Int { FastHash.hash(hashBits, seed: seed) }

    /// Keys order by their UTF-8 bytes, as the JSON output and the digest sort them. Swift orders
    /// strings by the Unicode scalars of their NFC forms, and UTF-8 keeps scalar order: for keys, which
    /// are in NFC, that is byte order, with the standard library's fast path for ASCII.
    public static func < (lhs: Key, rhs: Key) -> Bool { lhs.text < rhs.text }

    public var description: String { text }

    /// Checks one key.
    ///
    /// ```swift
    /// try Key.validate("alice")   // fine
    /// try Key.validate("a.b")     // throws .invalidKey
    /// ```
    /// - Throws: ``CoreError/invalidKey(key:reason:)`` naming the key and the rule it breaks.
    public static func validate(_ key: String) throws {
        let utf8 = key.utf8
        guard !utf8.isEmpty else { throw CoreError.invalidKey(key: key, reason: "keys cannot be empty") }
        guard utf8.count <= CoreLimits.keyBytesMax else {
            throw CoreError.invalidKey(
                key: key, reason: "key is \(utf8.count) bytes long; at most \(CoreLimits.keyBytesMax) are allowed")
        }
        var ascii = true
        for byte in utf8 {
            if byte >= 0x80 { ascii = false }
            switch byte {
            case UInt8(ascii: "."), UInt8(ascii: "$"), UInt8(ascii: "#"), UInt8(ascii: "["), UInt8(ascii: "]"),
                UInt8(ascii: "/"):
                throw CoreError.invalidKey(key: key, reason: "keys cannot contain '\(Character(Unicode.Scalar(byte)))'")
            case 0..<0x20, 0x7F:
                throw CoreError.invalidKey(key: key, reason: "keys cannot contain control characters")
            default: continue
            }
        }
        if !ascii, !key.precomposedStringWithCanonicalMapping.utf8.elementsEqual(utf8) {
            throw CoreError.invalidKey(key: key, reason: "keys must be in Unicode normalization form C (NFC)")
        }
    }

    /// True when `key` passes ``validate(_:)``.
    public static func isValid(_ key: String) -> Bool { (try? validate(key)) != nil }
}
