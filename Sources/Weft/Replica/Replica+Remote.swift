import Foundation
import WeftCore
import WeftStore
import WeftSync

// The door of the sync layer: remote ops in, our log out, acknowledgement and stability marks.

extension Replica {
    /// Merges ops received from another replica: their stamps are checked against the clock (a stamp
    /// too far in the future refuses the whole call), the merge engine applies them in any order, the
    /// listeners hear of the changes (`isLocalPending: false`), and group commit makes them durable.
    ///
    /// ```swift
    /// let report = try replica.applyRemote(opsFromPeer)
    /// report.duplicates   // ops already known change nothing
    /// ```
    /// - Returns: what changed, the outcome of each new op and the revised outcomes of earlier ops; the
    ///   receipts of our ops whose outcome became a rejection are rejected.
    /// - Throws: `WeftError` with code `clockRefused` (drift), `sync` (an op claims the place of
    ///   another op of the same origin, or repeats a held op with another body), `shutDown`, or the code
    ///   of a failed commit or load.
    @discardableResult
    @_spi(Engine) public func applyRemote(_ ops: [Op]) throws -> ApplyReport { try applyRemote(ops, encodings: nil) }

    /// Merges ops received with the bytes that encode them (as sync reads them off the wire): the same
    /// as ``applyRemote(_:)-([Op])``, and the store keeps those bytes instead of encoding each op again.
    @discardableResult
    @_spi(Engine) public func applyRemote(_ ops: EncodedOps) throws -> ApplyReport {
        try applyRemote(ops.ops, encodings: ops.encodings)
    }

    private func applyRemote(_ ops: [Op], encodings: [ArraySlice<UInt8>]?) throws -> ApplyReport {
        var total = ApplyReport()
        var start = 0
        while start < ops.count {
            let end = min(ops.count, start + options.groupCommitOpsMax)
            let report = try applyRemoteChunk(
                ops[start..<end], encodings: encodings?[start..<end], checkingAll: start == 0 ? ops : [])
            if start == 0 {
                // Most calls are one chunk: its report is the answer, without copying its outcomes.
                total = report
            } else {
                total.changes += report.changes
                total.outcomes.merge(report.outcomes) { $1 }
                total.duplicates += report.duplicates
                total.refused += report.refused
                total.admitted += report.admitted.map { $0 + start }
            }
            start = end
        }
        return total
    }

    /// Applies one chunk of at most one group commit of ops. The first chunk checks every op of the
    /// call first, so that a refused call changes nothing.
    private func applyRemoteChunk(
        _ chunk: ArraySlice<Op>, encodings: ArraySlice<ArraySlice<UInt8>>?, checkingAll all: [Op]
    ) throws -> ApplyReport {
        committer.reserve(ops: chunk.count)
        defer { committer.release(ops: chunk.count) }
        condition.lock()
        defer { condition.unlock() }
        let engine = try writableEngine()
        try check(all, engine: engine)
        let wall = options.wallClockMillis()
        for op in chunk {
            do {
                try instance.receive(op, wallMillis: wall)
            } catch {
                throw WeftError.wrapping(error)
            }
        }
        let ops = Array(chunk)
        let report = engine.apply(ops)
        var records: [OpRecord] = []
        records.reserveCapacity(report.admitted.count)
        for position in report.admitted {
            let op = ops[position]
            var status: OpStatus?
            if op.origin == replicaID {
                if case .rejected = report.outcomes[op.stamp] { status = .rejected } else { status = .durable }
            }
            if let encodings {
                records.append(OpRecord(op, encoded: encodings[encodings.startIndex + position], status: status))
            } else {
                records.append(OpRecord(op, status: status))
            }
        }
        record(report, records: records, isLocalPending: false, engine: engine)
        return report
    }

