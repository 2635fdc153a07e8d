import WeftCore
import WeftSync

/// An honest in-memory op log for tests: ops kept per origin and sequence, a gap-free version vector,
/// compaction into a base state, snapshot install, and the state as the reference fold of it all.
struct MemoryOpLog: OpSource {
    let replica: ReplicaID
    private(set) var clock: HybridClock
    /// Ops not folded into the base, per origin and sequence (may hold ops beyond a gap).
    private(set) var held: [ReplicaID: [UInt64: Op]] = [:]
    private(set) var versionVector = VersionVector()
    private(set) var compactionFrontier = VersionVector()
    private(set) var base: Value = .null
    var stableFrontier = VersionVector()
    /// When true, the log hands its sessions the ops' bytes (``OpSource/encodedOps``), as a log that kept
    /// them would; else the sessions encode the ops.
    var keepsBytes = false
    /// Wall time used for the next local stamp, in milliseconds; advanced by every write.
    var wallMillis: UInt64 = 1_000_000

    init(replica: ReplicaID) {
        self.replica = replica
        clock = HybridClock(replica: replica)
    }

    // MARK: - Writing

    /// Makes a local op of `kind` at `path` with the next sequence.
    @discardableResult
    mutating func write(_ kind: OpKind, at path: String) throws -> Op {
        wallMillis += 1
        let stamp = try clock.next(wallMillis: wallMillis)
        let op = Op(stamp: stamp, sequence: versionVector[replica] + 1, path: try Path(path), kind: kind)
        insert(op)
        return op
    }

    /// Merges ops from elsewhere, in any order, ignoring duplicates.
    mutating func apply(_ ops: [Op]) {
        for op in ops {
            try? clock.receive(op.stamp, wallMillis: wallMillis)
            insert(op)
        }
    }

    /// Puts each revised decision in place of the partial op held under its origin and sequence.
    mutating func revise(_ revisions: [Op]) {
        for op in revisions {
            guard let held = held[op.origin]?[op.sequence], held.isPartial, held.stamp == op.stamp else { continue }
            self.held[op.origin]?[op.sequence] = op
        }
    }

    private mutating func insert(_ op: Op) {
        guard op.sequence > compactionFrontier[op.origin] else { return }
        held[op.origin, default: [:]][op.sequence] = op
        advance(op.origin)
    }

    private mutating func advance(_ origin: ReplicaID) {
        var last = versionVector[origin]
        while held[origin]?[last + 1] != nil { last += 1 }
        versionVector.advance(origin: origin, to: last)
    }

    // MARK: - Compaction and snapshots

    /// Folds every held op covered by `frontier` into the base and drops it.
    mutating func compact(upTo frontier: VersionVector) {
        precondition(versionVector.covers(frontier), "compacting ops the log does not have")
        let folded = allOps.filter { frontier.contains(origin: $0.origin, sequence: $0.sequence) }
        base = ReferenceFold.fold(folded, base: base, registry: FunctionRegistry()).state
        for op in folded { held[op.origin]?[op.sequence] = nil }
        compactionFrontier = compactionFrontier.merged(with: frontier)
    }

    /// Replaces the base with a snapshot, keeping held ops above its frontier.
    mutating func install(_ snapshot: SyncSnapshot) {
        base = snapshot.value
        for (origin, sequence) in snapshot.frontier.entries {
            held[origin] = held[origin]?.filter { $0.key > sequence }
            versionVector.advance(origin: origin, to: sequence)
            advance(origin)
        }
        compactionFrontier = compactionFrontier.merged(with: snapshot.frontier)
    }

    // MARK: - Reading

    var allOps: [Op] { held.values.flatMap(\.values) }

    /// The state: the base with every held op folded on in stamp order.
    var state: Value { ReferenceFold.fold(allOps, base: base, registry: FunctionRegistry()).state }

    func encodedOps(from origin: ReplicaID, after sequence: UInt64, limit: Int, bytesMax: Int) -> EncodedOps? {
        keepsBytes ? EncodedOps(ops(from: origin, after: sequence, limit: limit, bytesMax: bytesMax)) : nil
    }

    func ops(from origin: ReplicaID, after sequence: UInt64, limit: Int, bytesMax: Int) -> [Op] {
        precondition(sequence >= compactionFrontier[origin], "reading below the compaction frontier")
        var result: [Op] = []
        var bytes = 0
        var next = sequence + 1
        while result.count < limit, bytes < bytesMax, next <= versionVector[origin], let op = held[origin]?[next] {
            result.append(op)
            bytes += OpCodec.encode(op).count
            next += 1
        }
        return result
    }

    func snapshot() -> SyncSnapshot { SyncSnapshot(value: base, frontier: compactionFrontier) }

    /// The outcome of a held op, from the fold of every held op.
    func outcome(of stamp: Stamp) -> Outcome? {
        ReferenceFold.fold(allOps, base: base, registry: FunctionRegistry()).outcomes[stamp]
    }
}
