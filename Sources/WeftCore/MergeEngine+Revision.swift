// Revising carried decisions: a replica limited to a share holds, for an op whose effect on its share it
// cannot decide, the decision its hub carried (a partial op, see `OpProjection`). When the hub's decision
// changes (an op stamped earlier reached it later), the hub sends the op again as it now decides it, under
// the same origin, sequence and stamp, and the replica puts it in place of the one it held.

/// The outcome of ``MergeEngine/revising(_:baseVector:)``.
public struct EngineRevision {
    /// The engine over the same base, with the revised ops in place of those they replace.
    public let engine: MergeEngine
    /// The revised ops that differ from the ones held (each replaces the op of its origin and sequence).
    public let replaced: [Op]
}

extension MergeEngine {
    /// The engine this one becomes when each op of `revisions` replaces the held op of its origin and
    /// sequence: the same base, frontiers and compacted touches, with the log re-folded from the base.
    ///
    /// A revision must be partial (``Op/isPartial``) and name a held partial op by its origin, sequence and
    /// stamp: only a decision a hub carried is ever revised. A revision of an op already folded into the
    /// base is passed over (the hub decides no compacted op again), and so is one equal to the op held.
    ///
    /// ```swift
    /// if let revision = try engine.revising(fromHub, baseVector: folded) { engine = revision.engine }
    /// ```
    /// - Parameters:
    ///   - revisions: partial ops, each in place of a held one.
    ///   - baseVector: the ops folded into this engine's base (the replica's compaction vector).
    /// - Returns: nil when no revision changes an op held.
    /// - Throws: ``CoreError/invalidOp(reason:)`` when a revision is whole, names an op not held, an op
    ///   held under another stamp, or a whole op; this engine is unchanged either way.
    public func revising(_ revisions: [Op], baseVector: VersionVector) throws(CoreError) -> EngineRevision? {
        var replacing: [Stamp: Op] = [:]
        for revision in revisions {
            guard revision.isPartial else {
                throw .invalidOp(
                    reason: "op \(revision.sequence) of \(revision.origin) came as a revision but is whole; only "
                        + "a decision carried to a share is revised")
            }
            if revision.sequence <= baseVector[revision.origin] { continue }
            guard let held = origins[revision.origin]?.op(at: revision.sequence) else {
                throw .invalidOp(
                    reason: "op \(revision.sequence) of \(revision.origin) came as a revision, but this replica "
                        + "does not hold that op")
            }
            guard held.stamp == revision.stamp else {
                throw .invalidOp(
                    reason: "the revision of op \(revision.sequence) of \(revision.origin) is stamped "
                        + "\(revision.stamp.text), the op held \(held.stamp.text)")
            }
            guard held.isPartial else {
                throw .invalidOp(
                    reason: "op \(revision.sequence) of \(revision.origin) is held whole; only a decision carried "
                        + "to a share is revised")
            }
            if held != revision { replacing[revision.stamp] = revision }
        }
        guard !replacing.isEmpty else { return nil }
        let ops = sortedOps().map { replacing[$0.stamp] ?? $0 }
        let revised = MergeEngine(
            registry: registry, base: base, frontier: frontier, baseVector: baseVector,
            compactedTouches: allCompactedTouches(), capturesChanges: false)
        revised.apply(ops)
        revised.capturesChanges = capturesChanges
        return EngineRevision(engine: revised, replaced: replacing.values.sorted { $0.stamp < $1.stamp })
    }
}

extension MergeEngine {
    /// The value an applied call wrote at its node, as the log folds it now: what a hub carries to a
    /// replica limited to a share for a call above the share (the replica cannot run the function on
    /// values it does not hold). Nil when the op is not a call in the log, or not applied.
    ///
    /// It replays every logged op stamped before the call from the base (their outcomes as decided), so
    /// it costs a pass over the log: hubs ask it only for calls above a share.
    ///
    /// ```swift
    /// let written = engine.result(ofCall: call.stamp)   // the share of it goes to the leaf
    /// ```
    public func result(ofCall stamp: Stamp) -> Value? {
        guard let op = logged(stamp), case .call(let call) = op.kind, outcome(of: stamp) == .applied,
            let function = registry.function(name: call.name, version: call.version)
        else { return nil }
        var tree = base
        for other in sortedOps() {
            guard other.stamp < stamp else { break }
            Fold.replay(other, outcome: outcome(of: other.stamp) ?? .applied, to: &tree, registry: registry)
        }
        guard let result = function(tree.value(at: op.path), call.arguments),
            case .success(let value) = Fold.checkedResult(result, at: op.path)
        else { return nil }
        return value
    }
}
