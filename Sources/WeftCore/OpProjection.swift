/// How a path stands to a share: the part of the tree a replica limited to some subtrees may read.
public enum ShareRelation: Sendable, Hashable {
    /// The path and everything below it are in the share.
    case inside
    /// Nothing at or below the path is in the share.
    case outside
    /// The path is not wholly in the share, but some path below it is (it is above a part of the share).
    case above
}

/// The part of the tree a replica limited to some subtrees may read (a leaf's read grant on its hub).
///
/// ```swift
/// struct Stores: ReadShare {   // /stores/leaf1 and everything below it
///     func relation(to path: Path) -> ShareRelation { … }
/// }
/// let mine = Stores().restrict(hub.state, at: .root)
/// ```
public protocol ReadShare: Sendable {
    /// Where `path` stands: in the share, outside it, or above a part of it.
    func relation(to path: Path) -> ShareRelation
}

extension ReadShare {
    /// `value`, found at `path`, cut down to the share: what a replica limited to it may hold there.
    /// A scalar above the share holds nothing of it (null); an object keeps only the children that do.
    public func restrict(_ value: Value, at path: Path) -> Value {
        switch relation(to: path) {
        case .inside: return value
        case .outside: return .null
        case .above:
            guard case .object(let children) = value else { return .null }
            var kept: [Key: Value] = [:]
            for (key, child) in children {
                let part = restrict(child, at: Path(uncheckedKeys: path.keys + [key]))
                if !part.isNull { kept[key] = part }
            }
            return kept.isEmpty ? .null : .object(kept)
        }
    }
}

/// What a hub sends a replica limited to a share in place of one op of its log, so that the replica's
/// log stays gap-free while it never holds a value outside its share.
///
/// - An op wholly inside the share goes as it is.
/// - An op wholly outside goes as a *withheld placeholder*: the same origin, sequence and stamp, no
///   value; it writes nothing, and keeps as read paths the op's anchors in or above the share, so the
///   transaction rule sees the same touches there on both replicas.
/// - An op that straddles (a set, merge or batch above the share) goes *projected*: its values and parts
///   cut down to the share. The share of the state then folds the same on both replicas.
/// - An op whose effect on the share hangs on what the replica cannot see (a transaction above the
///   share, a guarded batch reading outside it, a batch whose increment outside it may reject the
///   whole batch, a call above it) goes as the hub decided it. Applied: its writes cut down, as a guarded batch that
///   reads the op's anchors in or above the share and has seen everything (so the replica applies it,
///   and keeps the touches). Rejected: a placeholder. Without the hub's outcome it is
///   ``Projection/undecided``.
///
/// Placeholders and projections are partial ops (``Op/isPartial``).
///
/// ```swift
/// switch OpProjection.project(op, into: share, outcome: engine.outcome(of: op.stamp), seen: everySeen) {
/// case .whole: send(op)
/// case .partial(let cut): send(cut)
/// case .undecided: closeWithLocalFailure()
/// }
/// ```
public enum OpProjection {
    /// The op to send for one op of the log.
    public enum Projection: Sendable, Hashable {
        /// The op itself.
        case whole
        /// A projected op or a withheld placeholder (partial).
        case partial(Op)
        /// Its effect on the share hangs on the hub's outcome, which was not given.
        case undecided
    }

    /// A sequence above any an origin reaches, with room for the engine's arithmetic on read vectors: the
    /// entry of an origin seen to the end in a decision carried as applied.
    public static let everySequence: UInt64 = 1 << 62

