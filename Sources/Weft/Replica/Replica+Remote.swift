import Foundation
import WeftCore
import WeftStore

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
    public func applyRemote(_ ops: [Op]) throws -> ApplyReport { try applyRemote(ops, encodings: nil) }

    /// Merges ops received with the bytes that encode them (as sync reads them off the wire): the same
    /// as ``applyRemote(_:)-([Op])``, and the store keeps those bytes instead of encoding each op again.
    @discardableResult
    public func applyRemote(_ ops: EncodedOps) throws -> ApplyReport {
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
                try clock.receive(op.stamp, wallMillis: wall)
            } catch {
                throw WeftError.wrapping(error)
            }
            if op.origin == replicaID { nextSequence = max(nextSequence, op.sequence + 1) }
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
                try clock.check(op.stamp, wallMillis: wall)
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

    /// Marks our ops covered by `vector` as acknowledged (by the hub, or by enough peers).
    ///
    /// ```swift
    /// replica.markAcknowledged(through: ackFromHub)
    /// ```
    public func markAcknowledged(through vector: VersionVector) {
        condition.lock()
        defer { condition.unlock() }
        // No more than this replica wrote: a stored frontier past it would also push the sequence of the
        // next write past a gap after a restart (the load starts above every stored frontier).
        let sequence = min(vector[replicaID], nextSequence - 1)
        guard sequence > acknowledgedThrough, !isShuttingDown, engine != nil, committer.failed == nil else { return }
        acknowledgedThrough = sequence
        var entry = CommitEntry(clockTime: clock.lastTime)
        entry.statusChanges = [.acknowledgedThrough(sequence: sequence)]
        committer.enqueue(entry)
        receipts.advance(through: sequence, to: .acknowledged)
    }

    /// Marks every op stamped at or below `frontier` as stable: every member of the group has it. Our
    /// ops up to it become stable, and ``compact(vacuum:)`` may fold them into the base. A frontier
    /// past every stamp this replica's clock has made or received counts only up to them: its later
    /// writes are stamped above those, and one below a compacted frontier could not be stored.
    ///
    /// ```swift
    /// replica.markStable(through: membershipFrontier)
    /// ```
    public func markStable(through frontier: Stamp) {
        condition.lock()
        defer { condition.unlock() }
        waitForLoad()
        guard let engine, !isShuttingDown, committer.failed == nil else { return }
        let frontier = min(frontier, clock.lastSeen)
        if let stableFrontier, frontier <= stableFrontier { return }
        stableFrontier = frontier
        var sequence = stableThrough
        while true {
            let page = engine.ops(from: replicaID, after: sequence, limit: StoreLimits.opsPerQueryMax)
            let below = page.prefix { $0.stamp <= frontier }
            sequence = below.last?.sequence ?? sequence
            if below.count < page.count || page.count < StoreLimits.opsPerQueryMax { break }
        }
        guard sequence > stableThrough else { return }
        stableThrough = sequence
        acknowledgedThrough = max(acknowledgedThrough, sequence)
        var entry = CommitEntry(clockTime: clock.lastTime)
        entry.statusChanges = [.stableThrough(sequence: sequence)]
        committer.enqueue(entry)
        receipts.advance(through: sequence, to: .stable)
    }

    /// Marks stable the ops every member holds, given as version vectors: derives the greatest stamp
    /// frontier that no op outside `vector` can fall under, now or later, and calls
    /// ``markStable(through:)`` with it.
    ///
    /// For each origin, the first op after `vector` bounds the frontier (it must stay below that op's
    /// stamp); when this replica does not hold that op but `known` says it exists, the last stable op of
    /// the origin bounds it instead (the origin's later ops are stamped above it), and nothing moves when
    /// that one is compacted already. Ops a member makes later are stamped above every op it received
    /// (the hybrid clock's receive rule), so above every stable op. The frontier never passes the
    /// greatest stable stamp.
    ///
    /// ```swift
    /// replica.markStable(covering: book.stableFrontier(local: replica.durableVersionVector), known: known)
    /// ```
    public func markStable(covering vector: VersionVector, known: VersionVector) {
        guard let frontier = stampFrontier(covering: vector, known: known) else { return }
        markStable(through: frontier)
    }

    /// The stamp frontier of ``markStable(covering:known:)``, nil when none is safe or none is new.
    func stampFrontier(covering vector: VersionVector, known: VersionVector) -> Stamp? {
        condition.lock()
        defer { condition.unlock() }
        waitForLoad()
        guard let engine, !isShuttingDown else { return nil }
        let local = engine.versionVector
        var greatestStable: Stamp? = stableFrontier
        var bound: Stamp?
        func lower(_ stamp: Stamp) { bound = bound.map { min($0, stamp) } ?? stamp }
        let origins = Set(local.entries.keys).union(vector.entries.keys).union(known.entries.keys)
        for origin in origins {
            let stable = min(vector[origin], local[origin])
            let last = stable > 0 ? engine.ops(from: origin, after: stable - 1, limit: 1).first : nil
            if let last {
                precondition(last.sequence == stable, "the log returns the op asked for")
                greatestStable = greatestStable.map { max($0, last.stamp) } ?? last.stamp
            }
            if let next = engine.ops(from: origin, after: stable, limit: 1).first {
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
}

extension Replica {
    /// The part of `vector` whose every op is stamped at or below the stable stamp frontier (see
    /// ``markStable(covering:known:)``): what this replica announces as stable to its peers. The stamp
    /// frontier accounts for ops that exist elsewhere but not here (an origin's later op that a member
    /// acked): a leaf that took the whole vector from its hub could call an op stable, and a
    /// transaction's outcome final, while an earlier-stamped op of another leaf was still on its way.
    func announceableStable(_ vector: VersionVector) -> VersionVector {
        condition.lock()
        defer { condition.unlock() }
        guard let engine, let frontier = stableFrontier else { return VersionVector() }
        var result = VersionVector()
        for (origin, sequence) in vector.entries {
            // An origin's stamps grow with its sequence: the last op under the frontier by bisection.
            // A compacted op (no stamp kept) lies under the frontier.
            func isUnder(_ sequence: UInt64) -> Bool {
                engine.stamp(of: origin, sequence: sequence).map { $0 <= frontier } ?? true
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
