/// Firebase-format push ids: 20 characters of the push alphabet that sort chronologically.
///
/// Weft derives them from an op's stamp instead of from random bits: 8 characters of milliseconds,
/// 3 of the logical counter, and 9 from the top 54 bits of the replica id. Two push ids can only be
/// equal if two replicas share those 54 bits and stamp in the same millisecond with the same counter.
///
/// ```swift
/// let key = PushID.make(from: stamp)   // e.g. "-NxY3k0a---8Hq2V0pZc"
/// ```
public enum PushID {
    /// Number of characters in a push id.
    public static let length = 20

    /// The push id for a stamp.
    public static func make(from stamp: Stamp) -> String {
        PushAlphabet.encode(stamp.millis, digits: 8) + PushAlphabet.encode(UInt64(stamp.counter), digits: 3)
            + PushAlphabet.encode(stamp.replica.rawValue >> 10, digits: 9)
    }

    /// The milliseconds encoded in a push id, or nil when `key` is not one (wrong length, or a character
    /// outside the push alphabet anywhere in it).
    public static func millis(of key: String) -> UInt64? {
        let utf8 = Array(key.utf8)
        guard utf8.count == length, utf8[8...].allSatisfy({ PushAlphabet.reverse[Int($0)] >= 0 }) else { return nil }
        return PushAlphabet.decode(utf8[0..<8])
    }
}
