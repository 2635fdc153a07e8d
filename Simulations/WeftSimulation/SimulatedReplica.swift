import WeftCore
import WeftSync

/// One simulated replica, a shell as `Replica` is one: the real merge engine (or a sabotaged one), the
/// product's own policy (``ReplicaInstance``: clock and sequence, marks, stable and compaction
/// frontiers, snapshot installs) fed by a simulated wall clock, a disk, and what it learnt of its
/// peers' acknowledgements. Every decision of policy is the instance's; this shell carries it out.
///
/// Its sessions see the log through ``view``: the ops the disk has synced, which is what this
/// replica acknowledges and relays, so that a crash can only lose ops that never left it.
final class SimulatedReplica {
    let index: Int
    let id: ReplicaID
    let profile: ReplicaProfile
    let disk: any ReplicaDisk
    let sabotage: Sabotage?
    /// The replicas whose acknowledgements stability waits for: fixed at the start, and grown by the
    /// late joiner once it has a session here (kept across restarts, as `Replica` stores them).
    private(set) var members: Set<ReplicaID>
    let hubs: Set<ReplicaID>

    private(set) var isUp = true
    private(set) var engine: any ReplicaEngine {
        didSet { lastDigest = nil }
    }
    /// The last digest computed, with the state it is of: checks ask for digests often and the state
    /// often has not changed since (a state compares with a copy of itself at once, its storage shared).
    private var lastDigest: (state: Value, digest: StateDigest)?

    /// The digest of the engine's state.
    var digest: StateDigest {
        let state = engine.state
        if let lastDigest, lastDigest.state == state { return lastDigest.digest }
        let digest = engine.digest
        lastDigest = (state, digest)
        return digest
    }
    /// The replica's policy, the same value `Replica` drives.
    private(set) var instance: ReplicaInstance
    /// The ops synced to disk, per origin.
    private(set) var durable = ContiguousLog()
    /// The ops of each commit not synced yet, oldest first (the disk's unsynced commits).
    private(set) var unsyncedCommits: [[Op]] = []
    private(set) var book: AcknowledgementBook
    /// The wall clock minus simulated time, in milliseconds.
    var clockOffsetMillis: Int64
    /// While a clock runs beyond the drift limit: the offset it runs at instead.
    var beyondDriftOffsetMillis: Int64?
    /// Bumped by a crash, so that the fsync timer of the previous life does not fire.
    private(set) var generation: UInt64 = 0
    /// True while a ``Event/logGrew(replica:)`` is scheduled.
    var growthScheduled = false
    /// Sessions of this replica: (connection, side), in the order they opened.
    var endpoints: [EndpointAddress] = []
    private var cachedView: ReplicaLogView?
    /// The bytes of the ops this replica made or received, which its sessions send as they are.
    private let encodings = EncodingCache()

    init(
        index: Int, id: ReplicaID, profile: ReplicaProfile, disk: any ReplicaDisk, sabotage: Sabotage?,
        members: Set<ReplicaID>, hubs: Set<ReplicaID>
    ) {
        self.index = index
        self.id = id
        self.profile = profile
        self.disk = disk
        self.sabotage = sabotage
        self.members = members
        self.hubs = hubs
        engine = Sabotage.engine(sabotage, registry: Workload.registry, capturesChanges: disk.storesTree)
        instance = ReplicaInstance(
            replica: id, clock: HybridClock(replica: id, driftMillisMax: SimulationLimits.driftMillisMax))
        instance.loaded(ownSequenceMax: 0, compactionVector: VersionVector())
        book = AcknowledgementBook(local: id, members: members, hubs: hubs)
        clockOffsetMillis = profile.clockOffsetMillis
    }

    /// The replica's wall clock at simulated tick `now`, in milliseconds.
    func wallMillis(now: UInt64) -> UInt64 {
        let offset = beyondDriftOffsetMillis ?? clockOffsetMillis
        return UInt64(Int64(SimulationLimits.epochMillis + now) + offset)
    }

