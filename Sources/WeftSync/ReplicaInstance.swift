import WeftCore

/// A replica's policy as a value: the clock and the sequence of its writes, the acknowledgement and
/// stability marks of its own ops, the stable stamp frontier, how far compaction may fold, and when a
/// snapshot is installed. It does no I/O and reads no clock: wall time, the log (through
/// ``ReplicaLog``) and the acknowledgements are inputs, and what the shell must store, notify or send
/// comes back as ``ReplicaDirective``s.
///
/// `Replica` (the daemon and embedded apps) is one shell: it holds the instance under its lock, with the
/// group committer and the load. The simulator's replica is another: it drives the same instance, so
/// that its checkers test the policy that ships.
///
/// ```swift
/// var instance = ReplicaInstance(replica: me, clock: HybridClock(replica: me))
/// instance.loaded(ownSequenceMax: 0, compactionVector: VersionVector())
/// let stamp = try instance.nextStamp(wallMillis: now)
/// let op = Op(stamp: stamp, sequence: instance.claimSequence(), path: path, kind: .set(.int(1)))
/// for directive in instance.onAcknowledgements(AcknowledgementInputs(book: book, durable: durable), log: engine) {
///     carryOut(directive)
/// }
/// ```
public struct ReplicaInstance: Sendable, Hashable {
    /// The replica whose policy this is.
    public let replica: ReplicaID
    /// The hybrid logical clock that stamps the replica's writes.
    public private(set) var clock: HybridClock
    /// The sequence the next local write takes.
    public private(set) var nextSequence: UInt64 = 1
    /// The last own op marked acknowledged (kept across restarts by the shell).
    public private(set) var acknowledgedThrough: UInt64
    /// The last own op marked stable (kept across restarts by the shell).
    public private(set) var stableThrough: UInt64
    /// The greatest stamp frontier marked stable: every member holds every op stamped at or below it.
    public private(set) var stableFrontier: Stamp?
    /// The version vector of the ops folded into the compacted base.
    public private(set) var compactionVector = VersionVector()
    /// How far compaction may go: no further than the hubs compacted (see
    /// ``AcknowledgementBook/compactionCap``).
    public private(set) var compactionCap = CompactionCap.unlimited
    /// The acknowledgements' stable frontier, as a version vector: it only grows.
    public private(set) var stableVector = VersionVector()
    /// The part of ``stableVector`` under ``stableFrontier``: what the replica's acks announce. It only
    /// grows.
    public private(set) var announcedStable = VersionVector()

    /// The policy of `replica`, with the clock and the marks its store kept.
    ///
    /// - Parameters:
    ///   - replica: the replica.
    ///   - clock: its clock, restarted from the stored clock time.
    ///   - acknowledgedThrough: the acknowledged mark the store kept.
    ///   - stableThrough: the stable mark the store kept.
    public init(replica: ReplicaID, clock: HybridClock, acknowledgedThrough: UInt64 = 0, stableThrough: UInt64 = 0) {
        precondition(clock.replica == replica, "the clock stamps for the replica")
        self.replica = replica
        self.clock = clock
        self.acknowledgedThrough = acknowledgedThrough
        self.stableThrough = stableThrough
    }

    /// The log is loaded: the next write takes the sequence after every own op held, marked or folded
    /// (a sequence reused would claim the place of an op a peer may hold).
    public mutating func loaded(ownSequenceMax: UInt64, compactionVector: VersionVector) {
        self.compactionVector = compactionVector
        nextSequence = max(ownSequenceMax, stableThrough, acknowledgedThrough, compactionVector[replica]) + 1
        precondition(nextSequence > 0, "the sequence did not wrap")
    }

    // MARK: - Writes

    /// The stamp of a local event at wall time `wallMillis` (the clock's step).
    /// - Throws: the clock's `CoreError` when the 48-bit range of stamps runs out.
    public mutating func nextStamp(wallMillis: UInt64) throws -> Stamp {
        let stamp = try clock.next(wallMillis: wallMillis)
        precondition(stamp.replica == replica, "a local stamp names this replica")
        return stamp
    }

