import WeftCore

/// A deliberately broken merge or stability rule. A run with a sabotage must fail one of the checkers:
/// that is how the simulator shows its checkers can see such a bug at all.
///
/// Sabotage lives here, never in WeftCore or WeftSync: a merge rule is broken in a wrapper around the
/// real engine, the stability rule by the shell breaking what it feeds the product's `ReplicaInstance`.
///
/// ```swift
/// var options = ScenarioOptions()
/// options.sabotage = .arrivalOrderWins
/// ```
public enum Sabotage: String, Codable, Sendable, Hashable, CaseIterable {
    /// A `set` that arrives last wins, whatever its stamp (last writer wins by arrival order).
    case arrivalOrderWins = "arrival-order-wins"
    /// An increment delivered again is counted again.
    case duplicateIncrementsCounted = "double-count"
    /// An increment equal to one already applied to the same counter is taken for a duplicate and
    /// dropped.
    case equalIncrementsDropped = "drop-equal-increments"
    /// A transaction whose read was stale applies anyway.
    case transactionsNeverValidated = "unvalidated-transactions"
    /// A registered call runs once, on the state it meets when it arrives, instead of at its place
    /// in stamp order.
    case callsRunAtArrival = "calls-at-arrival"
    /// The stable stamp frontier ignores `known`, the ops members acknowledged that this replica does not
    /// hold yet: an origin whose next op is elsewhere no longer bounds it.
    case stabilityIgnoresKnown = "stable-ignores-known"
    /// Relation changes are written as blind batches: they read nothing, so a link may land on an
    /// object deleted concurrently, and a delete may miss a concurrent link (needs `--relations`).
    case relationsBlind = "blind-relations"
    /// Relation changes read the paths their writes depend on but not the relation clock, so an
    /// applied change may rest on an earlier change that the fold rejected (needs `--relations`).
    case relationsUnserialized = "unserialized-relations"

    /// True for a sabotage of the stability rule (``ReplicaInstance``), false for one of the merge engine.
    public var breaksStability: Bool { self == .stabilityIgnoresKnown }

    /// What the sabotage breaks, in a sentence.
    public var summary: String {
        switch self {
        case .arrivalOrderWins: return "last writer wins by arrival order instead of stamp order"
        case .duplicateIncrementsCounted: return "increments delivered twice are counted twice"
        case .equalIncrementsDropped: return "equal increments of one counter are dropped as duplicates"
        case .transactionsNeverValidated: return "stale transactions are applied instead of rejected"
        case .callsRunAtArrival: return "registered calls run on arrival, not at their place in stamp order"
        case .stabilityIgnoresKnown:
            return "the stable stamp frontier ignores ops members hold that this replica has not received"
        case .relationsBlind: return "relation changes are written as blind batches"
        case .relationsUnserialized: return "relation changes do not read the relation clock"
        }
    }

    /// True for the sabotages of the relation planner's batches, which leave the engine as it is and
    /// need relation traffic (``ScenarioOptions/relationShare``) to show.
    public var breaksRelations: Bool {
        switch self {
        case .relationsBlind, .relationsUnserialized: return true
        default: return false
        }
    }
}

/// The real engine with one rule broken: the state it shows is the real state with patches laid on
/// top, each patch being what the broken rule did differently.
final class SabotagedEngine: ReplicaEngine {
    enum Patch {
        /// The broken rule wrote this value here.
        case write(Path, Value)
        /// The broken rule moved this counter by this much more (or less) than the real rule.
        case add(Path, Int64)
    }

    let inner: MergeEngine
    let sabotage: Sabotage
    private var patches: [Patch] = []
    private var cached: Value?
    /// Increments seen per counter, for ``Sabotage/equalIncrementsDropped``.
    private var incrementsSeen: Set<IncrementKey> = []

    struct IncrementKey: Hashable {
        let path: Path
        let by: Int64
    }

    init(inner: MergeEngine, sabotage: Sabotage) {
        self.inner = inner
        self.sabotage = sabotage
    }

    var state: Value {
        if let cached { return cached }
        var state = inner.state
        for patch in patches {
            switch patch {
            case .write(let path, let value): state.write(value, at: path)
            case .add(let path, let delta):
                if case .int(let current) = state.value(at: path) {
                    state.write(.int(current &+ delta), at: path)
                }
            }
        }
        cached = state
        return state
    }

    var digest: StateDigest { StateDigest(of: state) }
    var versionVector: VersionVector { inner.versionVector }

    func ops(from origin: ReplicaID, after sequence: UInt64, limit: Int) -> [Op] {
        inner.ops(from: origin, after: sequence, limit: limit)
    }