    /// The log as its sessions read it.
    var view: ReplicaLogView {
        if let cachedView { return cachedView }
        let view = ReplicaLogView(
            engine: engine, encodings: encodings, versionVector: durable.vector,
            compactionFrontier: instance.compactionVector, stableFrontier: instance.announcedStable)
        cachedView = view
        return view
    }

    // MARK: - Writing and receiving

    /// Makes a local op of `write` and applies it.
    /// - Throws: the clock's error when the 48-bit range runs out (never in practice).
    func write(_ write: WritePlan.Write, now: UInt64) throws -> (Op, ArraySlice<UInt8>, ApplyReport) {
        precondition(isUp, "a crashed replica does not write")
        let stamp = try instance.nextStamp(wallMillis: wallMillis(now: now))
        let sequence = instance.claimSequence()
        let op: Op
        if let step = write.relation {
            // Planned now, on what this replica holds, as an app's transaction would be.
            let made = RelationWorkload.op(
                of: step, index: write.index, state: engine.state, read: engine.versionVector, sabotage: sabotage)
            op = Op(stamp: stamp, sequence: sequence, path: made.path, kind: made.kind)
        } else {
            op = WritePlan.op(of: write, stamp: stamp, sequence: sequence, read: engine.versionVector)
        }
        let report = engine.apply([op])
        let encoding = OpCodec.encode(op)[...]
        encodings.keep(op, encoding)
        try commit([op], encodings: [encoding], changes: report.changes)
        return (op, encoding, report)
    }

    /// Checks the stamps of ops received, then merges and commits the new ones.
    /// - Returns: nil when a stamp runs too far ahead of this replica's clock (nothing is applied);
    ///   otherwise the ops new to this replica, their encodings when `encodings` were given, and the
    ///   engine's report.
    func receive(_ ops: [Op], encodings: [ArraySlice<UInt8>]? = nil, now: UInt64) throws -> (
        fresh: [Op], freshEncodings: [ArraySlice<UInt8>]?, report: ApplyReport
    )? {
        precondition(isUp, "a crashed replica receives nothing")
        let wall = wallMillis(now: now)
        for op in ops {
            do { try instance.check(op.stamp, wallMillis: wall) } catch { return nil }
        }
        for op in ops { try? instance.receive(op, wallMillis: wall) }
        let report = engine.apply(ops)
        let fresh = report.admitted.map { ops[$0] }
        let freshEncodings = encodings.map { all in report.admitted.map { all[$0] } }
        if !fresh.isEmpty {
            if let freshEncodings { for (op, bytes) in zip(fresh, freshEncodings) { self.encodings.keep(op, bytes) } }
            try commit(fresh, encodings: freshEncodings, changes: report.changes)
        }
        return (fresh, freshEncodings, report)
    }

    /// One group commit; synced at once when the replica syncs every commit.
    private func commit(_ ops: [Op], encodings: [ArraySlice<UInt8>]?, changes: [Change]) throws {
        try disk.commit(ops, encodings: encodings, changes: changes, clockTime: instance.clock.lastTime)
        if profile.syncsEveryCommit {
            try disk.sync()
            for op in ops { durable.add(op) }
            cachedView = nil
            return
        }
        unsyncedCommits.append(ops)
        // A disk may sync on its own (a WAL's automatic checkpoint): those commits are durable now.
        let syncedAlone = unsyncedCommits.count - disk.unsyncedCommitCount
        if syncedAlone > 0 {
            for commit in unsyncedCommits.prefix(syncedAlone) { for op in commit { durable.add(op) } }
            unsyncedCommits.removeFirst(syncedAlone)
            cachedView = nil
        }
    }

    /// Syncs the disk. - Returns: true when ops became durable.
    func sync() throws -> Bool {
        guard !unsyncedCommits.isEmpty else { return false }
        try disk.sync()
        for commit in unsyncedCommits { for op in commit { durable.add(op) } }
        unsyncedCommits = []
        cachedView = nil
        return true
    }

