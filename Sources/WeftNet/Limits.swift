/// Named limits of the libuv transport. Every buffer, queue, delay and count WeftNet bounds lives here.
///
/// `LimitsTests` asserts how they relate (for example, that one largest frame always fits between the
/// backpressure threshold and the hard write ceiling).
public enum NetLimits {
    /// Bytes of the length header that starts every frame (a big-endian `UInt32`).
    public static let frameHeaderBytes = 4
    /// Largest frame, header included, in bytes (16 MiB). Checked before any allocation, on read and on write.
    public static let frameBytesMax = 16 * 1024 * 1024
    /// Largest frame payload (type byte included), in bytes.
    public static let framePayloadBytesMax = frameBytesMax - frameHeaderBytes
    /// Bytes buffered for writing to one connection beyond which it reports that it is not writable.
    public static let writeBufferBytesMax = 4 * 1024 * 1024
    /// Bytes buffered for writing at or below which a connection that was not writable becomes writable again.
    public static let writeBufferBytesLow = 1024 * 1024
    /// Bytes buffered for writing that no write may exceed: a frame that would pass it is refused with
    /// ``NetError/Code/writeBufferFull``. Room for one largest frame above ``writeBufferBytesMax``, so a
    /// producer that checks ``Connection/isWritable`` before each frame is never refused.
    public static let writeBufferBytesCeiling = writeBufferBytesMax + frameBytesMax
    /// Size of the loop's shared read buffer, the most bytes one read hands to a connection.
    public static let readChunkBytes = 64 * 1024
    /// Most simultaneous connections one listener accepts; beyond it new connections are closed at once.
    public static let connectionsMax = 1024
    /// Pending-connection queue length passed to `listen(2)`.
    public static let listenBacklog = 128
    /// Most closures waiting in one event loop's cross-thread queue.
    public static let executeQueueClosuresMax = 65_536
    /// Longest wait for an outbound TCP connection to be established, in milliseconds.
    public static let connectTimeoutMillisecondsMax = 10_000
    /// Longest wait, after a graceful `close()`, for buffered writes to drain before the socket is dropped.
    public static let closeLingerMillisecondsMax = 5_000
    /// Longest host name accepted for resolution, in UTF-8 bytes (DNS limit).
    public static let hostBytesMax = 253
    /// First reconnect delay, in milliseconds.
    public static let reconnectDelayMillisecondsMin = 50
    /// Longest reconnect delay, in milliseconds.
    public static let reconnectDelayMillisecondsMax = 10_000
    /// How long a connection must stay open for the reconnect backoff to start again from its first delay.
    public static let reconnectHealthyMillisecondsMin = 2_000
}
