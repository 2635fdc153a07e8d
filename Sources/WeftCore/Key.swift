import Foundation

/// Validation of the keys that name children in the tree.
///
/// A key is non-empty UTF-8 of at most ``CoreLimits/keyBytesMax`` bytes, without `.`, `$`, `#`, `[`,
/// `]`, `/` or ASCII control characters, in Unicode normalization form C.
///
/// NFC matters for convergence: Swift compares strings by canonical equivalence, so two keys that
/// differ only in normalization would be one dictionary entry whose stored bytes depend on arrival
/// order. Requiring NFC makes equal keys equal byte for byte.
public enum Key {
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