    /// The sequence of a new local op: called once the op is sure to be applied.
    public mutating func claimSequence() -> UInt64 {
        let sequence = nextSequence
        nextSequence += 1
        return sequence
    }

    // MARK: - Remote ops

    /// Refuses a received stamp too far ahead of wall time `wallMillis`, before anything is applied.
    /// - Throws: the clock's `CoreError` for a stamp beyond the drift bound.
    public func check(_ stamp: Stamp, wallMillis: UInt64) throws {
        try clock.check(stamp, wallMillis: wallMillis)
    }

    /// A received op is about to be applied: the clock moves past its stamp, and an own op (one a peer
    /// gave back after a crash lost it here) moves the next sequence past it.
    /// - Throws: the clock's `CoreError` for a stamp beyond the drift bound.
    public mutating func receive(_ op: Op, wallMillis: UInt64) throws {
        try clock.receive(op.stamp, wallMillis: wallMillis)
        if op.origin == replica { nextSequence = max(nextSequence, op.sequence + 1) }
    }

    // MARK: - Acknowledgement and stability

    /// Marks the replica's own ops covered by `vector` acknowledged (by the hub, or by enough peers),
    /// no further than it wrote: a stored mark past it would also push the sequence of the next write
    /// past a gap after a restart (the load starts above every stored mark).
    public mutating func acknowledge(through vector: VersionVector) -> [ReplicaDirective] {
        let sequence = min(vector[replica], nextSequence - 1)
        guard sequence > acknowledgedThrough else { return [] }
        acknowledgedThrough = sequence
        return [.markAcknowledged(through: sequence)]
    }

    /// Marks every op stamped at or below `frontier` stable, no further than every stamp the clock has
    /// made or received (later writes are stamped above those, and one below a compacted frontier could
    /// not be stored); the replica's own ops up to it become stable, and compaction may fold them.
    public mutating func markStable(through frontier: Stamp, log: some ReplicaLog) -> [ReplicaDirective] {
        let frontier = min(frontier, clock.lastSeen)
        if let stableFrontier, frontier <= stableFrontier { return [] }
        stableFrontier = frontier
        var sequence = stableThrough
        while true {
            let page = log.ops(from: replica, after: sequence, limit: SyncLimits.stableScanOpsMax)
            let below = page.prefix { $0.stamp <= frontier }
            sequence = below.last?.sequence ?? sequence
            if below.count < page.count || page.count < SyncLimits.stableScanOpsMax { break }
        }
        guard sequence > stableThrough else { return [] }
        precondition(sequence < nextSequence, "only ops this replica wrote become stable")
        stableThrough = sequence
        acknowledgedThrough = max(acknowledgedThrough, sequence)
        return [.markStable(through: sequence)]
    }

    /// Marks stable the ops every member holds, given as version vectors: the stamp frontier of
    /// ``stampFrontier(covering:known:log:)``, given to ``markStable(through:log:)``.
    public mutating func markStable(
        covering vector: VersionVector, known: VersionVector, log: some ReplicaLog
    ) -> [ReplicaDirective] {
        guard let frontier = stampFrontier(covering: vector, known: known, log: log) else { return [] }
        return markStable(through: frontier, log: log)
    }

