import WeftCore

// MARK: - Outbound

// What this side sends: ops the peer lacks, per origin in sequence order, in batches bounded by
// count and bytes, while fewer than the window's bytes and frames are unacknowledged. A peer whose
// cursor is below the compaction frontier first gets a snapshot, in chunks under the same window.
extension SyncLink {
    var hasRoom: Bool {
        outbound.ledger.bytes < settings.sendWindowBytes && outbound.ledger.frameCount < settings.windowFramesMax
    }

    /// Sends snapshot chunks and op batches until the window is full or the peer has everything.
    mutating func fill(source: some OpSource, outbox: inout Outbox) throws(SyncError) {
        while true {
            if outbound.snapshot != nil {
                sendSnapshotChunks(outbox: &outbox)
                if outbound.snapshot != nil { return }
            }
            let compaction = source.compactionFrontier
            if !outbound.cursor.covers(compaction) || rebasesShare(source: source) {
                outbound.snapshotSentAt = source.compactionStamp
                try startSnapshot(source: source, compaction: compaction, outbox: &outbox)
                continue
            }
            // Decisions changed go before new ops: an op of an origin new to the peer never reaches it
            // before the decisions that name that origin as seen.
            try reviseCarried(source: source, outbox: &outbox)
            try sendBatches(source: source, outbox: &outbox)
            return
        }
    }

    /// True when a peer limited to a share holds this replica's ops up to a compaction it has not taken:
    /// it is sent the share of the base, once per compaction and session. Its log may hold decisions this
    /// replica carried and changed since (``reviseCarried(source:outbox:)`` revises only those above the
    /// compaction), and it folds them only by installing this base, which nothing changes any more.
    private func rebasesShare(source: some OpSource) -> Bool {
        guard share != nil, let stamp = source.compactionStamp, outbound.snapshotSentAt != stamp else {
            return false
        }
        return outbound.peerCompaction.map { $0 < stamp } ?? true
    }

    mutating func sendBatches(source: some OpSource, outbox: inout Outbox) throws(SyncError) {
        let local = source.versionVector
        var origins = local.entries.compactMap { $0.value > outbound.cursor[$0.key] ? $0.key : nil }.sorted()
        while hasRoom, let first = origins.first {
            let budget = min(settings.batchBytesMax, settings.sendWindowBytes - outbound.ledger.bytes)
            precondition(budget > 0, "a batch starts only while the window has room")
            // Room for the ops waiting, at a typical size, within the budget: a frame of a few ops does
            // not take (and give back) a large buffer.
            let waiting = origins.reduce(0) { $0 + Int(clamping: local[$1] - outbound.cursor[$1]) }
            let expected = SyncLimits.typicalOpBytes * min(waiting, settings.batchOpsMax)
            var builder = FrameBuilder(.ops, capacity: min(budget, 64 * 1024, max(256, expected)))
            var marks: [WindowLedger.Mark] = []
            var count = 0
            var origin = first
            while count < settings.batchOpsMax, builder.payloadCount < budget {
                let last = try appendOps(
                    of: origin, through: local[origin], source: source, builder: &builder, count: &count, budget: budget
                )
                marks.append(WindowLedger.Mark(origin: origin, sequence: last))
                guard outbound.cursor[origin] >= local[origin] else { break }
                origins.removeFirst()
                guard let next = origins.first else { break }
                origin = next
            }
            precondition(count > 0, "a batch carries at least one op")
            let frame = builder.finish()
            outbox.send(frame)
            outbound.ledger.add(.ops(marks), bytes: frame.count)
        }
    }

