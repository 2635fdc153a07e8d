/// Validation of the keys that name children in the tree.
///
/// A key is non-empty UTF-8 of at most ``CoreLimits/keyBytesMax`` bytes, without `.`, `$`, `#`, `[`,
/// `]`, `/` or ASCII control characters.
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
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "."), UInt8(ascii: "$"), UInt8(ascii: "#"), UInt8(ascii: "["), UInt8(ascii: "]"),
                UInt8(ascii: "/"):
                throw CoreError.invalidKey(key: key, reason: "keys cannot contain '\(Character(Unicode.Scalar(byte)))'")
            case 0..<0x20, 0x7F:
                throw CoreError.invalidKey(key: key, reason: "keys cannot contain control characters")
            default: continue
            }
        }
    }

    /// True when `key` passes ``validate(_:)``.
    public static func isValid(_ key: String) -> Bool { (try? validate(key)) != nil }
}