    /// The greatest stamp frontier that no op outside `vector` can fall under, now or later; nil when
    /// none is safe or none is new.
    ///
    /// For each origin, the first op after `vector` bounds the frontier (it must stay below that op's
    /// stamp); when the log does not hold that op but `known` says it exists, the last stable op of the
    /// origin bounds it instead (the origin's later ops are stamped above it), and nothing moves when
    /// that one is compacted already. Ops a member makes later are stamped above every op it received
    /// (the hybrid clock's receive rule), so above every stable op. The frontier never passes the
    /// greatest stable stamp.
    public func stampFrontier(covering vector: VersionVector, known: VersionVector, log: some ReplicaLog) -> Stamp? {
        let local = log.versionVector
        var greatestStable: Stamp? = stableFrontier
        var bound: Stamp?
        func lower(_ stamp: Stamp) { bound = bound.map { min($0, stamp) } ?? stamp }
        let origins = Set(local.entries.keys).union(vector.entries.keys).union(known.entries.keys)
        for origin in origins {
            let stable = min(vector[origin], local[origin])
            let last = stable > 0 ? log.ops(from: origin, after: stable - 1, limit: 1).first : nil
            if let last {
                precondition(last.sequence == stable, "the log returns the op asked for")
                greatestStable = greatestStable.map { max($0, last.stamp) } ?? last.stamp
            }
            if let next = log.ops(from: origin, after: stable, limit: 1).first {
                precondition(next.sequence == stable + 1, "the log is gap-free above the stable frontier")
                guard let below = next.stamp.predecessor else { return nil }
                lower(below)
            } else if max(known[origin], local[origin]) > stable {
                // A later op of this origin exists elsewhere: it is stamped above the origin's last stable op.
                guard let last else { return nil }
                lower(last.stamp)
            }
        }
        guard var frontier = greatestStable else { return nil }
        if let bound { frontier = min(frontier, bound) }
        if let stableFrontier, frontier <= stableFrontier { return nil }
        return frontier
    }

    /// The part of `vector` whose every op is stamped at or below ``stableFrontier``: what the replica
    /// announces as stable to its peers. The stamp frontier accounts for ops that exist elsewhere but
    /// not here (an origin's later op that a member acked): a leaf that took the whole vector from its
    /// hub could call an op stable, and a transaction's outcome final, while an earlier-stamped op of
    /// another leaf was still on its way.
    public func announceableStable(_ vector: VersionVector, log: some ReplicaLog) -> VersionVector {
        guard let frontier = stableFrontier else { return VersionVector() }
        var result = VersionVector()
        for (origin, sequence) in vector.entries {
            // An origin's stamps grow with its sequence: the last op under the frontier by bisection.
            // A compacted op (no stamp kept) lies under the frontier.
            func isUnder(_ sequence: UInt64) -> Bool {
                log.stamp(of: origin, sequence: sequence).map { $0 <= frontier } ?? true
            }
            var low: UInt64 = 0
            var high = sequence
            while low < high {
                let middle = low + (high - low + 1) / 2
                if isUnder(middle) { low = middle } else { high = middle - 1 }
            }
            precondition(low <= sequence, "the announced frontier stays within the given one")
            result.advance(origin: origin, to: low)
        }
        return result
    }

    /// The acknowledgements changed, or the durable log grew: the compaction cap follows the hubs, own
    /// ops acknowledged are marked, the stable vector grows (never back), the stamp frontier follows it
    /// (each time, not only when the vector moved: it also moves when an op it waited for arrives), and
    /// the announced stable vector follows the stamp frontier.
    public mutating func onAcknowledgements(
        _ inputs: AcknowledgementInputs, log: some ReplicaLog
    ) -> [ReplicaDirective] {
        compactionCap = inputs.compactionCap
        var directives: [ReplicaDirective] = []
        if inputs.acknowledgedThrough > 0 {
            directives += acknowledge(through: VersionVector([replica: inputs.acknowledgedThrough]))
        }
        if inputs.stable != stableVector, inputs.stable.covers(stableVector) { stableVector = inputs.stable }
        directives += markStable(covering: stableVector, known: inputs.known, log: log)
        let announced = announceableStable(stableVector, log: log)
        if announced != announcedStable, announced.covers(announcedStable) {
            precondition(stableVector.covers(announced), "only stable ops are announced stable")
            announcedStable = announced
            directives.append(.announceStable(announced))
        }
        return directives
    }

    /// Sets how far compaction may go (a sync driver starting over resets it: a driver before it may
    /// have left another cap).
    public mutating func setCompactionCap(_ cap: CompactionCap) { compactionCap = cap }

    // MARK: - Compaction

