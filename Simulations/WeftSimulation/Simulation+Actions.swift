import WeftCore
import WeftSync

// MARK: - Session actions

// The simulator acts on what a session returns exactly as the daemon's shell does: bytes go to the
// (simulated) transport, received ops are checked against the clock, merged and committed, timers
// go to the timer wheel, acknowledgements to the replica's book, and a close closes the transport.
extension Simulation {
    func perform(_ actions: [SyncAction], at address: EndpointAddress) {
        for action in actions {
            // An action may close the session (a refused stamp ends it): the rest of the list belongs to
            // a session that is gone, and the daemon's shell drops it too.
            guard failure == nil, isOpen(address) else { return }
            switch action {
            case .send(let bytes): transmit(bytes, from: address)
            case .applyOps(let ops, let peer): applyRemote(ops, from: peer, at: address)
            case .installSnapshot(let snapshot, let peer): install(snapshot, from: peer, at: address)
            case .recordAcknowledgement(let acknowledgement, let peer):
                recordAcknowledgement(acknowledgement, from: peer, at: address)
            case .recordShareAcknowledgement(let acknowledgement, let peer):
                guard let index = replica(at: address) else { return }
                coverage.bump(.acknowledgements)
                replicas[index].recordShare(acknowledgement, from: peer)
            case .scheduleTimer(let timer, let delay): scheduleTimer(timer, after: delay, at: address)
            case .cancelTimer(let timer):
                let slot = Connection.timerSlot(side: address.side, timer: timer)
                connections[address.connection]?.timerGenerations[slot] += 1
            case .reportStatus(let status): note(status, at: address)
            case .handleRequest, .deliverReply, .deliverEvent, .deliverQueryEvent:
                fail(.unexpectedAction, replica(at: address), "a client message between two replicas: \(action)")
            case .reviseOps(let ops, let peer): revise(ops, from: peer, at: address)
            case .close(let error): close(address, error: error)
            }
        }
    }

    func replica(at address: EndpointAddress) -> Int? {
        connections[address.connection]?.replicas[address.side]
    }

    private func applyRemote(_ batch: EncodedOps, from peer: ReplicaID, at address: EndpointAddress) {
        guard let index = replica(at: address) else { return }
        let replica = replicas[index]
        let ops = batch.ops
        let outcome: (fresh: [Op], freshEncodings: [ArraySlice<UInt8>]?, report: ApplyReport)?
        do {
            outcome = try replica.receive(ops, encodings: batch.encodings, now: now)
        } catch {
            return fail(.localFailure, index, "committing ops from \(peer) failed: \(error)")
        }
        guard let (fresh, freshEncodings, report) = outcome else {
            coverage.bump(.driftRefusals)
            let error = SyncError(.clockDrift, "a stamp from \(peer) runs too far ahead of this replica's clock")
            withSession(address) { session, _, now in session.onClose(error: error, now: now) }
            return
        }
        if report.duplicates > 0 { coverage.bump(.duplicateOpsDelivered, by: report.duplicates) }
        count(report)
        if !report.refused.isEmpty {
            coverage.bump(.opsRefused, by: report.refused.count)
        }
        if index == leafIndex {
            coverage.bump(.leafPartialOps, by: fresh.filter(\.isPartial).count)
            coverage.bump(
                .leafDecisionsCarried, by: fresh.filter { $0.isPartial && !OpProjection.isWithheld($0) }.count)
        }
        record(
            checker.received(
                ops, fresh: fresh, freshEncodings: freshEncodings, refused: Set(report.refused),
                share: index == leafIndex ? leafShare : nil, at: index))
        if replica.profile.syncsEveryCommit, !fresh.isEmpty { scheduleGrowth(index) }
    }

