import Foundation
import WeftCore
import WeftStore
import WeftSync

/// One replica of a Weft tree: its state in memory, its SQLite file (or a store held in memory), and
/// the road every write takes: stamp → merge engine → change listeners → group commit → durable.
///
/// ```swift
/// let replica = try Replica.open(at: "/var/lib/app/weft.sqlite")
/// let receipt = try replica.submit(path: try Path("/users/alice/score"), kind: .set(.int(42)), at: .now)
/// try await receipt.wait(for: .durable)
/// replica.value(at: try Path("/users/alice"))     // {"score": 42}
/// await replica.shutdown()
/// ```
///
/// ## Opening is lazy
/// ``open(at:options:)`` returns once the file is checked and locked; the tree and the log load in the
/// background. Until then reads come from the file (one range read each), and writes wait.
///
/// ## Threads
/// Every method is thread-safe. Writes are applied to the state in memory before they return (status
/// `.pending`); a background thread commits them in groups. Change listeners run on one serial queue,
/// in order. Receipt observers run on the committer's thread: they must not wait for other writes.
public final class Replica: @unchecked Sendable {
    // Sendable: every mutable field is guarded by `condition`, except the objects that lock themselves.

    /// How far the background load is.
    enum Phase {
        case loading
        case ready
        case failed(WeftError)
    }

    /// A function registered by the app, in order, so a load that started before it still learns it.
    struct Registration {
        let name: String
        let version: UInt32
        let function: FunctionRegistry.Function
    }

    /// This replica's id (random, made once with the database).
    ///
    /// ```swift
    /// let mine = replica.ops(from: replica.replicaID, after: 0, limit: 100)
    /// ```
    public let replicaID: ReplicaID
    /// The database file; nil for a replica in memory.
    public let path: String?
    /// The options the replica was opened with, numbers clamped to their limits.
    public let options: ReplicaOptions
    let store: any Store
    let committer: GroupCommitter
    let notifier = ChangeNotifier()
    /// The statuses of this replica's writes.
    let receipts: ReceiptBook
    /// What the public API keeps beside the engine: coders, callback queue, transactions in flight, feeds.
    let api: APIState
    let regions = PreservedRegions()
    /// The sync driver of ``listen(on:token:)`` and ``connect(to:token:)``, made on first use.
    let syncLink = _ReplicaSyncLink()
    /// Guards the fields below, and the merge engine.
    let condition = NSCondition()

    var phase = Phase.loading
    /// The merge engine, once loaded.
    var engine: MergeEngine?
    /// The replica's policy: clock and sequence, acknowledgement and stability marks, the stable and
    /// compaction frontiers, snapshot installs. This shell carries out what it decides.
    var instance: ReplicaInstance
    var registrations: [Registration] = []
    /// Reads of the file begun, and ended, while the load runs: between two slices the load lets through
    /// the reads begun before it paused, and no later one, so that readers arriving all the time
    /// cannot hold the load back (nor the writes and the shutdown that wait for it).
    var storeReadsBegun = 0
    var storeReadsEnded = 0
    var isShuttingDown = false
    var loadWaiters: [CheckedContinuation<Void, Never>] = []
    /// Called after each compaction (sync announces the new compaction stamp).
    var compactionListeners: [@Sendable (Stamp) -> Void] = []
    /// The query indexes, kept in step with the engine's state by ``record(_:records:isLocalPending:engine:)``.
    var queryIndexes = QueryIndexBook()

    // MARK: - Opening

    /// Opens (or creates) the replica stored in the SQLite file at `path`.
    ///
    /// ```swift
    /// let replica = try Replica.open(at: dir + "/weft.sqlite", options: ReplicaOptions())
    /// ```
    /// - Parameters:
    ///   - path: the database file; created with its directory's permissions when missing.
    ///   - options: durability, group commit bounds, clock and randomness seams.
    /// - Throws: `WeftError` with code `databaseInUse` (another process has it open), `notAWeftDatabase`,
    ///   `newerSchema`, `readOnly`, `copiedDatabase` (see ``CopiedDatabasePolicy``) or `storage`.
    public static func open(at path: String, options: ReplicaOptions = ReplicaOptions()) throws -> Replica {
        let options = options.clamped
        let pages = options.databaseBytesMax.map { max(1, $0 / StoreLimits.pageBytes) }
        let storeOptions = StoreOptions(
            durability: options.durability, replicaForNewDatabase: newReplicaID(options), pageCountMax: pages)
        let store: SQLiteStore
        do {
            store = try SQLiteStore(path: path, options: storeOptions)
        } catch {
            throw WeftError.wrapping(error)
        }
        return try open(store: store, options: options, path: path)
    }

