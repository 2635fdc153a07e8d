import WeftCore

/// What ``ReplicaInstance`` asks its shell to carry out: the instance decides, the shell stores,
/// notifies and sends. A shell switches over them and does nothing else of its own accord.
///
/// ```swift
/// for directive in instance.acknowledge(through: vector) {
///     switch directive {
///     case .markAcknowledged(let sequence): store(.acknowledgedThrough(sequence))
///     case .markStable(let sequence): store(.stableThrough(sequence))
///     case .announceStable(let vector): sessions.announce(vector)
///     }
/// }
/// ```
public enum ReplicaDirective: Sendable, Hashable {
    /// The replica's own ops through `sequence` are acknowledged: store the mark, tell their receipts.
    case markAcknowledged(through: UInt64)
    /// The replica's own ops through `sequence` are stable (every member holds them): store the mark,
    /// tell their receipts (stable implies acknowledged).
    case markStable(through: UInt64)
    /// The stable frontier the replica's acks announce moved to this vector.
    case announceStable(VersionVector)
}

/// What the instance reads of the acknowledgements for one decision: taken from an
/// ``AcknowledgementBook`` and the local durable vector, or built by hand in tests.
///
/// ```swift
/// let inputs = AcknowledgementInputs(book: book, durable: durableVector)
/// let directives = instance.onAcknowledgements(inputs, log: engine)
/// ```
public struct AcknowledgementInputs: Sendable, Hashable {
    /// The last own op a hub, or enough peers, acknowledged.
    public var acknowledgedThrough: UInt64
    /// The ops every member holds (``AcknowledgementBook/stableFrontier(local:)``).
    public var stable: VersionVector
    /// The highest sequence of each origin any replica is known to hold
    /// (``AcknowledgementBook/known(local:)``).
    public var known: VersionVector
    /// How far compaction may go (``AcknowledgementBook/compactionCap``).
    public var compactionCap: CompactionCap

    /// The inputs from their parts.
    public init(acknowledgedThrough: UInt64, stable: VersionVector, known: VersionVector, compactionCap: CompactionCap) {
        self.acknowledgedThrough = acknowledgedThrough
        self.stable = stable
        self.known = known
        self.compactionCap = compactionCap
    }

    /// What `book` says, with `durable` the local replica's durable version vector.
    public init(book: AcknowledgementBook, durable: VersionVector) {
        self.init(
            acknowledgedThrough: book.acknowledgedThrough(origin: book.local), stable: book.stableFrontier(local: durable),
            known: book.known(local: durable), compactionCap: book.compactionCap)
    }
}

/// What ``ReplicaInstance/snapshotInstall(_:wallMillis:log:)`` decided about a snapshot.
public enum SnapshotInstallDecision: Sendable, Hashable {
    /// The log holds every op of the snapshot: nothing to install.
    case holdsEverything
    /// The snapshot does not say the stamp its sender compacted up to: it cannot be placed.
    case lacksStampFrontier
    /// Install this base (the clock has adopted its stamp frontier).
    case install(CompactedBase)
}