    /// How far a compaction may fold now: the stable frontier, no further than the hubs compacted, and
    /// below any call waiting for a function; nil when that folds nothing new.
    public func compactionFrontier(log: some ReplicaLog) -> Stamp? {
        guard let stable = stableFrontier.flatMap(compactionCap.capping),
            var frontier = log.compactionFrontier(upTo: stable)
        else { return nil }
        // Fold only what the stable vector covers. An op stamped under the frontier may arrive after it
        // was set, from a replica this one did not know then (a leaf's or a joiner's offline writes):
        // folded, a member lacking it would need a snapshot. It stays in the log until members hold it.
        // (A frontier set by stamp alone, `markStable(through:)` without vectors, is taken as it is.)
        if !stableVector.entries.isEmpty {
            var earliest: Stamp?
            log.forEachLoggedOp(through: frontier) { op in
                if op.sequence > stableVector[op.origin] { earliest = min(earliest ?? op.stamp, op.stamp) }
            }
            if let earliest {
                var before: Stamp?
                log.forEachLoggedOp(through: earliest) { op in
                    if op.stamp < earliest { before = max(before ?? op.stamp, op.stamp) }
                }
                guard let before else { return nil }
                if let current = log.frontier, before <= current { return nil }
                frontier = before
            }
        }
        precondition(frontier <= stable, "a compaction stays under the stable frontier")
        return frontier
    }

    /// The shell is about to fold the log up to `frontier` (from ``compactionFrontier(log:)``): the
    /// compaction vector takes in the ops it folds. Call before the engine compacts.
    public mutating func compacting(upTo frontier: Stamp, log: some ReplicaLog) {
        precondition(stableFrontier.map { frontier <= $0 } ?? false, "a compaction stays under the stable frontier")
        log.forEachLoggedOp(through: frontier) { op in compactionVector.advance(origin: op.origin, to: op.sequence) }
    }

    // MARK: - Snapshots

    /// Whether to install `snapshot`, a peer's compacted base: not when the log holds every op of it
    /// (unless it holds partial ops that the base folds: a share is compacted only by its hub's base),
    /// nor when it lacks its sender's stamp frontier; otherwise the clock adopts that stamp first, so
    /// that later stamps, and those of own ops stamped again above it (``nextStamp(wallMillis:)``), are
    /// above it.
    /// - Throws: the clock's `CoreError` when the sender's stamp is beyond the drift bound.
    public mutating func snapshotInstall(
        _ snapshot: SyncSnapshot, wallMillis: UInt64, log: some ReplicaLog
    ) throws -> SnapshotInstallDecision {
        if log.versionVector.covers(snapshot.frontier),
            !(log.holdsPartialOps && !compactionVector.covers(snapshot.frontier))
        {
            // Everything of it is here: it is installed only to stamp again own ops its sender refused.
            guard let stamp = snapshot.stampFrontier, log.strandsOwnOps(of: replica, outside: snapshot.frontier, through: stamp)
            else { return .holdsEverything }
        }
        guard let stamp = snapshot.stampFrontier else { return .lacksStampFrontier }
        try clock.receive(stamp, wallMillis: wallMillis)
        return .install(
            CompactedBase(
                value: snapshot.value, vector: snapshot.frontier, stampFrontier: stamp, touches: snapshot.touches))
    }

    /// The shell installed a snapshot of `frontier`: it is the compaction vector now, and the next write
    /// takes a sequence above every own op it holds.
    public mutating func installed(_ frontier: VersionVector) {
        compactionVector = frontier
        nextSequence = max(nextSequence, frontier[replica] + 1)
    }
}

extension HybridClock {
    /// The greatest stamp at the clock's last time: every stamp it made or received is at or below it,
    /// every stamp it makes later is above it.
    var lastSeen: Stamp { Stamp(time: lastTime, replica: ReplicaID.greatest) }
}

extension ReplicaID {
    /// The greatest replica id, which ends the stamps of a time.
    static var greatest: ReplicaID {
        guard let id = ReplicaID(rawValue: .max) else { preconditionFailure("only zero is not a replica id") }
        return id
    }
}

extension Stamp {
    /// The greatest stamp below this one; nil for the smallest stamp.
    var predecessor: Stamp? {
        if let replica = ReplicaID(rawValue: replica.rawValue - 1) { return Stamp(time: time, replica: replica) }
        guard time > 0 else { return nil }
        return Stamp(time: time - 1, replica: .greatest)
    }
}
