/// Splits a byte stream into length-prefixed frames, whatever way the stream was cut into reads.
///
/// Sans-I/O: it only sees bytes. A header is checked against ``NetLimits/framePayloadBytesMax`` as soon as its
/// four bytes are in, before the payload is awaited or any room is made for it; buffered bytes never exceed
/// one largest frame plus one read.
///
/// ```swift
/// var decoder = FrameDecoder()
/// decoder.append(chunk)
/// while let frame = try decoder.nextFrame() { deliver(frame) }
/// ```
struct FrameDecoder {
    /// A header that breaks the framing rules.
    enum Violation: Error, Equatable {
        /// The header announced more than ``NetLimits/framePayloadBytesMax`` payload bytes.
        case tooLarge(announcedBytes: UInt32)
        /// The header announced an empty payload (a frame carries at least its type byte).
        case empty
    }

    /// The largest payload a header may announce: ``NetLimits/framePayloadBytesMax``, or less when the
    /// protocol above allows less for now (a sync handshake takes smaller frames than a session).
    var payloadBytesMax = NetLimits.framePayloadBytesMax {
        didSet {
            precondition((1...NetLimits.framePayloadBytesMax).contains(payloadBytesMax), "frame limit out of range")
        }
    }

    /// Bytes received and not yet returned as frames; the live part starts at ``readIndex``.
    private var buffer: [UInt8] = []
    /// Where the next frame's header starts in ``buffer``.
    private var readIndex = 0

    /// Bytes received but not yet returned in a frame.
    var bufferedBytes: Int { buffer.count - readIndex }

    /// Adds bytes read from the stream.
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// Adds bytes read from the stream.
    mutating func append(contentsOf bytes: some Collection<UInt8>) {
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// Returns the next whole frame's payload, or nil when more bytes are needed.
    ///
    /// - Throws: a ``Violation`` when the next header is malformed; the stream cannot be resynchronised.
    mutating func nextFrame() throws(Violation) -> [UInt8]? {
        guard bufferedBytes >= NetLimits.frameHeaderBytes else { return nil }
        let announced = FrameHeader.payloadBytes(in: buffer, at: readIndex)
        guard announced > 0 else { throw .empty }
        guard announced <= payloadBytesMax else { throw .tooLarge(announcedBytes: announced) }
        let payloadBytes = Int(announced)
        guard bufferedBytes >= NetLimits.frameHeaderBytes + payloadBytes else { return nil }
        let start = readIndex + NetLimits.frameHeaderBytes
        let frame = Array(buffer[start..<start + payloadBytes])
        readIndex = start + payloadBytes
        precondition(readIndex <= buffer.count, "frame decoder read past its buffer")
        return frame
    }

    /// Drops consumed bytes so the buffer holds at most the unfinished frame and what follows it.
    private mutating func compact() {
        if readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= NetLimits.readChunkBytes * 2)
            readIndex = 0
        } else if readIndex > 0 && readIndex >= buffer.count / 2 {
            buffer.removeFirst(readIndex)
            readIndex = 0
        }
    }
}
