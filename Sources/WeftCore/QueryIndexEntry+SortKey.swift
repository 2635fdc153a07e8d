/// Index entries as bytes whose order is the entries' order, so that a store keeps an index sorted in its
/// own B-tree and reads it back in order without sorting.
///
/// The value's rank comes first (null 0, false 1, true 2, number 3, string 4, object 5). A number follows as
/// the double nearest to it (sign-flipped IEEE bits, big-endian) then the integer's distance to that double
/// (zero for doubles): an integer above 2^53 that rounds to a double sorts exactly beside it. A string
/// follows as its bytes with 0x00 written 0x00 0xFF, ended by 0x00 0x00. Then the key, in ``KeyOrder``: an
/// integer key as 0x00, its value (sign-flipped, 4 bytes), its length; any other key as 0x01 and its bytes.
extension QueryIndexEntry {
    /// The entry's sort key.
    public var sortKey: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24 + key.text.utf8.count)
        let rank = ValueOrder.rank(value)
        bytes.append(UInt8(rank))
        switch value {
        case .int(let integer):
            let nearest = Double(integer)
            append(nearest, to: &bytes)
            // Double(Int64.max) is 2^63, just above every Int64: the distance is then negative, and exact.
            let distance: Int64 = nearest >= 9_223_372_036_854_775_808.0 ? integer &+ Int64.min : integer - Int64(nearest)
            append(UInt64(bitPattern: distance) ^ (1 << 63), to: &bytes)
        case .double(let double):
            append(double, to: &bytes)
            append(UInt64(1) << 63, to: &bytes)
        case .string(let text):
            for byte in text.utf8 {
                bytes.append(byte)
                if byte == 0 { bytes.append(0xFF) }
            }
            bytes.append(0)
            bytes.append(0)
        default: break
        }
        if let integer = KeyOrder.integer(key.text) {
            bytes.append(0)
            let flipped = UInt32(bitPattern: integer) ^ (1 << 31)
            withUnsafeBytes(of: flipped.bigEndian) { bytes.append(contentsOf: $0) }
            bytes.append(UInt8(key.text.utf8.count))
            bytes.append(contentsOf: key.text.utf8)
        } else {
            bytes.append(1)
            bytes.append(contentsOf: key.text.utf8)
        }
        return bytes
    }

    private func append(_ double: Double, to bytes: inout [UInt8]) {
        // 0.0 and -0.0 are one number.
        let bits = (double == 0 ? 0.0 : double).bitPattern
        append(double.sign == .minus && double != 0 ? ~bits : bits ^ (1 << 63), to: &bytes)
    }

    private func append(_ word: UInt64, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: word.bigEndian) { bytes.append(contentsOf: $0) }
    }
}
