import WeftCore

/// Keys of a ``Values`` collection: strings of the push-id alphabet, ordered by their bytes, so that a key
/// can always be made between two others (fractional indexing).
///
/// A key made between `lower` and `upper` is the shortest string of the alphabet strictly between them,
/// built digit by digit (it ends with a digit above the alphabet's first, so a later key still fits
/// between it and `lower`), followed by a fresh push id, so two replicas inserting into the same gap at
/// once make two keys, both in the gap, ordered by their push ids, instead of one key that one write
/// would overwrite.
enum ValuesKeys {
    static let alphabet = PushAlphabet.characters
    static let digits: [Int] = {
        var table = [Int](repeating: -1, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = index }
        return table
    }()

    /// True when `key` can bound a key made between two others: only alphabet characters, longer than a
    /// 32-bit integer can be written (integers sort before every other key).
    static func isFractional(_ key: String) -> Bool {
        key.utf8.count > 11 && key.utf8.allSatisfy { digits[Int($0)] >= 0 }
    }

    /// A key strictly between `lower` and `upper` (nil: no bound), ending with `suffix`; nil when there is
    /// none (`upper` is `lower` followed by the alphabet's first character only).
    ///
    /// - Precondition: both bounds are fractional and `lower` sorts before `upper`.
    static func key(between lower: String?, and upper: String?, suffix: String) -> String? {
        let low = Array((lower ?? "").utf8)
        let high = upper.map { Array($0.utf8) }
        precondition(low.allSatisfy { digits[Int($0)] >= 0 }, "a lower bound of the alphabet")
        if let high {
            precondition(low.lexicographicallyPrecedes(high), "lower sorts before upper")
        }
        var result: [UInt8] = []
        var lowerTight = true
        var upperTight = high != nil
        var position = 0
        while true {
            let lowDigit = lowerTight && position < low.count ? digits[Int(low[position])] : 0
            var highDigit = 64
            if upperTight, let high {
                // The result so far is `upper` itself: nothing fits below it any more.
                guard position < high.count else { return nil }
                highDigit = digits[Int(high[position])]
            }
            if highDigit - lowDigit >= 2 {
                result.append(alphabet[(lowDigit + highDigit) / 2])
                break
            }
            result.append(alphabet[lowDigit])
            if highDigit > lowDigit { upperTight = false }
            if !(lowerTight && position < low.count) { lowerTight = false }
            position += 1
        }
        let key = String(decoding: result, as: UTF8.self) + suffix
        precondition(lower.map { $0.utf8.lexicographicallyPrecedes(key.utf8) } ?? true, "the key is above lower")
        precondition(upper.map { key.utf8.lexicographicallyPrecedes($0.utf8) } ?? true, "the key is below upper")
        return key
    }

    /// `count` ordered keys starting with `base` (a push id): `base` plus the index in 4 alphabet digits.
    static func sequence(base: String, count: Int) -> [String] {
        precondition(count <= 64 * 64 * 64 * 64, "at most 64^4 elements at once")
        return (0..<count).map { base + PushAlphabet.encode(UInt64($0), digits: 4) }
    }
}
