/// Errors raised by WeftCore when input from outside breaks a rule of the data model.
///
/// Every case names what was wrong and where, so a caller can report it and fix the input.
public enum CoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A key is empty, too long, or holds a forbidden character.
    case invalidKey(key: String, reason: String)
    /// A path is deeper than ``CoreLimits/pathDepthMax``.
    case pathTooDeep(path: String, depth: Int)
    /// A path string could not be parsed.
    case invalidPath(path: String, reason: String)
    /// A value breaks a limit (string too long, non-finite number, too deep).
    case invalidValue(path: String, reason: String)
    /// JSON text could not be parsed.
    case invalidJSON(offset: Int, reason: String)
    /// A remote stamp is further ahead of the local clock than allowed.
    case clockDrift(aheadMillis: UInt64, maxMillis: UInt64)
    /// A stamp string or push id is malformed.
    case invalidStamp(text: String)
    /// The clock cannot move forward (48-bit millisecond range exhausted).
    case clockExhausted
    /// Encoded bytes are malformed (truncated, a bad tag, a length beyond limits).
    case malformedEncoding(offset: Int, reason: String)
    /// An op breaks a structural rule (overlapping merge children, empty batch, bad function name).
    case invalidOp(reason: String)
    /// Another replica's compacted base cannot be installed (see ``MergeEngine/installing(_:local:localBaseVector:acknowledgedThrough:nextStamp:)``).
    case snapshotNotInstallable(reason: String)

    public var description: String {
        switch self {
        case let .invalidKey(key, reason): return "invalid key \"\(key.prefix(80))\": \(reason)"
        case let .pathTooDeep(path, depth):
            return "path \(path.prefix(200)) is \(depth) levels deep; at most \(CoreLimits.pathDepthMax) are allowed"
        case let .invalidPath(path, reason): return "invalid path \"\(path.prefix(200))\": \(reason)"
        case let .invalidValue(path, reason): return "invalid value at \(path): \(reason)"
        case let .invalidJSON(offset, reason): return "invalid JSON at byte \(offset): \(reason)"
        case let .clockDrift(ahead, max):
            return "remote stamp is \(ahead) ms ahead of the local clock (at most \(max) ms allowed); "
                + "one of the two clocks is wrong: check this machine's and the peer's"
        case let .invalidStamp(text): return "malformed stamp \"\(text.prefix(40))\""
        case .clockExhausted: return "the clock reached the end of its 48-bit millisecond range"
        case let .malformedEncoding(offset, reason): return "malformed encoding at byte \(offset): \(reason)"
        case let .invalidOp(reason): return "invalid op: \(reason)"
        case let .snapshotNotInstallable(reason): return "the snapshot cannot be installed: \(reason)"
        }
    }
}