    /// A new replica held in memory, with a fresh id; its data goes when it does.
    ///
    /// It throws like ``open(at:options:)``, so that the two read alike and code can move from one to the
    /// other; a new memory store has no file to check, so today it fails only if opening a store fails.
    ///
    /// ```swift
    /// let replica = try Replica.inMemory()
    /// ```
    /// - Throws: `WeftError` with code `storage` when the store cannot be opened.
    public static func inMemory(options: ReplicaOptions = ReplicaOptions()) throws -> Replica {
        let options = options.clamped
        let store = MemoryStore(replica: newReplicaID(options), durability: options.durability)
        return try open(store: store, options: options, path: nil)
    }

    /// Opens a replica over a store already open (a `MemoryStore` of the simulator, say). The replica
    /// becomes the store's owner and closes it at shutdown.
    ///
    /// ```swift
    /// let replica = try Replica.open(store: MemoryStore(replica: id), options: ReplicaOptions())
    /// ```
    /// - Throws: `WeftError` with code `copiedDatabase`, or `storage`.
    public static func open(store: any Store, options: ReplicaOptions = ReplicaOptions()) throws -> Replica {
        try open(store: store, options: options.clamped, path: nil)
    }

    static func open(store: any Store, options: ReplicaOptions, path: String?) throws -> Replica {
        do {
            try adoptIdentity(of: store, options: options, location: path ?? "the store")
        } catch {
            try? store.close()
            throw WeftError.wrapping(error)
        }
        let replica = Replica(store: store, options: options, path: path)
        replica.startLoading()
        return replica
    }

    /// Refuses a copied database, or gives it a new id, per the options.
    private static func adoptIdentity(of store: any Store, options: ReplicaOptions, location: String) throws {
        guard case .copied(let reason) = store.identity.instance else { return }
        switch options.copiedDatabase {
        case .refuse:
            throw WeftError(
                .copiedDatabase,
                "\(location) is a copy of another replica's database (\(reason)); open it with "
                    + "ReplicaOptions.copiedDatabase = .reidentify to make it a new replica")
        case .reidentify:
            let old = store.identity.replica
            let folded = try store.peerVectors()[old]
            try store.reidentify(newID: newReplicaID(options))
            if let folded {
                var batch = StoreBatch()
                batch.peerVectors = [store.identity.replica: folded]
                try store.commit(batch)
            }
        }
    }

    static func newReplicaID(_ options: ReplicaOptions) -> ReplicaID {
        while true {
            if let id = ReplicaID(rawValue: options.randomBits()) { return id }
        }
    }

    private init(store: any Store, options: ReplicaOptions, path: String?) {
        let identity = store.identity
        let marks = store.logMarks
        self.store = store
        self.options = options
        self.path = path
        self.replicaID = identity.replica
        self.api = APIState(encoder: options.encoder, decoder: options.decoder, label: "weft.replica.callbacks")
        api.missingCollectionsAsEmpty = options.decodesMissingCollectionsAsEmpty
        api.subscriptions.attach(store as? any SubscriptionStore)
        // A file compacted past its clock (which an older version could do) would otherwise stamp its next
        // writes below the frontier, where they cannot be stored.
        let clock = HybridClock(
            replica: identity.replica, lastTime: max(identity.clockTime, marks.frontier?.time ?? 0),
            driftMillisMax: options.driftMillisMax)
        self.instance = ReplicaInstance(
            replica: identity.replica, clock: clock, acknowledgedThrough: marks.acknowledgedThrough,
            stableThrough: marks.stableThrough)
        let settings = GroupCommitter.Settings(
            delayMilliseconds: options.groupCommitDelayMilliseconds, opsMax: options.groupCommitOpsMax,
            pendingOpsMax: options.pendingOpsMax)
        let receipts = ReceiptBook()
        // The statuses the file kept: a write acknowledged or stable before a restart still says so.
        receipts.advance(through: marks.acknowledgedThrough, to: .acknowledged)
        receipts.advance(through: marks.stableThrough, to: .stable)
        self.receipts = receipts
        self.committer = GroupCommitter(store: store, settings: settings, receipts: receipts, origin: identity.replica)
        committer.start()
    }