    /// Appends ops of `origin` after the cursor, up to `last`, until the batch is full; returns the
    /// last sequence appended.
    mutating func appendOps(
        of origin: ReplicaID, through last: UInt64, source: some OpSource, builder: inout FrameBuilder,
        count: inout Int, budget: Int
    ) throws(SyncError) -> UInt64 {
        let after = outbound.cursor[origin]
        precondition(after < last, "no op of \(origin) to send")
        let limit = min(settings.batchOpsMax - count, Int(clamping: last - after))
        let ops: [Op]
        let encodings: [ArraySlice<UInt8>]?
        do {
            let bytesMax = budget - builder.payloadCount
            if share != nil {
                // Each op is projected into the share: kept bytes are of the whole op.
                (ops, encodings) = (try source.ops(from: origin, after: after, limit: limit, bytesMax: bytesMax), nil)
            } else if let kept = try source.encodedOps(from: origin, after: after, limit: limit, bytesMax: bytesMax) {
                (ops, encodings) = (kept.ops, kept.encodings)
            } else {
                (ops, encodings) = (try source.ops(from: origin, after: after, limit: limit, bytesMax: bytesMax), nil)
            }
        } catch {
            throw SyncError(.localFailure, "reading ops of \(origin) after \(after) failed: \(error)")
        }
        guard !ops.isEmpty else {
            throw SyncError(
                .localFailure, "the log covers ops of \(origin) up to \(last) but returned none after \(after)")
        }
        var expected = after + 1
        let seen = share == nil ? VersionVector() : everySeen(source.versionVector)
        for (position, op) in ops.enumerated() {
            guard count < settings.batchOpsMax, builder.payloadCount < budget, expected <= last else { break }
            guard op.origin == origin, op.sequence == expected else {
                throw SyncError(
                    .localFailure, "the log returned op \(op.origin):\(op.sequence) where \(origin):\(expected) was due"
                )
            }
            guard !op.isPartial else {
                // A replica limited to a share holds placeholders and projections: passing them on as ops
                // would hand a replica of the whole tree ops their origin never made.
                throw SyncError(
                    .roleMismatch,
                    "this replica holds only its share of the tree (op \(op.sequence) of \(origin) is partial): "
                        + "it syncs with its hub only, and cannot send that op to \(peer.name.isEmpty ? "\(peer.replica)" : peer.name)")
            }
            if let share {
                var carries = false
                var waiting = false
                let outcome: () -> Outcome? = {
                    carries = true
                    let outcome = source.outcome(of: op.stamp)
                    waiting = outcome == .waiting
                    return outcome
                }
                switch OpProjection.project(
                    op, into: share, outcome: outcome(), seen: seen, result: source.callResult(of: op.stamp))
                {
                case .whole: OpCodec.write(op, to: &builder.writer)
                case .partial(let cut):
                    OpCodec.write(cut, to: &builder.writer)
                    // The share could not decide it: the decision sent is this replica's, checked again as
                    // ops arrive (``reviseCarried(source:outbox:)``).
                    if carries { recordCarried(op, sent: cut, waiting: waiting) }
                case .undecided:
                    throw SyncError(
                        .localFailure,
                        "op \(op.sequence) of \(origin) changes the share of \(peer.name) as this replica decides it, "
                            + "and this replica does not know its outcome")
                }
            } else if let encodings {
                builder.writer.write(raw: encodings[position])
            } else {
                OpCodec.write(op, to: &builder.writer)
            }
            count += 1
            expected += 1
        }
        outbound.cursor.advance(origin: origin, to: expected - 1)
        // The peer's cursor follows what it receives: it may next send ops of this origin after these.
        inbound.bound.advance(origin: origin, to: expected - 1)
        precondition(expected - 1 > after, "at least one op was appended")
        return expected - 1
    }

    /// The read vector of a decision carried to a peer limited to a share: every origin this replica
    /// holds ops of, and the peer, seen to the end. The peer then never re-decides the op: an op stamped
    /// before it that the peer made, or receives later, would otherwise make it stale there alone (the
    /// rule there reads the op's anchors in the share, not the paths the hub's rule read).
    func everySeen(_ holding: VersionVector) -> VersionVector {
        var seen = VersionVector()
        for origin in holding.entries.keys { seen.advance(origin: origin, to: OpProjection.everySequence) }
        seen.advance(origin: peer.replica, to: OpProjection.everySequence)
        return seen
    }

    // MARK: - Snapshots

    mutating func startSnapshot(
        source: some OpSource, compaction: VersionVector, outbox: inout Outbox
    ) throws(SyncError) {
        var snapshot: SyncSnapshot
        do {
            snapshot = try source.snapshot()
        } catch {
            throw SyncError(.localFailure, "reading the snapshot failed: \(error)")
        }
        guard snapshot.frontier.covers(compaction) else {
            throw SyncError(.localFailure, "the snapshot's frontier is below the compaction frontier")
        }
        if let share {
            // A peer limited to a share gets the share of the base, and the touches in or above it (the
            // transaction rule needs those; the others would name paths it may not read). The digest
            // below is taken over what is sent.
            snapshot.value = share.restrict(snapshot.value, at: .root)
            snapshot.touches = snapshot.touches.filter { share.relation(to: $0.path) != .outside }
        }
        let entries = SnapshotChunker.entries(of: snapshot.value, entryBytesMax: settings.snapshotChunkBytes)
        let entryBytes = entries.map(SnapshotChunker.byteCount(of:))
        let byteCount = entryBytes.reduce(UInt64(0)) { $0 + UInt64($1) }
        outbox.send(
            .snapshotBegin(
                SnapshotBegin(
                    frontier: snapshot.frontier, stampFrontier: snapshot.stampFrontier,
                    entryCount: UInt64(entries.count), byteCount: byteCount,
                    touchCount: UInt64(snapshot.touches.count))))
        outbound.snapshot = SnapshotSending(
            frontier: snapshot.frontier, digest: StateDigest(of: snapshot.value), entries: entries,
            entryBytes: entryBytes, touches: snapshot.touches)
    }

