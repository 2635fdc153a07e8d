/// Named limits of the libuv transport.
public enum NetLimits {
    /// Most bytes buffered for writing to one connection before it is paused.
    public static let writeBufferBytesMax = 16 * 1024 * 1024
    /// Most simultaneous connections one listener accepts.
    public static let connectionsMax = 1024
    /// First reconnect delay, in milliseconds.
    public static let reconnectDelayMillisecondsMin = 50
    /// Longest reconnect delay, in milliseconds.
    public static let reconnectDelayMillisecondsMax = 10_000
}