    deinit {
        // Without a shutdown, the committer still commits what is queued and closes the store.
        if !isShuttingDown { committer.stopDetached() }
    }

    // MARK: - Reads

    /// The value at `path` (null when absent). Before the load finishes it is read from the file.
    ///
    /// ```swift
    /// let alice = replica.value(at: try Path("/users/alice"))
    /// ```
    public func value(at path: Path) -> Value {
        condition.lock()
        defer { condition.unlock() }
        if let engine { return engine.value(at: path) }
        guard case .loading = phase else { return .null }
        storeReadsBegun += 1
        condition.unlock()
        let stored = try? store.readTree(at: path)
        condition.lock()
        storeReadsEnded += 1
        condition.broadcast()
        if let stored { return stored }
        waitForLoad()
        return engine?.value(at: path) ?? .null
    }

    /// The whole state, as a consistent snapshot (copy on write: cheap to take). Waits for the load.
    ///
    /// ```swift
    /// let json = replica.snapshot().jsonString()
    /// ```
    public func snapshot() -> Value {
        condition.lock()
        defer { condition.unlock() }
        waitForLoad()
        return engine?.state ?? .null
    }

    /// What this replica has applied: for each origin, the highest sequence with no gap below it.
    /// Waits for the load.
    ///
    /// ```swift
    /// let mine = replica.versionVector[replica.replicaID]   // writes made here so far
    /// ```
    public var versionVector: VersionVector {
        condition.lock()
        defer { condition.unlock() }
        waitForLoad()
        return engine?.versionVector ?? VersionVector()
    }

    /// What the state at `path` reflects: ``versionVector`` without the ops still waiting for a function
    /// this replica has not registered at a related path. A transaction records it as what its closure read.
    func appliedVersionVector(for path: Path) -> VersionVector {
        condition.lock()
        defer { condition.unlock() }
        waitForLoad()
        return engine?.appliedVersionVector(for: path) ?? VersionVector()
    }

    /// What this replica has made durable: for each origin, the highest committed sequence with no gap
    /// below it. A replica acknowledges what this covers.
    ///
    /// ```swift
    /// session.acknowledge(replica.durableVersionVector)
    /// ```
    public var durableVersionVector: VersionVector { committer.durableVector }

    /// The digest of the current state (equal on every replica that has seen the same ops).
    ///
    /// ```swift
    /// assert(left.digest == right.digest)   // after they exchanged every op
    /// ```
    public var digest: StateDigest { StateDigest(of: snapshot()) }

    /// Ops held one by one in the log, not yet folded into the compacted base (see ``compact(vacuum:)``).
    /// Waits for the load.
    ///
    /// ```swift
    /// print(replica.logOpCount, "ops in the log")
    /// ```
    public var logOpCount: Int {
        condition.lock()
        defer { condition.unlock() }
        waitForLoad()
        return engine?.opCount ?? 0
    }

    /// Which roads the merge engine took for the ops it applied so far (in order, shortcuts, re-folds).
    /// Waits for the load.
    ///
    /// ```swift
    /// print(replica.mergeStatistics.refolds, "re-folds")
    /// ```
    public var mergeStatistics: MergeStatistics {
        condition.lock()
        defer { condition.unlock() }
        waitForLoad()
        return engine?.statistics ?? MergeStatistics()
    }

    /// What group commit has done so far.
    ///
    /// ```swift
    /// print(replica.statistics.commits, "transactions for", replica.statistics.opsCommitted, "ops")
    /// ```
    public var statistics: CommitStatistics { committer.statistics }

    /// True once the tree and the log are loaded in memory.
    ///
    /// ```swift
    /// if !replica.isLoaded { showSpinner() }
    /// ```
    public var isLoaded: Bool {
        condition.lock()
        defer { condition.unlock() }
        if case .ready = phase { return true }
        return false
    }

