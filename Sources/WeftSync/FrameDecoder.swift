/// Cuts a byte stream into frames, whatever the size of the chunks it arrives in: the one place where
/// the wire's frames are cut (WeftNet moves bytes and knows nothing of them).
///
/// A frame's length is checked as soon as its header is in, before its payload is buffered, so a
/// peer cannot make the decoder hold more than one frame of at most ``frameBytesMax`` bytes plus
/// the chunk being appended. After an error the decoder stays failed.
///
/// ```swift
/// var decoder = FrameDecoder()
/// decoder.append(bytesFromSocket)
/// while let frame = try decoder.nextFrame() {
///     let message = try MessageCodec.decode(frame)
/// }
/// ```
public struct FrameDecoder: Sendable {
    /// Largest frame accepted, header included. Lowered during a handshake.
    public var frameBytesMax: Int {
        didSet { precondition(frameBytesMax >= SyncLimits.frameHeaderBytes, "frameBytesMax below a header") }
    }
    private var buffer: [UInt8] = []
    private var start = 0
    private var failure: SyncError?

    /// A decoder that refuses frames longer than `frameBytesMax` bytes (header included).
    public init(frameBytesMax: Int = SyncLimits.frameBytesMax) {
        precondition(frameBytesMax >= SyncLimits.frameHeaderBytes, "frameBytesMax below a header")
        precondition(frameBytesMax <= SyncLimits.frameBytesMax, "frameBytesMax above SyncLimits.frameBytesMax")
        self.frameBytesMax = frameBytesMax
    }

    /// Bytes received and not yet returned in a frame.
    public var bufferedByteCount: Int { buffer.count - start }

    /// Adds bytes from the stream.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        if start > 0, start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete frame, or nil when more bytes are needed.
    ///
    /// - Throws: ``SyncError`` with code ``SyncErrorCode/frameTooLarge`` when a header announces more
    ///   than ``frameBytesMax`` bytes, or ``SyncErrorCode/malformedFrame`` for a zero length.
    public mutating func nextFrame() throws(SyncError) -> Frame? {
        if let failure { throw failure }
        guard bufferedByteCount >= 4 else { return nil }
        var length = 0
        for index in start..<(start + 4) { length = length << 8 | Int(buffer[index]) }
        guard length >= 1 else {
            return try fail(SyncError(.malformedFrame, "a frame's length must count its type byte"))
        }
        guard length <= frameBytesMax - 4 else {
            let reason = "a frame header announces \(length + 4) bytes; at most \(frameBytesMax) are allowed here"
            return try fail(SyncError(.frameTooLarge, reason))
        }
        guard bufferedByteCount >= 4 + length else { return nil }
        let type = buffer[start + 4]
        let payload = Array(buffer[(start + SyncLimits.frameHeaderBytes)..<(start + 4 + length)])
        start += 4 + length
        compactIfWorthIt()
        return Frame(type: type, payload: payload)
    }

    private mutating func fail(_ error: SyncError) throws(SyncError) -> Frame? {
        failure = error
        buffer = []
        start = 0
        throw error
    }

    /// Drops consumed bytes once they make up most of the buffer, so it never grows past about two frames.
    private mutating func compactIfWorthIt() {
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 1 << 20)
            start = 0
        } else if start >= 64 * 1024, start * 2 >= buffer.count {
            buffer.removeSubrange(0..<start)
            start = 0
        }
    }
}
