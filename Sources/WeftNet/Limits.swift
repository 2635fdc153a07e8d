/// Named limits of the libuv transport. Every buffer, queue, delay and count WeftNet bounds lives here.
///
/// `LimitsTests` asserts how they relate (for example, that one largest write always fits between the
/// backpressure threshold and the hard write ceiling).
public enum NetLimits {
    /// Most bytes one ``Connection/write(_:)`` takes (32 MiB): room for what a sync session sends in one
    /// go, a window of frames and one largest frame (asserted in `WeftTests`' limits tests).
    public static let writeBytesMax = 32 * 1024 * 1024
    /// Bytes buffered for writing to one connection beyond which it reports that it is not writable.
    public static let writeBufferBytesMax = 4 * 1024 * 1024
    /// Bytes buffered for writing at or below which a connection that was not writable becomes writable again.
    public static let writeBufferBytesLow = 1024 * 1024
    /// Bytes buffered for writing that no write may exceed: a write that would pass it is refused with
    /// ``NetError/Code/writeBufferFull``. Room for one largest write above ``writeBufferBytesMax``, so a
    /// producer that checks ``Connection/isWritable`` before each write is never refused.
    public static let writeBufferBytesCeiling = writeBufferBytesMax + writeBytesMax
    /// Size of the loop's shared read buffer, the most bytes one read hands to ``Connection/onRead``.
    public static let readChunkBytes = 64 * 1024
    /// Most simultaneous connections one listener accepts; beyond it a new connection gets the listener's
    /// refusal bytes (if any) and is closed.
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
