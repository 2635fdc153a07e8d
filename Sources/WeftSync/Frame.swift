import WeftCore

/// One unit on the wire: `[u32 big-endian length][u8 type][payload]`, where the length counts the
/// type byte and the payload (so it is at least 1).
///
/// ```swift
/// let frame = Frame(type: MessageType.ping.rawValue, payload: [7])
/// frame.encoded()   // [0, 0, 0, 2, 10, 7]
/// ```
public struct Frame: Sendable, Hashable {
    /// The type byte; see ``MessageType`` (unknown types still form a frame, and fail at decoding).
    public var type: UInt8
    /// The bytes after the type byte.
    public var payload: [UInt8]

    /// A frame from its type byte and payload.
    public init(type: UInt8, payload: [UInt8]) {
        self.type = type
        self.payload = payload
    }

    /// Size on the wire, header included.
    public var encodedCount: Int { SyncLimits.frameHeaderBytes + payload.count }

    /// The frame's bytes, header included.
    public func encoded() -> [UInt8] {
        var builder = FrameBuilder(type: type, capacity: payload.count)
        builder.writer.write(raw: payload)
        return builder.finish()
    }
}

/// Builds one frame in place: the header is reserved first and its length patched at the end, so a
/// payload is written once, straight into the frame's buffer.
struct FrameBuilder {
    var writer: ByteWriter

    init(type: UInt8, capacity: Int = 64) {
        writer = ByteWriter(capacity: SyncLimits.frameHeaderBytes + capacity)
        writer.write(fixed32: 0)
        writer.write(byte: type)
    }

    init(_ type: MessageType, capacity: Int = 64) { self.init(type: type.rawValue, capacity: capacity) }

    /// Bytes written after the header so far.
    var payloadCount: Int { writer.bytes.count - SyncLimits.frameHeaderBytes }

    /// The finished frame. The builder is left empty, so the returned array is uniquely referenced
    /// and patching its header does not copy it.
    mutating func finish() -> [UInt8] {
        guard let frame = finishIfFits() else { preconditionFailure("an outgoing frame exceeds frameBytesMax") }
        return frame
    }

    /// The finished frame, or nil when it exceeds ``SyncLimits/frameBytesMax``: for messages whose size
    /// depends on the replica's data (a client's reply or event carries a whole subtree).
    mutating func finishIfFits() -> [UInt8]? {
        var bytes = writer.bytes
        writer = ByteWriter(capacity: 0)
        guard bytes.count <= SyncLimits.frameBytesMax else { return nil }
        precondition(bytes.count >= SyncLimits.frameHeaderBytes, "a frame holds at least its header")
        let length = UInt32(bytes.count - 4)
        bytes[0] = UInt8(truncatingIfNeeded: length >> 24)
        bytes[1] = UInt8(truncatingIfNeeded: length >> 16)
        bytes[2] = UInt8(truncatingIfNeeded: length >> 8)
        bytes[3] = UInt8(truncatingIfNeeded: length)
        return bytes
    }
}
