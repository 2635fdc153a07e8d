import WeftCore

/// The seam between the public API (`DataNode`, subscriptions, transactions) and the replica engine
/// (merge engine, store, group commit, sync). `Replica` implements it; the API layer only talks to it.
///
/// Every method is thread-safe. Writes are applied to the in-memory state before they return (status
/// `.pending`), then made durable by group commit.
protocol ReplicaBackend: AnyObject, Sendable {
    /// The value at `path` in the current state (null when absent).
    func value(at path: Path) -> Value
    /// The whole current state, as a consistent snapshot (copy-on-write: cheap to take).
    func snapshot() -> Value
    /// The state and the query indexes, together, for queries (see `QueryView`).
    func queryView() -> QueryView
    /// The error that ended the load from the store; nil while loading and once loaded.
    var loadFailure: WeftError? { get }
    /// What this replica has applied (``MergeEngine/versionVector``).
    var versionVector: VersionVector { get }
    /// What the state at `path` reflects, the read record of a transaction there: ``versionVector``
    /// without ops still waiting for a function at a related path (``MergeEngine/appliedVersionVector(for:)``).
    func appliedVersionVector(for path: Path) -> VersionVector
    /// Stamps and applies one local op of the given kind at `path`.
    /// - Throws: `WeftError` (shut down, clock refused the time, invalid op).
    func submit(path: Path, kind: OpKind, at time: WeftTime) throws -> WriteReceipt
    /// Stamps and applies a push: a child of `parent` keyed by the push id of the op's own stamp.
    func submitPush(parent: Path, value: Value, at time: WeftTime) throws -> (key: String, receipt: WriteReceipt)
    /// A fresh push id for a child created without a write (`createChild()`); it sorts after every
    /// push id this replica made before.
    func reservePushKey(at time: WeftTime) throws -> String
    /// Registers a deterministic function for `call` ops; refuses a name no `call` op can carry.
    func register(name: String, version: UInt32, _ function: @escaping FunctionRegistry.Function) throws
    /// Calls `listener` after every change of the state (local writes and merged remote ops), on the
    /// replica's notification queue, in order.
    func addChangeListener(_ listener: @escaping @Sendable (ChangeBatch) -> Void) -> ChangeListenerToken
    /// True when the replica syncs (it listens or connects) or synced before (it stored members):
    /// transactions then wait, by default, for their write to be stable.
    var isReplicating: Bool { get }
    /// Lets work already started finish; later writes fail with `WeftError.shutDown`.
    func shutdown() async
    /// True once shutdown has begun.
    var isShutDown: Bool { get }
}

extension ReplicaBackend {
    /// A backend without sync never replicates.
    var isReplicating: Bool { false }
}

/// When a write happens: now (the replica's wall clock), or an explicit wall time in milliseconds since
/// 1970, validated against the clock rules (it never moves the clock backwards; a time beyond the
/// allowed drift is refused).
public enum WeftTime: Sendable, Hashable {
    case now
    case millis(UInt64)
}

/// Where a local write is on its way to every replica.
public enum WriteStatus: Sendable, Hashable, Comparable {
    /// Applied to this replica's state in memory.
    case pending
    /// In the local database file (fsynced per the durability setting).
    case durable
    /// Acknowledged by the hub or by the configured number of peers.
    case acknowledged
    /// Every member of the replication group has it.
    case stable
    /// Rejected at merge (possibly after a late op from another replica revised its outcome).
    case rejected(Rejection)

    var rank: Int {
        switch self {
        case .pending: return 0
        case .durable: return 1
        case .acknowledged: return 2
        case .stable: return 3
        case .rejected: return 4
        }
    }

    public static func < (lhs: WriteStatus, rhs: WriteStatus) -> Bool { lhs.rank < rhs.rank }
}

/// A batch of state changes, delivered to change listeners after the state changed.
public struct ChangeBatch: Sendable {
    /// Changed nodes with old and new values (each the value at that node; ancestors changed too).
    public var changes: [Change]
    /// True when the changes come from local writes not yet durable; false for merged remote ops and
    /// for local writes re-applied on open.
    public var isLocalPending: Bool
    /// Stamps of the ops applied in this batch, with their outcomes (including revised outcomes of
    /// earlier ops).
    public var outcomes: [Stamp: Outcome]

    public init(changes: [Change], isLocalPending: Bool, outcomes: [Stamp: Outcome]) {
        self.changes = changes
        self.isLocalPending = isLocalPending
        self.outcomes = outcomes
    }
}

/// Keeps a change listener registered until cancelled (or deallocated).
public final class ChangeListenerToken: Sendable {
    private let onCancel: @Sendable () -> Void

    init(onCancel: @escaping @Sendable () -> Void) { self.onCancel = onCancel }

    /// Stops the listener.
    public func cancel() { onCancel() }

    deinit { onCancel() }
}