    func stamp(of origin: ReplicaID, sequence: UInt64) -> Stamp? { inner.stamp(of: origin, sequence: sequence) }

    func contains(_ stamp: Stamp) -> Bool { inner.contains(stamp) }
    var frontier: Stamp? { inner.frontier }
    var holdsPartialOps: Bool { inner.holdsPartialOps }
    func strandsOwnOps(of local: ReplicaID, outside vector: VersionVector, through stamp: Stamp) -> Bool {
        inner.strandsOwnOps(of: local, outside: vector, through: stamp)
    }
    var base: Value { inner.base }
    func allCompactedTouches() -> [CompactedTouch] { inner.allCompactedTouches() }
    func forEachLoggedOp(through frontier: Stamp, _ body: (Op) -> Void) {
        inner.forEachLoggedOp(through: frontier, body)
    }

    /// The real engine installs the base; the broken rule goes on from there, its earlier patches gone
    /// with the state they patched.
    func installingBase(
        _ base: CompactedBase, local: ReplicaID, localBaseVector: VersionVector, acknowledgedThrough: UInt64,
        nextStamp: () throws -> Stamp
    ) throws -> (engine: any ReplicaEngine, install: CompactedBaseInstall)? {
        let install = try inner.installing(
            base, local: local, localBaseVector: localBaseVector, acknowledgedThrough: acknowledgedThrough,
            nextStamp: nextStamp)
        return install.map { (SabotagedEngine(inner: $0.engine, sabotage: sabotage), $0) }
    }
    var statistics: MergeStatistics { inner.statistics }
    func checkInvariants() throws(MergeInvariantViolation) { try inner.checkInvariants() }
    func compact(upTo frontier: Stamp) -> Int { inner.compact(upTo: frontier) }
    func compactionFrontier(upTo stable: Stamp) -> Stamp? { inner.compactionFrontier(upTo: stable) }
    func outcome(of stamp: Stamp) -> Outcome? { inner.outcome(of: stamp) }
    func result(ofCall stamp: Stamp) -> Value? { inner.result(ofCall: stamp) }

    /// A sabotaged run has no share leaf (see `ShareLeaf.validate`); the real engine revises all the same.
    func revisingCarried(_ revisions: [Op], baseVector: VersionVector) throws -> (
        engine: any ReplicaEngine, replaced: [Op]
    )? {
        try inner.revising(revisions, baseVector: baseVector).map {
            (SabotagedEngine(inner: $0.engine, sabotage: sabotage), $0.replaced)
        }
    }

    func apply(_ ops: [Op]) -> ApplyReport {
        let known = ops.map { inner.contains($0.stamp) }
        let before = sabotage == .callsRunAtArrival ? state : .null
        let report = inner.apply(ops)
        cached = nil
        for (op, wasKnown) in zip(ops, known) {
            breakRule(op, wasKnown: wasKnown, report: report, before: before)
        }
        return report
    }

    private func breakRule(_ op: Op, wasKnown: Bool, report: ApplyReport, before: Value) {
        switch sabotage {
        case .arrivalOrderWins:
            guard !wasKnown else { return }
            patches.removeAll { patch in
                if case .write(let path, _) = patch { return op.path.isRelated(to: path) }
                return false
            }
            if case .set(let value) = op.kind { patches.append(.write(op.path, value)) }
        case .duplicateIncrementsCounted:
            guard wasKnown, case .increment(.int(let by), _) = op.kind else { return }
            patches.append(.add(op.path, by))
        case .equalIncrementsDropped:
            guard !wasKnown, case .increment(.int(let by), _) = op.kind, by != 0 else { return }
            let key = IncrementKey(path: op.path, by: by)
            if !incrementsSeen.insert(key).inserted { patches.append(.add(op.path, -by)) }
        case .transactionsNeverValidated:
            guard !wasKnown, case .transaction(_, let result) = op.kind,
                case .rejected(.staleRead) = report.outcomes[op.stamp]
            else { return }
            patches.append(.write(op.path, result))
        case .callsRunAtArrival:
            guard !wasKnown, case .call(let call) = op.kind,
                let function = inner.registry.function(name: call.name, version: call.version),
                let result = function(before.value(at: op.path), call.arguments)
            else { return }
            patches.append(.write(op.path, result.normalized))
        case .stabilityIgnoresKnown, .relationsBlind, .relationsUnserialized:
            // Not merge rules: the engine is not wrapped for them (see `Sabotage.engine`).
            return
        }
    }
}
