import WeftCore
import WeftSync

/// What the sync shell needs from the local replica: its op log to read from, a way to merge what
/// peers send, and a signal when the log grew. `Replica` conforms; tests use a merge engine behind a lock.
///
/// Every member is called from the driver's loop thread; implementations must be thread-safe because
/// the app writes from other threads meanwhile.
///
/// ```swift
/// final class EngineTarget: SyncTarget {
///     var durableVersionVector: VersionVector { lock.withLock { engine.versionVector } }
///     func ops(from origin: ReplicaID, after sequence: UInt64, limit: Int) throws -> [Op] { … }
///     func applyRemote(_ ops: EncodedOps) throws -> ApplyReport { … ; notify() }
///     func addOpsAppendedListener(_ listener: @escaping @Sendable () -> Void) -> ChangeListenerToken { … }
/// }
/// ```
protocol SyncTarget: AnyObject, Sendable {
    /// Every op the replica holds durably, per origin, gap-free: what hellos announce and acks cover, so
    /// that a crash never loses an op a peer counts as held.
    var durableVersionVector: VersionVector { get }

    /// Ops of `origin` after `sequence`, in sequence order, at most `limit`; the replica's own ops only
    /// once durable.
    /// - Throws: any storage error; the session it serves closes with ``SyncErrorCode/localFailure``.
    func ops(from origin: ReplicaID, after sequence: UInt64, limit: Int) throws -> [Op]

    /// Merges ops received from a peer (checking their stamps against the clock's drift bound).
    /// - Throws: `WeftError` with code `clockRefused` for a stamp too far ahead, or any storage error; the
    ///   session the ops came from closes with an error frame.
    @discardableResult
    func applyRemote(_ ops: EncodedOps) throws -> ApplyReport

    /// Registers `listener`, called (on any thread) each time the durable log grew: local writes and merged
    /// ops, once durable, until the token returned is cancelled or released.
    func addOpsAppendedListener(_ listener: @escaping @Sendable () -> Void) -> ChangeListenerToken

    /// The acknowledgements in `book` changed, or the durable log (`durable`) grew: the target runs its
    /// policy (`Replica` its ``ReplicaInstance``: acknowledgement and stability marks, the stamp frontier,
    /// the compaction cap) and returns the stable vector and the part of it its acks announce.
    func acknowledgementsChanged(_ book: AcknowledgementBook, durable: VersionVector) -> StableFrontiers

    /// The highest sequence of the replica's own ops known acknowledged (kept across restarts): the
    /// backlog shown for a dialled peer not reached yet.
    var acknowledgedOwnThrough: UInt64 { get }

    /// The members stored by ``persistMembers(_:)``, read when a driver starts: after a restart, a member
    /// that holds no ops of its own still holds the stable frontier back until it acks again.
    var persistedMembers: [ReplicaID] { get }

    /// Stores the replicas sync counts as members (called when the set changes).
    func persistMembers(_ members: [ReplicaID])

    /// How big the local log is, for `weft status`: ops held one by one, ops folded, bytes on disk.
    var logStatus: SyncLogStatus { get }

    /// The ops folded into the compacted base: a peer missing any of them is sent a snapshot.
    var compactionVector: VersionVector { get }

    /// The compacted base, its frontiers and touches, for a peer behind the compaction horizon.
    /// - Throws: any error of the replica; the session closes with ``SyncErrorCode/localFailure``.
    func syncSnapshot() throws -> SyncSnapshot

    /// The stamp the log compacted up to, announced in acks (a hub's leaves compact no further).
    var compactionStamp: Stamp? { get }

    /// How far compaction may go, from the hubs' announced compaction stamps.
    func setCompactionCap(_ cap: CompactionCap)

    /// Registers `listener`, called with the new compaction stamp after each compaction (the sessions
    /// then announce it).
    func addCompactionListener(_ listener: @escaping @Sendable (Stamp) -> Void)

    /// Installs a snapshot a peer sent (see `Replica.installSnapshot(_:)`).
    /// - Throws: when it cannot be installed; the session closes with ``SyncErrorCode/localFailure``.
    @discardableResult
    func installSnapshot(_ snapshot: SyncSnapshot) throws -> SnapshotInstallReport

    /// The outcome of the op stamped `stamp` as the replica folds it now; nil when unknown. A session
    /// with a peer limited to a share asks for it (see `OpProjection`).
    func outcome(of stamp: Stamp) -> Outcome?

    /// The value the applied call stamped `stamp` wrote at its node; nil when unknown (see
    /// `MergeEngine.result(ofCall:)`).
    func callResult(of stamp: Stamp) -> Value?

    /// True when the log holds partial ops (a hub's share of the tree), said in the hello.
    var holdsShare: Bool { get }

