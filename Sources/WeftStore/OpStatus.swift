import WeftCore

/// Where one of our own ops stands on its way from the app to every replica (blueprint §4).
///
/// The cases are ordered by progress: `pending < durable < acknowledged < stable`. `rejected` is final
/// and sorts last.
///
/// ```swift
/// if stored.status == .acknowledged { … }
/// OpStatus.durable < OpStatus.stable   // true
/// ```
public enum OpStatus: UInt8, Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Made, not yet in a commit.
    case pending = 0
    /// In the local store, synced per the store's durability.
    case durable = 1
    /// Acknowledged by the hub, or by enough peers.
    case acknowledged = 2
    /// Every member of the membership has it; it may be compacted.
    case stable = 3
    /// The merge rejected it; it has no effect. Final.
    case rejected = 4

    public static func < (lhs: OpStatus, rhs: OpStatus) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String {
        switch self {
        case .pending: return "pending"
        case .durable: return "durable"
        case .acknowledged: return "acknowledged"
        case .stable: return "stable"
        case .rejected: return "rejected"
        }
    }
}

/// An op read back from the log, with its status when it is one of ours.
///
/// ```swift
/// for stored in try store.ops(from: peer, after: 10, limit: 500) { send(stored.op) }
/// ```
public struct StoredOp: Sendable, Hashable {
    /// The op.
    public var op: Op
    /// The status of an op made by this replica; nil for the ops of other replicas.
    public var status: OpStatus?

    /// An op and its status.
    public init(op: Op, status: OpStatus?) {
        self.op = op
        self.status = status
    }
}

/// An op to write in a commit, with its encoding (``OpCodec``) and, for our own ops, its status.
///
/// ```swift
/// var batch = StoreBatch()
/// batch.ops.append(OpRecord(op, status: .durable))        // one of ours
/// batch.ops.append(OpRecord(remote, encoded: frameBytes))  // bytes as they came off the wire
/// ```
public struct OpRecord: Sendable, Hashable {
    /// The op.
    public let op: Op
    /// `OpCodec.encode(op)`: for a received op, a slice of the frame it arrived in (no copy per op).
    public let encoded: ArraySlice<UInt8>
    /// The status to record for an op of this replica; nil for the ops of other replicas.
    public let status: OpStatus?

    /// A record that encodes `op`.
    public init(_ op: Op, status: OpStatus? = nil) {
        self.op = op
        self.encoded = OpCodec.encode(op)[...]
        self.status = status
    }

    /// A record from an op and bytes that already hold its encoding (for example received from a peer).
    ///
    /// - Precondition: `encoded` is `OpCodec.encode(op)`; its format byte and stamp are checked.
    public init(_ op: Op, encoded: [UInt8], status: OpStatus? = nil) {
        self.init(op, encoded: encoded[...], status: status)
    }

    /// A record from an op and a slice of bytes that holds its encoding (as ``EncodedOps`` keeps them).
    ///
    /// - Precondition: `encoded` is `OpCodec.encode(op)`; its format byte and stamp are checked.
    public init(_ op: Op, encoded: ArraySlice<UInt8>, status: OpStatus? = nil) {
        let start = encoded.startIndex
        precondition(encoded.count > 17, "an encoded op holds at least a format byte and a stamp")
        precondition(
            encoded[start] == OpCodec.format || encoded[start] == OpCodec.partialFormat,
            "encoded op has an unknown format byte")
        precondition(StampKey.stamp(encoded[(start + 1)..<(start + 17)]) == op.stamp, "encoded op is not \(op.stamp)")
        self.op = op
        self.encoded = encoded
        self.status = status
    }

    /// The stamp's bytes inside ``encoded``.
    var stampBytes: ArraySlice<UInt8> {
        let start = encoded.startIndex + 1
        return encoded[start..<(start + StampKey.count)]
    }
}