    /// Records a peer's acknowledgement, and lets the instance decide what it changes.
    func record(_ acknowledgement: Acknowledgement, from peer: ReplicaID) {
        book.record(acknowledgement, from: peer)
        acknowledgementsChanged()
    }

    /// Records the acknowledgement of a peer limited to a share: a member for stability (kept across a
    /// restart, as the daemon stores its members), acknowledging nothing.
    func recordShare(_ acknowledgement: Acknowledgement, from peer: ReplicaID) {
        members.insert(peer)
        book.recordShare(acknowledgement, from: peer)
        acknowledgementsChanged()
    }

    /// A replica this one had a session with counts as a member from now on.
    func learn(member: ReplicaID) {
        if !members.contains(member) {
            members.insert(member)
            book.addMember(member)
        }
        // As the daemon's driver does when a session connects.
        acknowledgementsChanged()
    }

    /// The acknowledgements changed, or the durable log grew: the instance decides the marks and the
    /// stable frontiers, as it does under `SyncDriver` (a sabotage of the stability rule breaks its
    /// inputs here: the instance itself is the product's).
    func acknowledgementsChanged() {
        var inputs = AcknowledgementInputs(book: book, durable: durable.vector)
        if sabotage == .stabilityIgnoresKnown {
            // The rule then sees only the ops held here: an op a member acked elsewhere no longer bounds it.
            inputs.known = durable.vector
        }
        for directive in instance.onAcknowledgements(inputs, log: engine) {
            switch directive {
            case .markAcknowledged, .markStable:
                // No receipts here; the marks live in the instance, as `Replica`'s store keeps them.
                break
            case .announceStable:
                cachedView = nil
            }
        }
    }

    /// Installs a snapshot of ops this replica lacks (a late joiner meeting a hub that compacted): the
    /// engine becomes the real engine's install, its own ops below the sender's stamp stamped again.
    /// The disk is not rewritten: a late joiner never crashes (see `Docs/SIMULATOR.md`).
    /// - Returns: the install, or nil when this replica holds every op of the snapshot.
    /// - Throws: the clock's drift refusal of the sender's stamp, or the engine's refusal.
    func install(_ snapshot: SyncSnapshot, now: UInt64) throws -> CompactedBaseInstall? {
        precondition(isUp, "a crashed replica installs nothing")
        let wall = wallMillis(now: now)
        guard case .install(let base) = try instance.snapshotInstall(snapshot, wallMillis: wall, log: engine),
            let (installed, install) = try engine.installingBase(
                base, local: id, localBaseVector: instance.compactionVector,
                acknowledgedThrough: instance.acknowledgedThrough,
                nextStamp: { try instance.nextStamp(wallMillis: wall) })
        else { return nil }
        engine = installed
        instance.installed(snapshot.frontier)
        durable.raise(to: snapshot.frontier)
        cachedView = nil
        return install
    }

    /// Puts a hub's revised decisions in place of the carried ones held, as `Replica.reviseCarried` does
    /// (the disk keeps the ops as they came: a leaf never crashes, see `Docs/SIMULATOR.md`).
    /// - Returns: the ops replaced.
    /// - Throws: the engine's refusal (a revision of an op not held, or whole).
    func reviseCarried(_ revisions: [Op]) throws -> [Op] {
        precondition(isUp, "a crashed replica revises nothing")
        guard let revision = try engine.revisingCarried(revisions, baseVector: instance.compactionVector) else {
            return []
        }
        engine = revision.engine
        cachedView = nil
        return revision.replaced
    }

    // MARK: - Compaction

    /// Folds into the engine's base what the instance says every member holds (its stable frontier,
    /// under the hubs' compaction cap), as `Replica.compact` does. The disk keeps the whole log (see
    /// `Docs/SIMULATOR.md`).
    /// - Returns: the number of ops folded.
    func compactToStableFrontier() -> Int {
        guard let frontier = instance.compactionFrontier(log: engine) else { return 0 }
        instance.compacting(upTo: frontier, log: engine)
        cachedView = nil
        return engine.compact(upTo: frontier)
    }

    // MARK: - Crash and restart

