import WeftCore

/// Who this replica is, as the store records it.
///
/// ```swift
/// let identity = store.identity
/// var clock = HybridClock(replica: identity.replica, lastTime: identity.clockTime)
/// try store.requireOriginal()   // before syncing
/// ```
public struct StoreIdentity: Sendable, Hashable {
    /// The replica id, made once (or given by ``Store/reidentify(newID:)``).
    public var replica: ReplicaID
    /// The packed time of the greatest stamp made or seen, so the clock stays monotonic across restarts.
    public var clockTime: UInt64
    /// A random token of this copy of the database, changed by ``Store/reidentify(newID:)``. Peers may
    /// compare it to spot two replicas presenting the same id.
    public var instanceToken: InstanceToken
    /// The schema version of the stored data.
    public var schemaVersion: Int
    /// Whether the database is the one its identity was made for, or a copy of it.
    public var instance: InstanceState

    /// An identity from its parts.
    public init(
        replica: ReplicaID, clockTime: UInt64, instanceToken: InstanceToken, schemaVersion: Int,
        instance: InstanceState
    ) {
        self.replica = replica
        self.clockTime = clockTime
        self.instanceToken = instanceToken
        self.schemaVersion = schemaVersion
        self.instance = instance
    }
}

/// Whether a database is the original of its identity or a copy.
///
/// ```swift
/// if case .copied(let reason) = store.identity.instance { print(reason) }
/// ```
public enum InstanceState: Sendable, Hashable, CustomStringConvertible {
    /// The database lives where its identity was made.
    case original
    /// The database was copied (or restored from a backup): its replica id belongs to another copy.
    /// It refuses to commit or sync until ``Store/reidentify(newID:)``.
    case copied(reason: String)

    public var description: String {
        switch self {
        case .original: return "original"
        case .copied(let reason): return "copied (\(reason))"
        }
    }
}

/// The random token that names one instance of a database.
///
/// ```swift
/// store.identity.instanceToken.description   // 32 hex digits
/// ```
public struct InstanceToken: Sendable, Hashable, CustomStringConvertible {
    /// The token's bytes (``StoreLimits/instanceTokenBytes`` of them).
    public let bytes: [UInt8]

    /// A token from its bytes.
    /// - Precondition: `bytes` holds ``StoreLimits/instanceTokenBytes`` bytes.
    public init(bytes: [UInt8]) {
        precondition(bytes.count == StoreLimits.instanceTokenBytes, "an instance token has 16 bytes")
        self.bytes = bytes
    }

    /// A token drawn from `generator`.
    public static func random<G: RandomNumberGenerator>(using generator: inout G) -> InstanceToken {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(StoreLimits.instanceTokenBytes)
        while bytes.count < StoreLimits.instanceTokenBytes {
            let word = generator.next()
            for shift in stride(from: 0, to: 64, by: 8) where bytes.count < StoreLimits.instanceTokenBytes {
                bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift)))
            }
        }
        return InstanceToken(bytes: bytes)
    }

    /// Hex digits.
    public var description: String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}

/// How far the log has come: the stable frontier and the watermarks of our own ops' statuses.
///
/// ```swift
/// let marks = store.logMarks
/// marks.frontier          // nil until the first compaction
/// marks.stableThrough     // every op of ours up to this sequence is stable
/// ```
public struct LogMarks: Sendable, Hashable {
    /// Ops at or below this stamp are folded into the base and gone from the log; nil before any compaction.
    public var frontier: Stamp?
    /// Every op of this replica up to this sequence is at least acknowledged.
    public var acknowledgedThrough: UInt64
    /// Every op of this replica up to this sequence is stable.
    public var stableThrough: UInt64

    /// Marks from their parts.
    public init(frontier: Stamp? = nil, acknowledgedThrough: UInt64 = 0, stableThrough: UInt64 = 0) {
        self.frontier = frontier
        self.acknowledgedThrough = acknowledgedThrough
        self.stableThrough = stableThrough
    }

    /// The status of an op as the store reports it: its recorded status raised by the watermarks
    /// (a rejected op stays rejected; the ops of other replicas have none).
    func status(recorded: OpStatus?, origin: ReplicaID, sequence: UInt64, local: ReplicaID) -> OpStatus? {
        guard let recorded, recorded != .rejected, origin == local else { return recorded }
        if sequence <= stableThrough { return .stable }
        if sequence <= acknowledgedThrough { return max(recorded, .acknowledged) }
        return recorded
    }

    /// Applies the watermark changes of a batch (they only move forward).
    mutating func apply(_ changes: [StoreBatch.StatusChange]) {
        for change in changes {
            switch change {
            case .op: continue
            case .acknowledgedThrough(let sequence):
                acknowledgedThrough = max(acknowledgedThrough, sequence)
            case .stableThrough(let sequence):
                stableThrough = max(stableThrough, sequence)
                acknowledgedThrough = max(acknowledgedThrough, sequence)
            }
        }
    }
}