    /// Bytes the database takes on disk, write-ahead log included.
    ///
    /// ```swift
    /// let size = try replica.bytesOnDisk()
    /// ```
    /// - Throws: `WeftError` with code `storage` or `shutDown`.
    public func bytesOnDisk() throws -> Int {
        do {
            return try store.bytesOnDisk()
        } catch {
            throw WeftError.wrapping(error)
        }
    }

    /// The instance's clock (read under `condition`: its last time goes with each commit).
    var clock: HybridClock { instance.clock }

    /// The sequence the next local write takes. Call with `condition` held.
    var nextSequence: UInt64 { instance.nextSequence }

    // MARK: - Waiting

    /// Waits (with `condition` held) until the load is over.
    func waitForLoad() {
        while case .loading = phase { condition.wait() }
    }

    /// Waits until the tree and the log are loaded in memory.
    ///
    /// ```swift
    /// try await replica.waitUntilLoaded()
    /// ```
    /// - Throws: the `WeftError` that failed the load (a damaged file).
    public func waitUntilLoaded() async throws {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready: Bool = condition.withLock {
                guard case .loading = phase else { return true }
                loadWaiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
        if let loadFailure { throw loadFailure }
    }

    /// The error that ended the load from the store; nil while loading and once loaded. A replica
    /// whose load failed reads as empty through ``value(at:)`` and ``snapshot()``, while `DataNode`
    /// reads and every write throw this error.
    ///
    /// ```swift
    /// if let failure = replica.loadFailure { print("the file could not be loaded: \(failure)") }
    /// ```
    public var loadFailure: WeftError? {
        condition.withLock {
            if case .failed(let error) = phase { return error }
            return nil
        }
    }

    /// Waits until every write made before the call is durable.
    ///
    /// ```swift
    /// try replica.submit(path: path, kind: .set(.int(1)), at: .now)
    /// try await replica.flush()    // the write is in the file
    /// ```
    /// - Throws: the `WeftError` of a failed commit.
    public func flush() async throws {
        try await committer.flush()
    }

    /// The merge engine, ready for a write: waits for the load. Call with `condition` held.
    /// - Throws: `WeftError` when the replica is shutting down, its load failed or a commit failed.
    func writableEngine() throws -> MergeEngine {
        waitForLoad()
        if isShuttingDown { throw WeftError.replicaShutDown }
        if case .failed(let error) = phase { throw error }
        if let failure = committer.failed {
            throw WeftError(
                failure.code, "the replica stopped writing after a failed commit (\(failure.message)); reopen it")
        }
        guard let engine else { preconditionFailure("a loaded replica has an engine") }
        return engine
    }

    // MARK: - Listeners and shutdown

    /// Calls `listener` after every change of the state, on the replica's notification queue, in order.
    ///
    /// ```swift
    /// let token = replica.addChangeListener { batch in print(batch.changes.map(\.path)) }
    /// ```
    public func addChangeListener(_ listener: @escaping @Sendable (ChangeBatch) -> Void) -> ChangeListenerToken {
        notifier.add(listener)
    }

    /// True once shutdown has begun.
    ///
    /// ```swift
    /// guard !replica.isShutDown else { return }
    /// ```
    public var isShutDown: Bool {
        condition.lock()
        defer { condition.unlock() }
        return isShuttingDown
    }

    /// Stops sync (every session closes, the listener and the redialling stop, ``syncStatusUpdates()``
    /// sequences end), lets work already started finish, commits what is pending, closes the store and
    /// delivers the last changes. Later writes throw `WeftError` with code `shutDown`; reads keep
    /// answering from memory; event publishers finish and event sequences end.
    ///
    /// ```swift
    /// await replica.shutdown()
    /// ```
    public func shutdown() async {
        await stopSync()
        condition.withLock { isShuttingDown = true }
        try? await waitUntilLoaded()
        await committer.stop()
        // Nothing can move a status now: a write still waiting for one (an acknowledgement, say) ends.
        receipts.close(WeftError.replicaShutDown)
        await notifier.waitUntilDelivered()
        api.finishFeeds()
    }
}
