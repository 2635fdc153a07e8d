/// Named limits of the sync protocol.
public enum SyncLimits {
    /// Largest frame, header included, in bytes.
    public static let frameBytesMax = 16 * 1024 * 1024
    /// Most ops in one batch frame.
    public static let batchOpsMax = 4096
    /// Largest payload of one batch frame, in bytes.
    public static let batchBytesMax = 1024 * 1024
    /// Most unacknowledged bytes in flight to one peer (the backpressure window).
    public static let windowBytesMax = 8 * 1024 * 1024
}