    /// Power loss: the disk keeps `kept` of its unsynced commits; the process state is gone.
    /// - Returns: the ops lost (known to the engine, not on disk any more).
    func crash(keepingUnsyncedCommits kept: Int) -> [Op] {
        precondition(isUp, "crash of a replica already down")
        let lostCommits = disk.crash(keepingUnsyncedCommits: kept)
        precondition(lostCommits == unsyncedCommits.count - kept, "the disk lost another number of commits")
        for commit in unsyncedCommits.prefix(kept) { for op in commit { durable.add(op) } }
        let lost = unsyncedCommits.dropFirst(kept).flatMap { $0 }
        unsyncedCommits = []
        isUp = false
        generation += 1
        endpoints = []
        growthScheduled = false
        cachedView = nil
        return lost
    }

    /// Restarts from what the disk holds.
    /// - Returns: what was read back.
    func restart() throws -> RecoveredLog {
        precondition(!isUp, "restart of a running replica")
        let recovered = try disk.recover()
        let frontier = engine.frontier
        engine = Sabotage.engine(sabotage, registry: Workload.registry, capturesChanges: disk.storesTree)
        _ = engine.apply(recovered.ops)
        // A compaction is durable once done (`Replica` commits it alone): the restarted replica folds
        // the same ops again, so its frontier never moves back (its hub's leaves may have compacted
        // as far, and a late joiner's ops below it must stay refused).
        if let frontier { _ = engine.compact(upTo: frontier) }
        // The marks survive, as `Replica`'s store keeps them; the stable frontiers start over, as they do
        // when `Replica` opens.
        let clock = HybridClock(replica: id, lastTime: recovered.clockTime, driftMillisMax: SimulationLimits.driftMillisMax)
        let compactionVector = frontier == nil ? VersionVector() : instance.compactionVector
        instance = ReplicaInstance(
            replica: id, clock: clock, acknowledgedThrough: instance.acknowledgedThrough,
            stableThrough: instance.stableThrough)
        instance.loaded(
            ownSequenceMax: recovered.ops.reduce(0) { $1.origin == id ? max($0, $1.sequence) : $0 },
            compactionVector: compactionVector)
        book = AcknowledgementBook(local: id, members: members, hubs: hubs)
        isUp = true
        cachedView = nil
        return recovered
    }

    /// Adds the statistics of the current engine to `coverage` (before a crash drops it, and at the end).
    func countEngineRoads(into coverage: inout Coverage) {
        let statistics = engine.statistics
        coverage.bump(.engineInOrder, by: statistics.inOrder)
        coverage.bump(.engineCounterShortcuts, by: statistics.counterShortcuts)
        coverage.bump(.engineHiddenWrites, by: statistics.hiddenWrites)
        coverage.bump(.engineRefolds, by: statistics.refolds)
        coverage.bump(.engineRefoldsCut, by: statistics.cutRefolds)
        coverage.bump(.engineReplayedOps, by: statistics.replayedOps)
        coverage.bump(.engineRedecidedOps, by: statistics.redecidedOps)
        coverage.bump(.engineBatchedIntoRefolds, by: statistics.batchedIntoRefolds)
    }

    /// Ops known to the engine and not yet durable.
    var unsyncedOpCount: Int { unsyncedCommits.reduce(0) { $0 + $1.count } }
}

/// One side of one connection.
struct EndpointAddress: Hashable {
    let connection: Int
    let side: Int
}

/// The log a replica's sessions read: only what is durable, so that what they acknowledge and relay
/// survives a crash.
struct ReplicaLogView: OpSource {
    let engine: any ReplicaEngine
    let encodings: EncodingCache
    let versionVector: VersionVector
    let compactionFrontier: VersionVector
    let stableFrontier: VersionVector

    var compactionStamp: Stamp? { engine.frontier }

    /// A leaf's log holds partial ops: said in its hello, so that only its hub syncs with it.
    var holdsShare: Bool { engine.holdsPartialOps }

