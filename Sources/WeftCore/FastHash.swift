import Foundation

/// Hashing of the identifiers the engine and the committer look up on every op: stamps, replica ids
/// and paths.
///
/// `Dictionary` and `Set` hash a key through `_rawHashValue(seed:)`, whose default runs a full
/// SipHash-1-3 `Hasher`. A stamp is two 64-bit words, so these types answer with the 64-bit finalizer
/// of MurmurHash3 over each word instead, about a fifth of the cost. The per-table seed goes in first
/// and reaches every bit of the result, so a peer that cannot read the seed cannot aim ops at one
/// bucket.
@usableFromInline enum FastHash {
    /// MurmurHash3's finalizer: a bijection of 64-bit words that spreads every input bit.
    @inlinable @inline(__always) static func finalize(_ value: UInt64) -> UInt64 {
        var x = value
        x ^= x >> 33
        x &*= 0xFF51_AFD7_ED55_8CCD
        x ^= x >> 33
        x &*= 0xC4CE_B9FE_1A85_EC53
        x ^= x >> 33
        return x
    }

    /// One word, seeded.
    @inlinable @inline(__always) static func hash(_ word: UInt64, seed: Int) -> Int {
        Int(truncatingIfNeeded: finalize(word ^ UInt64(truncatingIfNeeded: seed)))
    }

    /// Two words, seeded.
    @inlinable @inline(__always) static func hash(_ first: UInt64, _ second: UInt64, seed: Int) -> Int {
        Int(truncatingIfNeeded: finalize(finalize(first ^ UInt64(truncatingIfNeeded: seed)) ^ second))
    }
}

extension FastHash {
    /// Folds the text of `key` into `state`, consistently with `String` equality: ASCII text (every
    /// valid key of the usual kind) folds its bytes, eight at a time; other text folds the bytes of its
    /// Unicode NFC form, which two equal strings share (Swift compares strings by canonical
    /// equivalence: "\u{212A}" (Kelvin) equals "K", and both fold as "K").
    @inlinable static func fold(key: String, into state: UInt64) -> UInt64 {
        var text = key
        if let folded = text.withUTF8({ foldASCII($0, into: state) }) { return folded }
        var normal = key.precomposedStringWithCanonicalMapping
        return normal.withUTF8 { foldBytes($0, into: state) }
    }

    /// The fold of ASCII bytes; nil when a byte is not ASCII.
    @inlinable static func foldASCII(_ bytes: UnsafeBufferPointer<UInt8>, into state: UInt64) -> UInt64? {
        var high: UInt8 = 0
        for byte in bytes { high |= byte }
        guard high < 0x80 else { return nil }
        return foldBytes(bytes, into: state)
    }

    /// The fold of any bytes, eight at a time, with their count.
    @inlinable static func foldBytes(_ bytes: UnsafeBufferPointer<UInt8>, into state: UInt64) -> UInt64 {
        var state = finalize(state ^ UInt64(bytes.count))
        var word: UInt64 = 0
        var shift: UInt64 = 0
        for byte in bytes {
            word |= UInt64(byte) << shift
            shift += 8
            if shift == 64 {
                state = finalize(state ^ word)
                word = 0
                shift = 0
            }
        }
        return shift == 0 ? state : finalize(state ^ word)
    }
}

extension Path {
    @inlinable public func hash(into hasher: inout Hasher) { hasher.combine(_rawHashValue(seed: 0)) }

    /// Each key's text folded in turn (``FastHash/fold(key:into:)``): a few multiplications per eight
    /// bytes instead of a SipHash `Hasher` per path. Equal paths hash equal, as `Hashable` requires.
    @inlinable public func _rawHashValue(seed: Int) -> Int {
        var state = UInt64(truncatingIfNeeded: seed) ^ UInt64(keys.count)
        for key in keys { state = FastHash.finalize(state ^ key.hashBits) }
        return Int(truncatingIfNeeded: FastHash.finalize(state))
    }
}

extension Stamp {
    @inlinable public func hash(into hasher: inout Hasher) {
        hasher.combine(time)
        hasher.combine(replica.rawValue)
    }

    @inlinable public func _rawHashValue(seed: Int) -> Int { FastHash.hash(time, replica.rawValue, seed: seed) }
}

extension ReplicaID {
    @inlinable public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

    @inlinable public func _rawHashValue(seed: Int) -> Int { FastHash.hash(rawValue, seed: seed) }
}