    /// Puts decisions the hub revised in place of the ops held (see `Replica.reviseCarried(_:)`).
    /// - Returns: the number of ops replaced.
    /// - Throws: when a revision names no carried decision held; the session closes with
    ///   ``SyncErrorCode/localFailure``.
    @discardableResult
    func reviseCarried(_ revisions: [Op]) throws -> Int
}

/// The stable frontiers a ``SyncTarget`` decided from the acknowledgements.
struct StableFrontiers: Sendable, Hashable {
    /// The ops every member holds.
    var stable: VersionVector
    /// The part of `stable` the replica's acks announce (under its stable stamp frontier).
    var announced: VersionVector
}

/// The size of a replica's log, as `weft status` shows it.
public struct SyncLogStatus: Sendable, Hashable {
    /// Ops every origin made that this replica holds (the total of its version vector).
    public var opsKnown: UInt64
    /// Ops held one by one in the log (not yet folded into the compacted base).
    public var opsInLog: Int
    /// Bytes the database takes on disk; nil for a replica in memory or when unknown.
    public var bytesOnDisk: Int?
}

extension SyncTarget {
    /// The book's stable frontier, announced whole (a target without receipts, stamp frontier or
    /// compaction).
    func acknowledgementsChanged(_ book: AcknowledgementBook, durable: VersionVector) -> StableFrontiers {
        let stable = book.stableFrontier(local: durable)
        return StableFrontiers(stable: stable, announced: stable)
    }

    /// Nothing acknowledged (a target without write receipts).
    var acknowledgedOwnThrough: UInt64 { 0 }

    /// No members kept (a target that does not persist its membership).
    var persistedMembers: [ReplicaID] { [] }

    /// Ignores membership (a target that does not persist it).
    func persistMembers(_ members: [ReplicaID]) {}

    /// Nothing compacted.
    var compactionVector: VersionVector { VersionVector() }

    /// Never compacted.
    var compactionStamp: Stamp? { nil }

    /// Ignored (a target that never compacts).
    func setCompactionCap(_ cap: CompactionCap) {}

    /// Never called (a target that never compacts).
    func addCompactionListener(_ listener: @escaping @Sendable (Stamp) -> Void) {}

    /// The empty state (nothing compacted).
    func syncSnapshot() throws -> SyncSnapshot { SyncSnapshot(value: .null, frontier: VersionVector()) }

    /// Refuses: a target that never compacts has no base to replace.
    func installSnapshot(_ snapshot: SyncSnapshot) throws -> SnapshotInstallReport {
        throw WeftError(.sync, "a snapshot (\(snapshot.frontier)) cannot be installed: this target does not compact")
    }

    /// Unknown (a target that keeps no outcomes): a peer limited to a share is not sent the ops whose
    /// effect on its share hangs on one.
    func outcome(of stamp: Stamp) -> Outcome? { nil }

    /// Unknown (a target that keeps no log of calls).
    func callResult(of stamp: Stamp) -> Value? { nil }

    /// Every op whole (a target that takes no share).
    var holdsShare: Bool { false }

    /// Refuses: a target that keeps no outcomes holds no decision carried to a share.
    func reviseCarried(_ revisions: [Op]) throws -> Int {
        throw WeftError(.sync, "\(revisions.count) revised decisions cannot be taken: this target holds no share")
    }

    /// The durable vector's total, every op held in the log, size unknown.
    var logStatus: SyncLogStatus {
        let known = durableVersionVector.total
        return SyncLogStatus(opsKnown: known, opsInLog: Int(clamping: known), bytesOnDisk: nil)
    }
}

/// Reads a ``SyncTarget`` as the session's ``OpSource``, for the duration of one event.
struct _SyncTargetSource: OpSource {
    let target: any SyncTarget
    /// The stable frontier the driver computed from the acknowledgements, announced in acks.
    var stableFrontier = VersionVector()
    /// The target's compaction stamp as the driver last learnt it, announced in acks.
    var compactionStamp: Stamp?

    var versionVector: VersionVector { target.durableVersionVector }

    var compactionFrontier: VersionVector { target.compactionVector }

    func snapshot() throws -> SyncSnapshot { try target.syncSnapshot() }

    func outcome(of stamp: Stamp) -> Outcome? { target.outcome(of: stamp) }

    func callResult(of stamp: Stamp) -> Value? { target.callResult(of: stamp) }

    var holdsShare: Bool { target.holdsShare }

    func ops(from origin: ReplicaID, after sequence: UInt64, limit: Int, bytesMax: Int) throws -> [Op] {
        precondition(limit >= 1, "a session asks for at least one op")
        let ops = try target.ops(from: origin, after: sequence, limit: limit)
        precondition(ops.count <= limit, "the target returned more ops than asked")
        return ops
    }
}
