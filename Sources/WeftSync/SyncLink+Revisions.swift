import WeftCore

// MARK: - Revised decisions

// A hub carries to a peer limited to a share its decision on each op the share cannot decide
// (``OpProjection``). An op stamped earlier that reaches the hub later can change that decision, and an
// origin new to the hub changes what a carried decision must say it had seen. The hub keeps, per session,
// the decisions the peer holds, checks them again each time its log grows, and sends those that changed
// as revisions; the peer puts each in place of the op it holds.
extension SyncLink {
    /// Sends, in `revisions` frames, the carried decisions that changed since they were sent. On the first
    /// call of a session it first looks through the ops the peer held when the session began, whose
    /// decisions it sends again whatever they were (the peer passes over those it holds as they are).
    mutating func reviseCarried(source: some OpSource, outbox: inout Outbox) throws(SyncError) {
        guard let share else { return }
        if !outbound.carriedScanned {
            try scanCarried(source: source, share: share)
            outbound.carriedScanned = true
        }
        let local = source.versionVector
        guard !outbound.carried.isEmpty, outbound.carriedCheckedAt != local else { return }
        let previous = outbound.carriedCheckedAt
        outbound.carriedCheckedAt = local
        pruneCompacted(source: source)
        // An op's outcome (and a call's result) hangs only on the ops stamped before it: when every op
        // that arrived since the last check is stamped after every carried decision, and no origin is new
        // (what a decision claims to have seen is the same), none of them changed.
        if let previous, try !mayChangeCarried(since: previous, local: local, source: source) { return }
        let seen = everySeen(local)
        var revisions: [Op] = []
        outbound.carriedWaiting = false
        for stamp in outbound.carried.keys.sorted() {
            guard var decision = outbound.carried[stamp] else { continue }
            guard let outcome = source.outcome(of: stamp) else {
                // Folded into the base: this replica decides it no more.
                outbound.carried[stamp] = nil
                continue
            }
            if outcome == .waiting { outbound.carriedWaiting = true }
            guard
                case .partial(let now) = OpProjection.project(
                    decision.op, into: share, outcome: outcome, seen: seen, result: source.callResult(of: stamp)),
                now != decision.sent
            else { continue }
            revisions.append(now)
            decision.sent = now
            outbound.carried[stamp] = decision
        }
        var start = 0
        while start < revisions.count {
            let end = min(revisions.count, start + settings.batchOpsMax)
            outbox.send(.revisions(EncodedOps(Array(revisions[start..<end]))))
            start = end
        }
    }

    /// False when no carried decision can have changed since the check at `previous`: the same origins,
    /// and the first op of each origin's arrivals (its lowest stamp) stamped after the latest decision.
    private func mayChangeCarried(
        since previous: VersionVector, local: VersionVector, source: some OpSource
    ) throws(SyncError) -> Bool {
        // A call waiting for its function applies when the function comes, whatever the stamps.
        guard let latest = outbound.carriedLatest, !outbound.carriedWaiting,
            Set(previous.entries.keys) == Set(local.entries.keys)
        else { return true }
        let compaction = source.compactionFrontier
        for (origin, sequence) in local.entries where sequence > previous[origin] {
            guard previous[origin] >= compaction[origin] else { return true }
            let first: [Op]
            do {
                first = try source.ops(from: origin, after: previous[origin], limit: 1, bytesMax: 1)
            } catch {
                throw SyncError(.localFailure, "reading ops of \(origin) after \(previous[origin]) failed: \(error)")
            }
            guard let op = first.first, op.stamp > latest else { return true }
        }
        return false
    }

    /// Drops the decisions folded into this replica's base (final) once its compaction moved.
    private mutating func pruneCompacted(source: some OpSource) {
        guard let compaction = source.compactionStamp, compaction != outbound.carriedPrunedAt else { return }
        outbound.carriedPrunedAt = compaction
        outbound.carried = outbound.carried.filter { $0.key > compaction }
    }

    /// Records a decision carried (``reviseCarried(source:outbox:)`` checks it again as ops arrive).
    mutating func recordCarried(_ op: Op, sent: Op?, waiting: Bool = false) {
        outbound.carried[op.stamp] = CarriedDecision(op: op, sent: sent)
        if waiting { outbound.carriedWaiting = true }
        outbound.carriedLatest = max(outbound.carriedLatest ?? op.stamp, op.stamp)
    }

    /// Records, as carried with an unknown decision sent, each op the peer held when the session began
    /// (above this replica's compaction) whose effect on the share hangs on this replica's outcome.
    private mutating func scanCarried(source: some OpSource, share: CredentialShare) throws(SyncError) {
        let compaction = source.compactionFrontier
        let local = source.versionVector
        for (origin, held) in peer.versionVector.entries.sorted(by: { $0.key < $1.key }) {
            let last = min(held, local[origin])
            var after = compaction[origin]
            while after < last {
                let ops: [Op]
                do {
                    ops = try source.ops(
                        from: origin, after: after, limit: min(settings.batchOpsMax, Int(clamping: last - after)),
                        bytesMax: settings.batchBytesMax)
                } catch {
                    throw SyncError(.localFailure, "reading ops of \(origin) after \(after) failed: \(error)")
                }
                guard let final = ops.last, final.sequence > after else { break }
                for op in ops where op.sequence <= last && OpProjection.carriesDecision(op, into: share) {
                    recordCarried(op, sent: nil)
                }
                after = final.sequence
            }
        }
    }

    /// Revised decisions from the hub: each must be partial and name an op this replica holds. A hub
    /// refuses them (it holds every op whole and decides each itself).
    mutating func receiveRevisions(_ ops: EncodedOps, source: some OpSource, outbox: inout Outbox) throws(SyncError) {
        try requireReplication(.revisions)
        guard localRole != .hub else {
            throw SyncError(
                .protocolViolation, "a hub decides every op itself; it takes no revised decision from a peer")
        }
        guard inbound.snapshot == nil else {
            throw SyncError(.protocolViolation, "revisions arrived in the middle of a snapshot")
        }
        let local = source.versionVector
        for op in ops.ops {
            guard op.isPartial else {
                throw SyncError(
                    .protocolViolation,
                    "a revision of op \(op.sequence) of \(op.origin) is whole; only a decision carried to a share "
                        + "is revised")
            }
            // Ops received in this session count, durable or not yet: the owner applied them in order.
            let held = max(local[op.origin], inbound.bound[op.origin])
            guard op.sequence <= held else {
                throw SyncError(
                    .protocolViolation,
                    "a revision of op \(op.sequence) of \(op.origin) came before the op (this replica holds up to "
                        + "\(held))")
            }
            if !writesEverywhere {
                for (access, anchor) in Self.accessNeeded(by: op) {
                    guard let denial = denial(access, at: anchor) else { continue }
                    throw SyncError(
                        .permissionDenied,
                        "the peer may not \(access == .read ? "read" : "write") \(anchor) (revised op \(op.sequence) "
                            + "of \(op.origin)): \(denial.message)")
                }
            }
        }
        outbox.append(.reviseOps(ops, from: peer.replica))
    }
}
