/// Firebase's order of child keys: keys that read as 32-bit integers first, by value; then every other
/// key, by UTF-8 bytes.
///
/// ```swift
/// ["b", "10", "a", "2", "-1"].sorted(by: KeyOrder.precedes)   // ["-1", "2", "10", "a", "b"]
/// ```
///
/// Push ids sort chronologically in this order, and array indexes (`"0"`, `"1"`, … `"10"`) numerically.
public enum KeyOrder {
    /// True when `lhs` sorts before `rhs`.
    public static func precedes(_ lhs: String, _ rhs: String) -> Bool {
        switch (integer(lhs), integer(rhs)) {
        case let (left?, right?):
            if left != right { return left < right }
            // "1" and "01" read alike: the shorter first, then bytes, so the order stays total.
            if lhs.utf8.count != rhs.utf8.count { return lhs.utf8.count < rhs.utf8.count }
            return lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
        case (.some, nil): return true
        case (nil, .some): return false
        case (nil, nil): return lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
        }
    }

    /// The key as a 32-bit integer: an optional `-` then 1 to 10 digits, within `Int32`'s range.
    public static func integer(_ key: String) -> Int32? {
        let utf8 = key.utf8
        let digits = utf8.first == UInt8(ascii: "-") ? utf8.dropFirst() : utf8[...]
        guard (1...10).contains(digits.count), digits.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return Int32(key)
    }
}