    /// As the daemon's log answers a hub's session with a leaf: the outcome the engine folds now.
    func outcome(of stamp: Stamp) -> Outcome? { engine.outcome(of: stamp) }

    /// As the daemon's log answers: what the applied call wrote at its node.
    func callResult(of stamp: Stamp) -> Value? { engine.result(ofCall: stamp) }

    func snapshot() throws -> SyncSnapshot {
        SyncSnapshot(
            value: engine.base, frontier: compactionFrontier, stampFrontier: engine.frontier,
            touches: engine.allCompactedTouches())
    }

    func ops(from origin: ReplicaID, after sequence: UInt64, limit: Int, bytesMax: Int) throws -> [Op] {
        let available = versionVector[origin]
        guard sequence < available else { return [] }
        return engine.ops(from: origin, after: sequence, limit: min(limit, Int(available - sequence)))
    }

    func encodedOps(from origin: ReplicaID, after sequence: UInt64, limit: Int, bytesMax: Int) throws -> EncodedOps? {
        encodings.encoded(try ops(from: origin, after: sequence, limit: limit, bytesMax: bytesMax))
    }
}

/// Per origin, the ops held with no gap below them, and those held beyond a gap.
struct ContiguousLog {
    private(set) var vector = VersionVector()
    private var ahead: [ReplicaID: Set<UInt64>] = [:]

    /// Holds every op `other` covers (an installed snapshot's base).
    mutating func raise(to other: VersionVector) {
        for (origin, sequence) in other.entries where sequence > vector[origin] {
            var next = sequence
            ahead[origin] = ahead[origin]?.filter { $0 > sequence }
            while ahead[origin]?.remove(next + 1) != nil { next += 1 }
            vector.advance(origin: origin, to: next)
        }
    }

    /// True when some op is held beyond a gap.
    var hasGaps: Bool { ahead.values.contains { !$0.isEmpty } }

    mutating func add(_ op: Op) {
        let origin = op.origin
        let last = vector[origin]
        if op.sequence == last + 1 {
            var next = op.sequence
            while ahead[origin]?.remove(next + 1) != nil { next += 1 }
            vector.advance(origin: origin, to: next)
        } else if op.sequence > last + 1 {
            ahead[origin, default: []].insert(op.sequence)
        }
    }
}

/// The encodings of the ops a replica made or received, by origin and sequence, so that its sessions
/// send the bytes as they are instead of encoding each op again for every peer (as a store that keeps
/// the received bytes would). An entry serves only the op with its stamp: a sequence reused after a
/// crash lost its op, or stamped again by a late joiner, misses and is encoded anew.
final class EncodingCache {
    typealias Kept = (stamp: Stamp, bytes: ArraySlice<UInt8>)

    private var byOrigin: [ReplicaID: [Kept?]] = [:]

    /// Keeps the bytes of `op` (`OpCodec.encode(op)`).
    func keep(_ op: Op, _ bytes: ArraySlice<UInt8>) {
        let slot = Int(op.sequence) - 1
        // Changed in place (the table's entry is not copied out and back).
        byOrigin[op.origin, default: []].put((op.stamp, bytes), at: slot)
    }

    /// `ops` with their encodings: the kept bytes where they are of the same op, else encoded now.
    func encoded(_ ops: [Op]) -> EncodedOps {
        guard let origin = ops.first?.origin, let list = byOrigin[origin] else { return EncodedOps(ops) }
        let encodings = ops.map { op in
            let slot = Int(op.sequence) - 1
            if op.origin == origin, slot < list.count, let kept = list[slot], kept.stamp == op.stamp {
                return kept.bytes
            }
            return OpCodec.encode(op)[...]
        }
        return EncodedOps(ops: ops, encodings: encodings)
    }
}

extension Array where Element == EncodingCache.Kept? {
    /// Sets the element at `slot`, growing the array with nils to reach it.
    fileprivate mutating func put(_ kept: EncodingCache.Kept, at slot: Int) {
        if count <= slot { append(contentsOf: repeatElement(nil, count: slot + 1 - count)) }
        self[slot] = kept
    }
}
