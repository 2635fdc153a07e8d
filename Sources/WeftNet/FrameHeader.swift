/// The 4-byte big-endian length that starts every frame on the wire.
///
/// ```
/// +----------------+---------------------------------+
/// | length: UInt32 | payload: `length` bytes          |
/// | big-endian     | (first byte: the message type)   |
/// +----------------+---------------------------------+
/// ```
enum FrameHeader {
    /// Appends the header for a payload of `payloadBytes` bytes.
    ///
    /// - Parameters:
    ///   - payloadBytes: the payload length; the caller has checked it against ``NetLimits/framePayloadBytesMax``.
    ///   - bytes: where to append the four header bytes.
    static func append(payloadBytes: Int, to bytes: inout [UInt8]) {
        precondition(payloadBytes > 0, "a frame payload holds at least its type byte")
        precondition(payloadBytes <= NetLimits.framePayloadBytesMax, "frame payload \(payloadBytes) bytes too large")
        let length = UInt32(payloadBytes)
        bytes.append(UInt8(truncatingIfNeeded: length >> 24))
        bytes.append(UInt8(truncatingIfNeeded: length >> 16))
        bytes.append(UInt8(truncatingIfNeeded: length >> 8))
        bytes.append(UInt8(truncatingIfNeeded: length))
    }

    /// Reads the payload length from the four bytes at `index`.
    static func payloadBytes(in bytes: [UInt8], at index: Int) -> UInt32 {
        precondition(index >= 0 && index + NetLimits.frameHeaderBytes <= bytes.count, "header read out of bounds")
        return UInt32(bytes[index]) << 24 | UInt32(bytes[index + 1]) << 16 | UInt32(bytes[index + 2]) << 8
            | UInt32(bytes[index + 3])
    }
}