    /// Refuses ops stamped too far in the future, ops that claim the place of another op of their
    /// origin or repeat a held op with another body (two replicas sharing an id), and ops of this
    /// replica's own that would leave a gap in its sequence, before anything is applied. Call with
    /// `condition` held.
    private func check(_ ops: [Op], engine: MergeEngine) throws {
        guard !ops.isEmpty else { return }
        try checkOwnSequence(ops, engine: engine)
        let wall = options.wallClockMillis()
        for op in ops {
            do {
                try instance.check(op.stamp, wallMillis: wall)
            } catch {
                throw WeftError.wrapping(error)
            }
            guard let placed = engine.stamp(of: op.origin, sequence: op.sequence) else { continue }
            if placed != op.stamp {
                throw WeftError(
                    .sync,
                    "op \(op.sequence) of replica \(op.origin) arrived with stamp \(op.stamp.text), but this replica "
                        + "holds it with stamp \(placed.text); two replicas share the id \(op.origin)")
            }
            if let held = engine.op(for: placed), held != op {
                // Not a duplicate: replicas that met this body first would keep it, and this one the other.
                throw WeftError(
                    .sync,
                    "op \(op.sequence) of replica \(op.origin) (stamp \(op.stamp.text)) arrived with another body "
                        + "than the one this replica holds; two replicas share the id \(op.origin), or a log is forged")
            }
        }
    }

    /// Our own ops come back from peers only after a crash lost them here, and a peer sends an origin's
    /// ops in sequence from what we hold. One above a gap would stay there: the durable frontier could
    /// not pass the gap, so every later write of ours would wait for ever to become durable and never
    /// leave this replica. Call with `condition` held.
    private func checkOwnSequence(_ ops: [Op], engine: MergeEngine) throws {
        let own = ops.filter { $0.origin == replicaID }.map(\.sequence)
        guard !own.isEmpty else { return }
        var through = engine.versionVector[replicaID]
        for sequence in own.sorted() {
            guard sequence <= through + 1 else {
                let missing = sequence == through + 2 ? "op \(through + 1)" : "ops \(through + 1)–\(sequence - 1)"
                throw WeftError(
                    .sync,
                    "a peer sent op \(sequence) of this replica (\(replicaID)), but its own ops end at \(through): "
                        + "\(missing) would be missing for ever; the peer's log is broken or forged")
            }
            through = max(through, sequence)
        }
    }

    /// The outcome of the op stamped `stamp` as the engine folds it now; nil when the log does not hold it
    /// (unknown, or folded by compaction).
    func outcome(of stamp: Stamp) -> Outcome? {
        condition.lock()
        defer { condition.unlock() }
        waitForLoad()
        return engine?.outcome(of: stamp)
    }

    /// True when the log holds partial ops: this replica holds a hub's share of the tree (see
    /// `Docs/SECURITY.md`, "Peers limited to a share").
    var holdsShare: Bool {
        condition.lock()
        defer { condition.unlock() }
        waitForLoad()
        return engine?.holdsPartialOps ?? false
    }

    /// The value the applied call stamped `stamp` wrote at its node, as the engine folds it now; nil when
    /// the log holds no such applied call.
    func callResult(of stamp: Stamp) -> Value? {
        condition.lock()
        defer { condition.unlock() }
        waitForLoad()
        return engine?.result(ofCall: stamp)
    }

    /// The ops of `origin` after `sequence`, in sequence order, at most `limit`, stopping at the first
    /// gap. Our own ops are given only once durable, so that an op that leaves the machine survives a
    /// crash. Compacted ops are gone: a peer that needs them gets a snapshot.
    ///
    /// ```swift
    /// let tail = replica.ops(from: peer, after: peerVector[peer], limit: 512)
    /// ```
    public func ops(from origin: ReplicaID, after sequence: UInt64, limit: Int) -> [Op] {
        guard limit > 0 else { return [] }
        condition.lock()
        defer { condition.unlock() }
        waitForLoad()
        guard let engine else { return [] }
        var ops = engine.ops(from: origin, after: sequence, limit: limit)
        if origin == replicaID {
            let durable = committer.durableVector[origin]
            ops = ops.filter { $0.sequence <= durable }
        }
        return ops
    }

