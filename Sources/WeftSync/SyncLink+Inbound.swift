import WeftCore

// MARK: - Inbound

// What this side receives: op batches (checked for gaps and against the advertised window, then
// handed to the owner), and snapshots (assembled, checked against their digest, then handed over).
extension SyncLink {
    mutating func receiveOps(
        _ ops: EncodedOps, frameBytes: Int, source: some OpSource, outbox: inout Outbox
    ) throws(SyncError) {
        try requireReplication(.ops)
        guard inbound.snapshot == nil else {
            throw SyncError(.protocolViolation, "ops arrived in the middle of a snapshot")
        }
        guard inbound.ledger.bytes < settings.receiveWindowBytes, inbound.ledger.frameCount < settings.windowFramesMax
        else {
            throw SyncError(
                .limitExceeded,
                "the peer sent beyond the window of \(settings.receiveWindowBytes) bytes and \(settings.windowFramesMax) frames"
            )
        }
        try checkPartial(ops)
        let local = source.versionVector
        var highest: [ReplicaID: UInt64] = [:]
        var fresh: [Int] = []
        fresh.reserveCapacity(ops.count)
        if !writesEverywhere {
            for op in ops {
                for (access, anchor) in Self.accessNeeded(by: op) {
                    guard let denial = denial(access, at: anchor) else { continue }
                    let verb = access == .read ? "read" : "write"
                    throw SyncError(
                        .permissionDenied,
                        "the peer may not \(verb) \(anchor) (op \(op.sequence) of \(op.origin)): \(denial.message)")
                }
            }
        }
        // A frame holds runs of one origin's ops (the sender appends origin by origin): each run reads
        // and raises the vectors once. An origin's ops come in increasing order across the frame: one op
        // named twice could carry two bodies, and receivers would keep whichever they met first.
        var position = 0
        while position < ops.count {
            let origin = ops[position].origin
            var bound = inbound.bound[origin]
            let held = local[origin]
            var runHighest = highest[origin] ?? 0
            while position < ops.count, ops[position].origin == origin {
                let sequence = ops[position].sequence
                guard sequence > runHighest else {
                    throw SyncError(
                        .protocolViolation,
                        "op \(sequence) of \(origin) came after op \(runHighest) in one frame; "
                            + "an origin's ops must come in increasing order")
                }
                guard sequence <= bound + 1 else {
                    throw SyncError(
                        .protocolViolation, "op \(sequence) of \(origin) arrived after a gap: the last one was \(bound)"
                    )
                }
                bound = max(bound, sequence)
                runHighest = sequence
                if sequence > held { fresh.append(position) }
                position += 1
            }
            inbound.bound.advance(origin: origin, to: bound)
            // The peer sends only ops of its gap-free log: it holds every op of the origin up to these.
            outbound.cursor.advance(origin: origin, to: runHighest)
            highest[origin] = runHighest
        }
        let marks = highest.map { WindowLedger.Mark(origin: $0.key, sequence: $0.value) }
        inbound.ledger.add(.ops(marks), bytes: frameBytes)
        if fresh.count == ops.count {
            outbox.append(.applyOps(ops, from: peer.replica))
        } else if !fresh.isEmpty {
            outbox.append(.applyOps(ops.subset(fresh), from: peer.replica))
        }
    }

    mutating func receiveSnapshotBegin(_ begin: SnapshotBegin) throws(SyncError) {
        try requireReplication(.snapshotBegin)
        // A snapshot replaces the whole base state: only a peer that may write everywhere sends one.
        guard writesEverywhere else {
            throw SyncError(.permissionDenied, "the peer may not write the whole tree, which a snapshot replaces")
        }
        guard inbound.snapshot == nil else {
            throw SyncError(.protocolViolation, "a snapshot began inside another snapshot")
        }
        inbound.snapshot = try SnapshotAssembler(begin)
    }

    /// Adds a chunk of entries.
    mutating func receiveSnapshotChunk(_ entries: [SnapshotEntry], outbox: inout Outbox) throws(SyncError) {
        try receiveSnapshotFrame(.snapshotChunk, "a snapshot chunk", outbox: &outbox) {
            (assembler: inout SnapshotAssembler) throws(SyncError) in try assembler.add(entries)
        }
    }

    /// Adds the compacted touches of a snapshot.
    mutating func receiveSnapshotTouches(_ touches: [CompactedTouch], outbox: inout Outbox) throws(SyncError) {
        try receiveSnapshotFrame(.snapshotTouches, "compacted touches", outbox: &outbox) {
            (assembler: inout SnapshotAssembler) throws(SyncError) in try assembler.add(touches)
        }
    }

    /// Adds one frame of the snapshot being received and acknowledges it at once: frames only wait in
    /// memory, bounded by the snapshot limits.
    private mutating func receiveSnapshotFrame(
        _ type: MessageType, _ what: String, outbox: inout Outbox,
        add: (inout SnapshotAssembler) throws(SyncError) -> Void
    ) throws(SyncError) {
        try requireReplication(type)
        guard var assembler = inbound.snapshot else {
            throw SyncError(.protocolViolation, "\(what) arrived outside a snapshot")
        }
        inbound.snapshot = nil
        try add(&assembler)
        inbound.snapshot = assembler
        inbound.snapshotChunksReceived += 1
        outbox.send(.snapshotAck(chunkCount: inbound.snapshotChunksReceived))
    }

    mutating func receiveSnapshotEnd(_ digest: StateDigest, outbox: inout Outbox) throws(SyncError) {
        try requireReplication(.snapshotEnd)
        guard let assembler = inbound.snapshot else {
            throw SyncError(.protocolViolation, "a snapshot end arrived outside a snapshot")
        }
        inbound.snapshot = nil
        let snapshot = try assembler.finish(digest: digest)
        inbound.bound = inbound.bound.merged(with: snapshot.frontier)
        outbox.append(.installSnapshot(snapshot, from: peer.replica))
    }
}

extension SyncLink {
    /// Refuses partial ops (placeholders and projections) at a hub: a hub holds every op whole, and sends
    /// partial ops to the replicas limited to a share, never the other way. (A replica holding partial
    /// ops never sends them: see ``appendOps(of:through:source:builder:count:budget:)``.)
    func checkPartial(_ ops: EncodedOps) throws(SyncError) {
        guard let op = ops.ops.first(where: \.isPartial) else { return }
        guard localRole != .hub else {
            throw SyncError(
                .protocolViolation,
                "op \(op.sequence) of \(op.origin) is partial (cut down to a share of the tree); a hub holds "
                    + "every op whole and accepts none cut down")
        }
    }

    /// What a peer needs to be allowed for `op`: write access to every node it writes, and, for a
    /// guarded batch, read access to the paths it only read (it writes nothing there).
    static func accessNeeded(by op: Op) -> [(Grant, Path)] {
        guard case .guardedBatch(_, let reads, let writes) = op.kind else { return op.anchors.map { (.write, $0) } }
        let written = Op(stamp: op.stamp, sequence: op.sequence, path: op.path, kind: .batch(writes)).anchors
        return written.map { (.write, $0) } + reads.filter { !written.contains($0) }.map { (.read, $0) }
    }
}