    /// The projection of `op` into `share`.
    ///
    /// - Parameters:
    ///   - op: an op of the hub's log.
    ///   - share: what the receiving replica may read.
    ///   - outcome: the hub's outcome of `op`, asked for only when the share cannot decide it.
    ///   - seen: what a decision carried as applied says its op had seen (the read vector of the guarded
    ///     batch it becomes). A hub passes every origin it knows and the receiver's, each at
    ///     ``everySequence``, so that the receiver never re-decides it: the hub's decision stands.
    ///   - result: for an applied call above the share, the value it wrote at its node
    ///     (``MergeEngine/result(ofCall:)``); asked only then.
    public static func project(
        _ op: Op, into share: some ReadShare, outcome: @autoclosure () -> Outcome?, seen: VersionVector,
        result: @autoclosure () -> Value? = nil
    ) -> Projection {
        switch op.kind {
        case .set(let value):
            switch share.relation(to: op.path) {
            case .inside: return .whole
            case .outside: return .partial(withheld(op, share: share))
            case .above: return .partial(partial(op, path: op.path, kind: .set(share.restrict(value, at: op.path))))
            }
        case .merge(let children):
            let (kept, changed) = cut(children, at: op.path, share: share)
            if !changed { return .whole }
            if kept.isEmpty { return .partial(withheld(op, share: share)) }
            return .partial(partial(op, path: op.path, kind: .merge(kept)))
        case .increment:
            // An increment above the share meets an object there (and is rejected) or writes a number
            // where the share holds nothing: it never changes the share.
            return share.relation(to: op.path) == .inside ? .whole : .partial(withheld(op, share: share))
        case .call:
            switch share.relation(to: op.path) {
            case .inside: return .whole
            case .outside: return .partial(withheld(op, share: share))
            case .above:
                // App code over values the replica cannot see: the hub carries what the call wrote.
                switch outcome() {
                case .applied?:
                    guard let written = result() else { return .undecided }
                    return .partial(
                        guarded(op, read: seen, reads: touched(by: op, share: share),
                            writes: [.set(op.path, share.restrict(written, at: op.path))]))
                // Waiting for its function, it has written nothing yet (a revision follows if it does).
                case .rejected?, .waiting?: return .partial(withheld(op, share: share))
                case nil: return .undecided
                }
            }
        case .transaction(_, let result):
            switch share.relation(to: op.path) {
            case .inside: return .whole
            case .outside: return .partial(withheld(op, share: share))
            case .above:
                return decided(op, share: share, outcome: outcome(), seen: seen) {
                    [.set(op.path, share.restrict(result, at: op.path))]
                }
            }
        case .batch(let writes):
            let projected = cut(writes, share: share)
            if projected.writes.isEmpty { return .partial(withheld(op, share: share)) }
            if projected.isDecidable {
                if !projected.changed { return .whole }
                return .partial(partial(op, path: commonPath(of: projected.writes), kind: .batch(projected.writes)))
            }
            return decided(op, share: share, outcome: outcome(), seen: seen) { projected.writes }
        case .guardedBatch(let read, let reads, let writes):
            let projected = cut(writes, share: share)
            if projected.isDecidable, reads.allSatisfy({ share.relation(to: $0) == .inside }) {
                if !projected.changed { return .whole }
                // The reads stay: the replica decides the rule on its share, and the touches hold.
                var path = commonPath(of: projected.writes) ?? reads[0]
                for read in reads { path = path.commonAncestor(with: read) }
                return .partial(partial(op, path: path, kind: .guardedBatch(read: read, reads: reads, writes: projected.writes)))
            }
            if projected.writes.isEmpty { return .partial(withheld(op, share: share)) }
            return decided(op, share: share, outcome: outcome(), seen: seen) { projected.writes }
        }
    }

    /// True when what `op` does to `share` hangs on the hub's outcome of it (or, for a call, its result):
    /// its projection is the hub's decision, which the hub sends again when it changes (a revision).
    public static func carriesDecision(_ op: Op, into share: some ReadShare) -> Bool {
        project(op, into: share, outcome: nil, seen: VersionVector()) == .undecided
    }

    /// The withheld placeholder of `op`: it writes nothing, and reads (touches) the op's anchors in or
    /// above the share.
    public static func withheld(_ op: Op, share: some ReadShare) -> Op {
        guarded(op, read: VersionVector(), reads: touched(by: op, share: share), writes: [])
    }