    /// Sends chunks while the window has room, then the compacted touches, then the end once
    /// everything went out.
    mutating func sendSnapshotChunks(outbox: inout Outbox) {
        guard var sending = outbound.snapshot else { preconditionFailure("no snapshot to send") }
        outbound.snapshot = nil
        while hasRoom, sending.nextEntry < sending.entries.count {
            let budget = settings.snapshotChunkBytes
            let end = Self.runEnd(from: sending.nextEntry, count: sending.entries.count, budget: budget) {
                sending.entryBytes[$0]
            }
            sendSnapshotFrame(.snapshotChunk(Array(sending.entries[sending.nextEntry..<end])), outbox: &outbox)
            sending.nextEntry = end
        }
        while hasRoom, sending.nextEntry == sending.entries.count, sending.nextTouch < sending.touches.count {
            let budget = settings.snapshotChunkBytes
            let end = Self.runEnd(from: sending.nextTouch, count: sending.touches.count, budget: budget) {
                SnapshotChunker.byteCount(of: sending.touches[$0])
            }
            sendSnapshotFrame(.snapshotTouches(Array(sending.touches[sending.nextTouch..<end])), outbox: &outbox)
            sending.nextTouch = end
        }
        if sending.nextEntry == sending.entries.count, sending.nextTouch == sending.touches.count {
            outbox.send(.snapshotEnd(sending.digest))
            outbound.cursor = outbound.cursor.merged(with: sending.frontier)
        } else {
            outbound.snapshot = sending
        }
    }

    /// The end of the run of items from `start` whose sizes reach `budget` (at least one item).
    static func runEnd(from start: Int, count: Int, budget: Int, size: (Int) -> Int) -> Int {
        var end = start
        var total = 0
        while end < count, total < budget {
            total += size(end)
            end += 1
        }
        return end
    }

    /// Sends one snapshot frame (entries or touches), counted in the window until acknowledged.
    mutating func sendSnapshotFrame(_ message: Message, outbox: inout Outbox) {
        let frame = MessageCodec.encode(message)
        outbox.send(frame)
        outbound.ledger.add(.snapshotChunk(outbound.snapshotChunksSent), bytes: frame.count)
        outbound.snapshotChunksSent += 1
    }

    // MARK: - Acknowledgements received

    /// An ack: what the peer holds, with this replica's own ops counted no further than it holds them
    /// (`held`): no peer can hold an own op this replica has not written (ops of other origins it may
    /// hold beyond this replica, and that knowledge bounds compaction). A peer that claimed a million of
    /// this replica's own ops made every write to come acknowledged, and stable, before anyone held it.
    mutating func receiveAcknowledgement(
        _ acknowledgement: Acknowledgement, holding held: VersionVector, outbox: inout Outbox
    ) throws(SyncError) {
        try requireReplication(.ack)
        var counted = acknowledgement
        counted.versionVector = counting(acknowledgement.versionVector, holding: held)
        outbound.acknowledged = outbound.acknowledged.merged(with: counted.versionVector)
        outbound.cursor = outbound.cursor.merged(with: counted.versionVector)
        outbound.ledger.release(coveredBy: counted.versionVector)
        if let stamp = acknowledgement.compactionStamp {
            outbound.peerCompaction = max(outbound.peerCompaction ?? stamp, stamp)
        }
        if countsForStability {
            outbox.append(.recordAcknowledgement(counted, from: peer.replica))
        } else if share != nil {
            outbox.append(.recordShareAcknowledgement(counted, from: peer.replica))
        }
    }

    /// What a peer says it holds, as this replica counts it: its own ops no further than it holds them.
    func counting(_ claimed: VersionVector, holding held: VersionVector) -> VersionVector {
        claimed.capped(origin: local, at: held[local])
    }

    mutating func receiveSnapshotAcknowledgement(_ chunkCount: UInt64) throws(SyncError) {
        try requireReplication(.snapshotAck)
        guard chunkCount <= outbound.snapshotChunksSent else {
            throw SyncError(
                .protocolViolation,
                "the peer acknowledged \(chunkCount) snapshot chunks but \(outbound.snapshotChunksSent) were sent")
        }
        outbound.ledger.release(snapshotChunksBelow: chunkCount)
    }
}
