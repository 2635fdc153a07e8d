import Foundation
import WeftCore
import WeftStore

/// How a ``Replica`` is opened and how it writes.
///
/// ```swift
/// var options = ReplicaOptions()
/// options.durability = .full                    // every group commit survives a power loss
/// options.groupCommitDelayMilliseconds = 2      // wait up to 2 ms to gather more writes per commit
/// options.wallClockMillis = { fakeClock.now }   // a clock seam for tests
/// let replica = try Replica.open(at: "/var/lib/app/weft.sqlite", options: options)
/// ```
public struct ReplicaOptions: Sendable {
    /// When a group commit is durable: `.normal` survives a crash of the process, `.full` a power loss.
    public var durability: Durability = .normal
    /// Longest a write waits for more writes to join its group commit, in milliseconds (at most
    /// ``WeftLimits/groupCommitDelayMillisecondsMax``). Zero commits as soon as the previous commit is
    /// done; writes that arrive during a commit still share the next one.
    public var groupCommitDelayMilliseconds = 1
    /// Most ops written by one group commit (one SQLite transaction), at most
    /// `StoreLimits.groupCommitOpsMax`.
    public var groupCommitOpsMax = StoreLimits.groupCommitOpsMax
    /// Most ops applied in memory but not yet durable; a writer beyond it waits (backpressure).
    public var pendingOpsMax = StoreLimits.pendingOpsMax
    /// How far a remote stamp, or an explicit write time, may run ahead of the wall clock.
    public var driftMillisMax = CoreLimits.driftMillisMaxDefault
    /// Encodes `Encodable` values for the API layer (`DataNode.set(_:)`).
    public var encoder = JSONEncoder()
    /// Decodes values for the API layer (`DataNode.value(as:)`).
    public var decoder = JSONDecoder()
    /// Whether decoding reads a missing key whose type is a collection (an array, a set, a dictionary, or
    /// a struct of such) as an empty one, and an absent node likewise (true by default). The tree keeps
    /// no empty collection, as Firebase does: `tags: []` is stored as nothing and would otherwise not
    /// decode back (`no key "tags"`). A missing key of any other type still fails. Set false to make
    /// every missing key an error.
    public var decodesMissingCollectionsAsEmpty = true
    /// The wall clock in milliseconds since 1970; a seam for tests.
    public var wallClockMillis: @Sendable () -> UInt64 = ReplicaOptions.systemClockMillis
    /// Random bits for the id of a new replica (a new database, or a copy given a new id); a seam for tests.
    public var randomBits: @Sendable () -> UInt64 = { UInt64.random(in: .min ... .max) }
    /// The deterministic functions that `call` ops name, known from the start (more can be registered
    /// later with ``Replica/register(name:version:_:)``).
    public var functions = FunctionRegistry()
    /// The largest the database file may grow, in bytes; nil for no limit. A group commit that would
    /// outgrow it fails as on a full disk (`WeftError.Code.diskFull`).
    public var databaseBytesMax: Int?
    /// What to do with a database file copied from another replica's (see ``CopiedDatabasePolicy``).
    public var copiedDatabase = CopiedDatabasePolicy.refuse

    /// Default options: `.normal` durability, 1 ms group commit delay, the system clock.
    public init() {}

    /// The system clock, in milliseconds since 1970.
    @Sendable public static func systemClockMillis() -> UInt64 {
        UInt64(max(0, (Date().timeIntervalSince1970 * 1000).rounded(.down)))
    }

    /// The options with every number clamped to its limit.
    var clamped: ReplicaOptions {
        var options = self
        options.groupCommitDelayMilliseconds = min(
            max(0, groupCommitDelayMilliseconds), WeftLimits.groupCommitDelayMillisecondsMax)
        options.groupCommitOpsMax = min(max(1, groupCommitOpsMax), StoreLimits.groupCommitOpsMax)
        options.pendingOpsMax = max(options.groupCommitOpsMax, pendingOpsMax)
        return options
    }
}

/// What opening a database copied from another replica's does. Two replicas must never share an id,
/// so a copy cannot go on writing as the original.
///
/// ```swift
/// options.copiedDatabase = .reidentify   // keep the data, become a new replica
/// ```
public enum CopiedDatabasePolicy: Sendable, Hashable {
    /// Opening fails with `WeftError.Code.copiedDatabase`.
    case refuse
    /// The copy gets a new replica id (from ``ReplicaOptions/randomBits``) and keeps its data; the ops
    /// it made under the old id stay in its log as another replica's.
    case reidentify
}
