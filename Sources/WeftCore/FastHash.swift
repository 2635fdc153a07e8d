/// Hashing of the fixed-size identifiers the engine looks up on every op: stamps and replica ids.
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
