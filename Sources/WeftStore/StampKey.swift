import WeftCore

/// The 16-byte big-endian form of a stamp (packed time, then replica) that keys the op log, so that
/// byte order is stamp order. It is also how ``OpCodec`` writes a stamp.
enum StampKey {
    /// Byte count of a key.
    static let count = 16

    /// The key of `stamp`.
    static func bytes(_ stamp: Stamp) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        let replica = stamp.replica.rawValue
        for i in 0..<8 {
            out[i] = UInt8(truncatingIfNeeded: stamp.time >> UInt64(56 - 8 * i))
            out[8 + i] = UInt8(truncatingIfNeeded: replica >> UInt64(56 - 8 * i))
        }
        return out
    }

    /// The stamp of a key; nil when `bytes` is not a key (wrong length, replica 0).
    static func stamp(_ bytes: some Collection<UInt8>) -> Stamp? {
        guard bytes.count == count else { return nil }
        var time: UInt64 = 0
        var replica: UInt64 = 0
        for (i, byte) in bytes.enumerated() {
            if i < 8 { time = time << 8 | UInt64(byte) } else { replica = replica << 8 | UInt64(byte) }
        }
        guard let id = ReplicaID(rawValue: replica) else { return nil }
        return Stamp(time: time, replica: id)
    }
}