    /// A peer sent a snapshot. Replicas only compact what every member durably holds, so the
    /// receiver always holds the snapshot's ops (the sender's cursor merely lagged behind what the
    /// receiver learnt elsewhere): the snapshot must be the fold of exactly those ops, and there is
    /// nothing to install. A snapshot of ops the receiver lacks would mean a compaction too far.
    private func install(_ snapshot: SyncSnapshot, from peer: ReplicaID, at address: EndpointAddress) {
        guard let index = replica(at: address) else { return }
        let durable = replicas[index].durable.vector
        coverage.bump(.snapshotsReceived)
        if index == leafIndex { return installShare(snapshot, from: peer, at: address, index: index) }
        record(checker.snapshot(snapshot, at: index))
        guard durable.covers(snapshot.frontier) else {
            guard scenario.lateJoiner?.replica == index else {
                return fail(
                    .unexpectedAction, index,
                    "\(peer) sent a snapshot at \(snapshot.frontier) but this replica holds \(durable): "
                        + "something compacted ops a member lacks (replicas: "
                        + replicas.map { "r\($0.index) \($0.id)" }.joined(separator: ", ") + ")")
            }
            return installLacking(snapshot, from: peer, at: address, index: index)
        }
        withSession(address) { session, view, now in session.onLocalOpsAppended(source: view, now: now) }
    }

    /// The late joiner lacks some of the snapshot's ops: it installs the snapshot as `Replica` does,
    /// and after stamping its own ops again it ends the session (`resync`) and dials anew.
    private func installLacking(_ snapshot: SyncSnapshot, from peer: ReplicaID, at address: EndpointAddress, index: Int)
    {
        guard case .installed(let installed) = installSnapshot(snapshot, from: peer, at: address, index: index),
            let installed
        else { return }
        coverage.bump(.snapshotsInstalled)
        finishInstall(installed, snapshot: snapshot, at: address, index: index)
    }

    /// The share leaf takes its hub's base cut to its share (it holds every op, partial ones among them,
    /// and folds them only by installing it), as `Replica.installSnapshot` does: the snapshot must be the
    /// share of the fold of the ops it covers.
    private func installShare(_ snapshot: SyncSnapshot, from peer: ReplicaID, at address: EndpointAddress, index: Int) {
        record(checker.snapshot(snapshot, share: leafShare, at: index))
        guard case .installed(let installed) = installSnapshot(snapshot, from: peer, at: address, index: index)
        else { return }
        if let installed {
            coverage.bump(.leafShareSnapshotsInstalled)
            finishInstall(installed, snapshot: snapshot, at: address, index: index)
        } else {
            withSession(address) { session, view, now in session.onLocalOpsAppended(source: view, now: now) }
        }
    }

    enum InstallAttempt {
        case refused
        case installed(CompactedBaseInstall?)
    }

    /// Installs `snapshot` on replica `index`; a refusal closes the session (`localFailure`), as the
    /// driver does.
    private func installSnapshot(
        _ snapshot: SyncSnapshot, from peer: ReplicaID, at address: EndpointAddress, index: Int
    ) -> InstallAttempt {
        do {
            return .installed(try replicas[index].install(snapshot, now: now))
        } catch {
            coverage.bump(.snapshotsRefused)
            let refusal = SyncError(.localFailure, "the snapshot from \(peer) was not installed: \(error)")
            withSession(address) { session, _, now in session.onClose(error: refusal, now: now) }
            return .refused
        }
    }

    /// After an install: own ops stamped again end the session (`resync`, fresh hellos count them anew);
    /// otherwise the session goes on from the new base.
    private func finishInstall(
        _ installed: CompactedBaseInstall, snapshot: SyncSnapshot, at address: EndpointAddress, index: Int
    ) {
        record(checker.installed(snapshot.frontier, restamped: installed.restamped, at: index))
        guard installed.restamped.isEmpty else {
            coverage.bump(.opsRestamped, by: installed.restamped.count)
            let resync = SyncError(.resync, "\(installed.restamped.count) own ops were stamped again")
            withSession(address) { session, _, now in session.onClose(error: resync, now: now) }
            return
        }
        withSession(address) { session, view, now in session.onLocalOpsAppended(source: view, now: now) }
    }