    /// True when `op` is a withheld placeholder (a partial op that writes nothing).
    public static func isWithheld(_ op: Op) -> Bool {
        guard op.isPartial, case .guardedBatch(_, _, let writes) = op.kind else { return false }
        return writes.isEmpty
    }

    // MARK: - Parts

    private static func partial(_ op: Op, path: Path?, kind: OpKind) -> Op {
        Op(stamp: op.stamp, sequence: op.sequence, path: path ?? .root, kind: kind, isPartial: true)
    }

    /// The anchors of `op` in or above the share: the nodes whose touches the transaction rule of an op
    /// in the share may ask about.
    private static func touched(by op: Op, share: some ReadShare) -> [Path] {
        OpKind.minimalReadPaths(op.anchors.filter { share.relation(to: $0) != .outside })
    }

    /// A partial guarded batch for `op`, its path the common ancestor of what it reads and writes.
    private static func guarded(_ op: Op, read: VersionVector, reads: [Path], writes: [Write]) -> Op {
        var path = reads.first ?? writes.first?.path ?? .root
        for read in reads { path = path.commonAncestor(with: read) }
        for write in writes { path = path.commonAncestor(with: write.path) }
        return partial(op, path: path, kind: .guardedBatch(read: read, reads: reads, writes: writes))
    }

    /// What the hub decided. Rejected: a placeholder. Applied: its writes in the share, as a guarded batch
    /// that reads (touches) the op's anchors in or above the share and has seen `seen`, so that the
    /// replica applies it and sees the same touches as the hub for the ops after it.
    private static func decided(
        _ op: Op, share: some ReadShare, outcome: Outcome?, seen: VersionVector, writes: () -> [Write]
    ) -> Projection {
        switch outcome {
        case .applied?:
            return .partial(guarded(op, read: seen, reads: touched(by: op, share: share), writes: writes()))
        case .rejected?: return .partial(withheld(op, share: share))
        case .waiting?, nil: return .undecided
        }
    }

    /// The children of a merge at `path` in the share: those inside as they are, those above cut down.
    private static func cut(_ children: [MergeChild], at path: Path, share: some ReadShare)
        -> (kept: [MergeChild], changed: Bool)
    {
        var kept: [MergeChild] = []
        var changed = false
        for child in children {
            let anchor = Path(uncheckedKeys: path.keys + child.relative.keys)
            switch share.relation(to: anchor) {
            case .inside: kept.append(child)
            case .outside: changed = true
            case .above:
                changed = true
                kept.append(MergeChild(relative: child.relative, value: share.restrict(child.value, at: anchor)))
            }
        }
        return (kept, changed)
    }

    /// The writes of a batch in the share.
    private struct CutWrites {
        var writes: [Write] = []
        var changed = false
        /// False when a dropped increment could reject the batch (the replica cannot tell).
        var isDecidable = true
    }

    private static func cut(_ writes: [Write], share: some ReadShare) -> CutWrites {
        var result = CutWrites()
        for write in writes {
            switch write {
            case .set(let path, let value):
                switch share.relation(to: path) {
                case .inside: result.writes.append(write)
                case .outside: result.changed = true
                case .above:
                    result.changed = true
                    result.writes.append(.set(path, share.restrict(value, at: path)))
                }
            case .merge(let path, let children):
                let (kept, changed) = cut(children, at: path, share: share)
                result.changed = result.changed || changed
                if !kept.isEmpty { result.writes.append(.merge(path, kept)) }
            case .increment(let path, _, _):
                if share.relation(to: path) == .inside {
                    result.writes.append(write)
                } else {
                    // Its own effect on the share is nil (see `project`), but its rejection takes back
                    // the whole batch, and it hangs on a value outside the share.
                    result.changed = true
                    result.isDecidable = false
                }
            }
        }
        return result
    }

    private static func commonPath(of writes: [Write]) -> Path? {
        guard var path = writes.first?.path else { return nil }
        for write in writes.dropFirst() { path = path.commonAncestor(with: write.path) }
        return path
    }
}