    /// Marks our ops covered by `vector` as acknowledged (by the hub, or by enough peers): the
    /// instance decides (see ``ReplicaInstance/acknowledge(through:)``), the shell stores the mark and
    /// moves the receipts.
    ///
    /// ```swift
    /// replica.markAcknowledged(through: ackFromHub)
    /// ```
    func markAcknowledged(through vector: VersionVector) {
        condition.lock()
        defer { condition.unlock() }
        guard !isShuttingDown, engine != nil, committer.failed == nil else { return }
        carryOut(instance.acknowledge(through: vector))
    }

    /// Marks every op stamped at or below `frontier` as stable: every member of the group has it. Our
    /// ops up to it become stable, and ``compact(vacuum:)`` may fold them into the base. A frontier
    /// past every stamp this replica's clock has made or received counts only up to them (see
    /// ``ReplicaInstance/markStable(through:log:)``).
    ///
    /// ```swift
    /// replica.markStable(through: membershipFrontier)
    /// ```
    @_spi(Engine) public func markStable(through frontier: Stamp) {
        condition.lock()
        defer { condition.unlock() }
        waitForLoad()
        guard let engine, !isShuttingDown, committer.failed == nil else { return }
        carryOut(instance.markStable(through: frontier, log: engine))
    }

    /// Marks stable the ops every member holds, given as version vectors (see
    /// ``ReplicaInstance/stampFrontier(covering:known:log:)``).
    ///
    /// ```swift
    /// replica.markStable(covering: book.stableFrontier(local: replica.durableVersionVector), known: known)
    /// ```
    func markStable(covering vector: VersionVector, known: VersionVector) {
        condition.lock()
        defer { condition.unlock() }
        waitForLoad()
        guard let engine, !isShuttingDown, committer.failed == nil else { return }
        carryOut(instance.markStable(covering: vector, known: known, log: engine))
    }

    /// The stamp frontier of ``markStable(covering:known:)``, nil when none is safe or none is new.
    func stampFrontier(covering vector: VersionVector, known: VersionVector) -> Stamp? {
        condition.lock()
        defer { condition.unlock() }
        waitForLoad()
        guard let engine, !isShuttingDown else { return nil }
        return instance.stampFrontier(covering: vector, known: known, log: engine)
    }

    /// Sync's acknowledgements changed, or the durable log grew: the instance decides the marks and the
    /// stable frontiers (see ``ReplicaInstance/onAcknowledgements(_:log:)``), the shell stores them.
    /// - Returns: the stable vector and the part of it the replica's acks announce.
    func acknowledgementsChanged(_ book: AcknowledgementBook, durable: VersionVector) -> StableFrontiers {
        condition.lock()
        defer { condition.unlock() }
        waitForLoad()
        guard let engine, !isShuttingDown, committer.failed == nil else {
            return StableFrontiers(stable: instance.stableVector, announced: instance.announcedStable)
        }
        carryOut(instance.onAcknowledgements(AcknowledgementInputs(book: book, durable: durable), log: engine))
        return StableFrontiers(stable: instance.stableVector, announced: instance.announcedStable)
    }

    /// Carries out what the instance decided: marks go to the store with the clock, and to the receipts.
    /// Call with `condition` held.
    func carryOut(_ directives: [ReplicaDirective]) {
        for directive in directives {
            switch directive {
            case .markAcknowledged(let sequence):
                var entry = CommitEntry(clockTime: clock.lastTime)
                entry.statusChanges = [.acknowledgedThrough(sequence: sequence)]
                committer.enqueue(entry)
                receipts.advance(through: sequence, to: .acknowledged)
            case .markStable(let sequence):
                var entry = CommitEntry(clockTime: clock.lastTime)
                entry.statusChanges = [.stableThrough(sequence: sequence)]
                committer.enqueue(entry)
                receipts.advance(through: sequence, to: .stable)
            case .announceStable:
                // Read back by the caller (sync announces it in its acks).
                break
            }
        }
    }
}