    /// A hub revised decisions it carried to the share leaf: they take the place of the ops held, as
    /// `Replica.reviseCarried` does under the daemon's driver.
    private func revise(_ batch: EncodedOps, from peer: ReplicaID, at address: EndpointAddress) {
        guard let index = replica(at: address) else { return }
        guard index == leafIndex else {
            return fail(.unexpectedAction, index, "a revised decision to a replica of the whole tree")
        }
        coverage.bump(.leafRevisionsReceived, by: batch.ops.count)
        do {
            let replaced = try replicas[index].reviseCarried(batch.ops)
            coverage.bump(.leafRevisionsTaken, by: replaced.count)
            record(checker.revised(replaced, at: index))
        } catch {
            let refusal = SyncError(.localFailure, "the revised decisions from \(peer) were not taken: \(error)")
            withSession(address) { session, _, now in session.onClose(error: refusal, now: now) }
        }
    }

    private func recordAcknowledgement(
        _ acknowledgement: Acknowledgement, from peer: ReplicaID, at address: EndpointAddress
    ) {
        guard let index = replica(at: address), let peerIndex = replicas.firstIndex(where: { $0.id == peer }) else {
            return fail(.unexpectedAction, replica(at: address), "an acknowledgement from unknown replica \(peer)")
        }
        coverage.bump(.acknowledgements)
        replicas[index].record(acknowledgement, from: peer)
        // A stable frontier answers for the replicas that were members when it was computed: the late
        // joiner is left out (the group's frontier runs ahead of it until the snapshot reaches it).
        // The share leaf is no member either.
        let joiner = scenario.lateJoiner?.replica
        record(
            checker.acknowledgement(
                acknowledgement, by: peerIndex, durable: replicas[peerIndex].durable.vector,
                everyDurable: replicas.filter { $0.index != joiner && $0.index != leafIndex }.map(\.durable.vector)))
    }

    private func scheduleTimer(_ timer: SyncTimer, after delay: UInt64, at address: EndpointAddress) {
        guard connections[address.connection] != nil else { return }
        let slot = Connection.timerSlot(side: address.side, timer: timer)
        connections[address.connection]!.timerGenerations[slot] += 1
        let generation = connections[address.connection]!.timerGenerations[slot]
        queue.schedule(
            .timer(connection: address.connection, side: address.side, timer: timer, generation: generation),
            at: now + delay)
    }

    private func note(_ status: SyncStatus, at address: EndpointAddress) {
        switch status.phase {
        case .handshaking: break
        case .connected:
            guard let connection = connections[address.connection], !connection.ready[address.side] else { return }
            connections[address.connection]!.ready[address.side] = true
            connections[address.connection]!.readyTick = now
            // Replicas that had a session count each other as members from then on.
            let pair = connections[address.connection]!.replicas
            // Not the share leaf: its hub does not count its acks (it holds placeholders, not the ops).
            if pair[address.side ^ 1] != leafIndex {
                replicas[pair[address.side]].learn(member: replicas[pair[address.side ^ 1]].id)
            }
            coverage.bump(.sessionsReady)
        case .closed:
            guard let error = status.error else { return }
            switch error.code {
            case .timeout: coverage.bump(.sessionsTimedOut)
            case .connectionLost: coverage.bump(.sessionsClosedOnLostConnections)
            case .clockDrift: break
            default: coverage.bump(.sessionsClosedOnProtocolErrors)
            }
            trace.add(UInt64(error.code.rawValue))
        }
    }

    /// The session closed: the transport closes after the bytes already written, and the peer sees
    /// the end of the stream.
    private func close(_ address: EndpointAddress, error: SyncError?) {
        guard let connection = connections[address.connection], connection.sessions[address.side] != nil else { return }
        if connection.sessions[address.side ^ 1] != nil, !connection.torn[address.side ^ 1] {
            scheduleTransportClosed(toward: address.side ^ 1, of: address.connection)
        }
        forget(address)
    }
}
