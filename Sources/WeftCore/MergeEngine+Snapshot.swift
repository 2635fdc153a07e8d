// Installing another replica's compacted base: the deterministic part of a snapshot install (which ops
// fold, which stay, which are stamped again, and the engine that results). The replica adds the store.

/// What a replica installs: another replica's compacted base, the ops folded into it, the stamp it
/// compacted up to and the touches of the folded ops.
public struct CompactedBase: Sendable, Hashable {
    /// The state after folding every op of `vector`.
    public var value: Value
    /// The ops folded into `value`.
    public var vector: VersionVector
    /// No op outside `vector` is stamped at or below it (the sender's compaction frontier).
    public var stampFrontier: Stamp
    /// Which origins' folded ops touched which paths (for the transaction rule).
    public var touches: [CompactedTouch]

    public init(value: Value, vector: VersionVector, stampFrontier: Stamp, touches: [CompactedTouch]) {
        self.value = value
        self.vector = vector
        self.stampFrontier = stampFrontier
        self.touches = touches
    }
}

/// The outcome of ``MergeEngine/installing(_:local:localBaseVector:acknowledgedThrough:nextStamp:)``.
public struct CompactedBaseInstall {
    /// The engine over the installed base, with the kept and restamped ops applied.
    public let engine: MergeEngine
    /// Ops of the old log the base already held.
    public let folded: Int
    /// Ops of the old log kept as they were.
    public let kept: Int
    /// The local replica's ops stamped again, in sequence order (each replaces the op of its sequence).
    public let restamped: [Op]
}

extension MergeEngine {
    /// True when the log holds an op of `local` outside `vector` stamped at or below `stamp`: an own op a
    /// base of `vector` compacted up to `stamp` leaves stranded (its sender refuses it until it is
    /// stamped again).
    public func strandsOwnOps(of local: ReplicaID, outside vector: VersionVector, through stamp: Stamp) -> Bool {
        var found = false
        forEachLoggedOp(through: stamp) { op in
            if op.origin == local, op.sequence > vector[local] { found = true }
        }
        return found
    }

    /// The engine this one becomes when it installs `base`: the base's value under the base's frontiers
    /// and touches, with every known op outside the base replayed on it.
    ///
    /// A log holding partial ops (a share of a hub's tree) installs its hub's base even when it holds
    /// every op of it: the partial ops may be decisions the hub revised since (``compactionFrontier(upTo:)``
    /// leaves them to this install).
    ///
    /// An op outside the base stamped at or below its stamp frontier cannot take its place in stamp
    /// order (the ops around it are folded). When it is `local`'s and `local`'s ops from it on are
    /// not acknowledged by any replica (`acknowledgedThrough` is below it), those ops are stamped
    /// again, in sequence order, with stamps `nextStamp` gives (the caller's clock, which has seen the
    /// stamp frontier); their sequences stay. Otherwise the install is refused.
    ///
    /// ```swift
    /// let install = try engine.installing(base, local: me, localBaseVector: folded, acknowledgedThrough: 0) {
    ///     try clock.next(wallMillis: now)
    /// }
    /// ```
    /// - Parameters:
    ///   - localBaseVector: the ops folded into this engine's own base; the installed base must hold them.
    /// - Returns: nil when this engine already holds every op of the base and no partial op, or its own
    ///   base already holds the base's ops (nothing to install).
    /// - Throws: ``CoreError/snapshotNotInstallable(reason:)``, or what `nextStamp` throws; this engine
    ///   is unchanged either way.
    public func installing(
        _ base: CompactedBase, local: ReplicaID, localBaseVector: VersionVector, acknowledgedThrough: UInt64,
        nextStamp: () throws -> Stamp
    ) throws -> CompactedBaseInstall? {
        let vector = base.vector
        if versionVector.covers(vector), !(holdsPartialOps && !localBaseVector.covers(vector)) {
            // Everything of the base is here: install only to stamp again own ops its sender refused.
            guard strandsOwnOps(of: local, outside: vector, through: base.stampFrontier) else { return nil }
        }
        guard vector.covers(localBaseVector) else {
            throw CoreError.snapshotNotInstallable(
                reason: "this replica compacted ops the snapshot lacks (its base holds \(localBaseVector), "
                    + "the snapshot \(vector))")
        }
        var folded = 0
        var kept: [Op] = []
        var stranded: [Op] = []
        for op in sortedOps() {
            if op.sequence <= vector[op.origin] {
                folded += 1
            } else if op.stamp <= base.stampFrontier {
                stranded.append(op)
            } else {
                kept.append(op)
            }
        }
        var restamped: [Op] = []
        if let first = stranded.first {
            if let foreign = stranded.first(where: { $0.origin != local }) {
                throw CoreError.snapshotNotInstallable(
                    reason:
                        "this replica holds op \(foreign.sequence) of \(foreign.origin), stamped \(foreign.stamp.text), "
                        + "at or below the stamp the snapshot's sender compacted up to and outside the snapshot; it "
                        + "cannot take its place in stamp order")
            }
            // All stranded ops are local, and a replica's stamps grow with its sequence.
            let from = first.sequence
            guard acknowledgedThrough < from else {
                throw CoreError.snapshotNotInstallable(
                    reason:
                        "this replica's op \(from) is stamped at or below the stamp the snapshot's sender compacted "
                        + "up to, and another replica acknowledged it, so it cannot be stamped again")
            }
            let own = (stranded + kept.filter { $0.origin == local && $0.sequence >= from })
                .sorted { $0.sequence < $1.sequence }
            kept.removeAll { $0.origin == local && $0.sequence >= from }
            var previous = base.stampFrontier
            for op in own {
                let stamp = try nextStamp()
                guard stamp > previous else {
                    throw CoreError.snapshotNotInstallable(
                        reason: "the clock gave stamp \(stamp.text), not above \(previous.text), to stamp an op again")
                }
                previous = stamp
                restamped.append(Op(stamp: stamp, sequence: op.sequence, path: op.path, kind: op.kind))
            }
        }
        let installed = MergeEngine(
            registry: registry, base: base.value,
            frontier: frontier.map { max($0, base.stampFrontier) } ?? base.stampFrontier,
            baseVector: vector, compactedTouches: base.touches, capturesChanges: false)
        installed.apply(kept + restamped)
        installed.capturesChanges = capturesChanges
        return CompactedBaseInstall(engine: installed, folded: folded, kept: kept.count, restamped: restamped)
    }
}
