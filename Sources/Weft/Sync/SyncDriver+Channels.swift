import Logging
import WeftCore
import WeftNet
import WeftSync

// MARK: - Channels

extension SyncDriver {
    /// A peer or client connected to the listener.
    func accept(_ connection: Connection) {
        guard !isShuttingDown else { return connection.close() }
        open(connection, side: .acceptor, outbound: nil)
    }

    /// Starts a session over an open connection.
    func open(_ connection: Connection, side: SyncSide, outbound: _OutboundPeer?) {
        loop.preconditionInLoopThreadForDriver()
        guard !isShuttingDown else { return connection.close() }
        var configuration = self.configuration
        configuration.tokens = tokens(side: side, outbound: outbound)
        let session: SyncSession
        do {
            session = try SyncSession(configuration: configuration)
        } catch {
            preconditionFailure("a configuration validated at init became invalid: \(error)")
        }
        let channel = _SyncChannel(connection: connection, session: session, side: side, outbound: outbound)
        // Until the handshake completes the session refuses, from its header, a frame larger than a hello
        // (``SyncLimits/handshakeFrameBytesMax``), and ``handshakeBudget`` caps what all such sessions hold.
        if let previous = outbound?.status.lastError {
            // A new attempt keeps what ended the last one until it gets somewhere (`weft status`).
            channel.status.lastError = previous
        }
        let key = ObjectIdentifier(channel)
        channels[key] = channel
        outbound?.channel = channel
        connection.onRead = { [weak self, weak channel] bytes in
            guard let self, let channel else { return }
            self.received(bytes, on: channel)
        }
        connection.onClose = { [weak self, weak channel] error in
            guard let self, let channel else { return }
            self.transportClosed(channel, error: error)
        }
        connection.onWritabilityChanged = { [weak self, weak channel] writable in
            guard let self, let channel, writable else { return }
            self.flush(channel)
        }
        logger.info(
            "sync connection opened",
            metadata: ["peer": "\(channel.status.address)", "side": "\(side == .initiator ? "initiator" : "acceptor")"])
        var generator = SystemRandomNumberGenerator()
        let nonce = AuthNonce.random(using: &generator)
        perform(
            channel.session.onStart(side, nonce: nonce, source: source, now: now),
            on: channel)
        publishStatus()
    }

    /// The book a session on `side` looks its peer up in: the driver's, with the token given for the dialled
    /// address or the listener as the shared credential.
    func tokens(side: SyncSide, outbound: _OutboundPeer?) -> TokenBook {
        var tokens = configuration.tokens
        if let token = side == .initiator ? outbound?.token : listenerToken {
            tokens.sharedCredential = PeerCredential(token: token)
        }
        return tokens
    }

    /// Bytes arrived: the session cuts them into frames and handles them. Before the handshake completes,
    /// what the session holds of an unfinished frame is held to the handshake budget, and the answer to a
    /// failed authentication waits (``AuthenticationThrottle``).
    func received(_ bytes: UnsafeRawBufferPointer, on channel: _SyncChannel) {
        guard !channel.isClosed, channel.heldAnswer == nil else { return }
        channel.status.bytesReceived += bytes.count
        let wasHandshaking = channel.session.phase == .handshaking
        let actions = channel.session.onBytesReceived(bytes, source: source, now: now)
        if wasHandshaking, channel.side == .acceptor, holdIfAuthenticationFailed(actions, on: channel) { return }
        perform(actions, on: channel)
        if wasHandshaking { holdHandshakeBytes(of: channel) }
        publishStatusSoon()
    }

    /// Counts what a session still handshaking holds against the shared budget; refuses it with `busy`
    /// when the budget cannot cover it, and returns its share once it is authenticated.
    private func holdHandshakeBytes(of channel: _SyncChannel) {
        let key = ObjectIdentifier(channel)
        guard !channel.isClosed, channel.session.phase == .handshaking else {
            handshakeBudget.release(key)
            return
        }
        guard !handshakeBudget.hold(channel.session.bufferedByteCount, for: key) else { return }
        let reason =
            "too many bytes held for connections that have not authenticated "
            + "(at most \(handshakeBudget.sharedBytesMax) beyond \(handshakeBudget.reservedBytes) each); try again later"
        logger.warning(
            "refusing connection: handshake budget spent",
            metadata: [
                "peer": "\(channel.status.address)", "held": "\(channel.session.bufferedByteCount)",
                "limit": "\(handshakeBudget.sharedBytesMax)",
            ])
        perform(channel.session.onClose(error: SyncError(.busy, reason), now: now), on: channel)
    }

    /// Holds the actions that answer a failed authentication for the throttle's delay: the session is
    /// closed already, the connection reads nothing more, and the error frame and close go out when the
    /// delay ends (or not at all, when the stranger hangs up first). True when the actions were held.
    private func holdIfAuthenticationFailed(_ actions: [SyncAction], on channel: _SyncChannel) -> Bool {
        let failed = actions.contains { action in
            if case .close(let error?) = action { return error.code == .authenticationFailed && !error.raisedByPeer }
            return false
        }
        guard failed else { return false }
        let host = AuthenticationThrottle.host(of: channel.connection.remoteAddress)
        let delay = authenticationThrottle.failed(host: host, now: now)
        handshakeBudget.release(ObjectIdentifier(channel))
        channel.connection.pauseReading()
        do {
            channel.heldAnswer = try loop.scheduleTimer(after: Int(clamping: delay)) { [weak self, weak channel] in
                guard let self, let channel, !channel.isClosed else { return }
                channel.heldAnswer = nil
                self.perform(actions, on: channel)
                self.publishStatusSoon()
            }
        } catch {
            // Only a stopping loop refuses a timer: the connection is closing anyway.
            return false
        }
        return true
    }

    /// The socket closed (orderly or not): the session learns it, the channel goes.
    func transportClosed(_ channel: _SyncChannel, error: NetError?) {
        if let error {
            logger.warning(
                "sync connection lost", metadata: ["peer": "\(channel.status.address)", "error": "\(error)"])
            channel.status.lastError = "\(error)"
        }
        if !channel.isClosed {
            perform(channel.session.onTransportClosed(now: now), on: channel)
        }
        channel.tearDown()
        handshakeBudget.release(ObjectIdentifier(channel))
        channels[ObjectIdentifier(channel)] = nil
        if channel.outbound == nil {
            closedBytesSent += channel.status.bytesSent
            closedBytesReceived += channel.status.bytesReceived
        }
        clientService?.channelClosed(ObjectIdentifier(channel))
        if let outbound = channel.outbound {
            var status = channel.status
            status.isConnected = false
            outbound.status = status
            if outbound.channel === channel { outbound.channel = nil }
        }
        logger.info("sync connection closed", metadata: ["peer": "\(channel.status.address)"])
        publishStatus()
    }

    /// The connection turned writable again: frames held meanwhile go out.
    func flush(_ channel: _SyncChannel) {
        guard !channel.isClosed else { return }
        do {
            try channel.flushQueue()
        } catch {
            failSending(channel, error: error)
        }
    }

    // MARK: - Actions

    /// Performs a session's actions in order.
    func perform(_ actions: [SyncAction], on channel: _SyncChannel) {
        for action in actions {
            switch action {
            case .send(let bytes):
                do {
                    try channel.send(bytes)
                } catch {
                    return failSending(channel, error: error)
                }
            case .applyOps(let ops, let peer):
                apply(ops, from: peer, on: channel)
            case .reviseOps(let ops, let peer):
                do {
                    let revised = try target.reviseCarried(ops.ops)
                    if revised > 0 {
                        logger.info(
                            "took decisions revised by \(peer)",
                            metadata: ["revised": "\(revised)", "sent": "\(ops.count)"])
                    }
                } catch {
                    let reason = "the revised decisions from \(peer) were not taken: \(error)"
                    return perform(
                        channel.session.onClose(error: SyncError(.localFailure, reason), now: now), on: channel)
                }
            case .installSnapshot(let snapshot, let peer):
                do {
                    let report = try target.installSnapshot(snapshot)
                    compactionStamp = .some(target.compactionStamp)
                    logger.info(
                        "installed a snapshot from \(peer)",
                        metadata: [
                            "frontier": "\(snapshot.frontier)", "folded": "\(report.opsFolded)",
                            "kept": "\(report.opsKept)", "restamped": "\(report.opsRestamped)",
                        ])
                    if report.opsRestamped > 0 {
                        // The peer may hold our ops under their old stamps as sent (and refused) in
                        // this session; fresh hellos make both sides count them anew.
                        let reason = "\(report.opsRestamped) own ops were stamped again above the snapshot"
                        return perform(
                            channel.session.onClose(error: SyncError(.resync, reason), now: now), on: channel)
                    }
                } catch {
                    let reason = "the snapshot (\(snapshot.frontier)) from \(peer) was not installed: \(error)"
                    return perform(
                        channel.session.onClose(error: SyncError(.localFailure, reason), now: now), on: channel)
                }
            case .recordAcknowledgement(let acknowledgement, let peer):
                acknowledgements.record(acknowledgement, from: peer)
                acknowledgementsChanged()
            case .recordShareAcknowledgement(let acknowledgement, let peer):
                acknowledgements.recordShare(acknowledgement, from: peer)
                persistMembershipIfChanged()
                acknowledgementsChanged()
            case .scheduleTimer(let timer, let milliseconds):
                schedule(timer, afterMilliseconds: milliseconds, on: channel)
            case .cancelTimer(let timer):
                channel.timers.removeValue(forKey: timer)?.cancel()
            case .reportStatus(let status):
                record(status, on: channel)
            case .handleRequest(let request):
                answer(request, on: channel)
            case .deliverReply, .deliverEvent, .deliverQueryEvent:
                // Only a client-role session produces these; a driver's sessions are peers or hubs.
                preconditionFailure("a \(configuration.role) session delivered a client message")
            case .close(let error):
                closeTransport(channel, error: error)
            }
        }
    }

    private func answer(_ request: ClientRequest, on channel: _SyncChannel) {
        if case .status = request.command {
            let reply = ClientReply(id: request.id, result: .ok(statusReport()))
            return perform(channel.session.onClientReply(reply, now: now), on: channel)
        }
        if let result = answerSubscription(request.command, client: Self.clientName(channel.session.peerHello)) {
            return perform(channel.session.onClientReply(ClientReply(id: request.id, result: result), now: now), on: channel)
        }
        guard let clientService else {
            let error = SyncError(.requestFailed, "this replica serves no client requests")
            return perform(
                channel.session.onClientReply(ClientReply(id: request.id, result: .failed(error)), now: now),
                on: channel)
        }
        let key = ObjectIdentifier(channel)
        let answer = clientService.handle(request, channel: key)
        if let receipt = answer.awaiting, !WriteReceipt.reached(receipt.status, .durable) {
            return replyOnceDurable(ClientReply(id: request.id, result: answer.result), receipt, on: key)
        }
        let reply = ClientReply(id: request.id, result: answer.result)
        perform(channel.session.onClientReply(reply, now: now), on: channel)
        if case .watch = request.command, case .ok = answer.result,
            let event = clientService.firstEvent(watchID: request.id, channel: key)
        {
            perform(channel.session.onClientEvent(event, now: now), on: channel)
        }
    }

    /// Sends `reply` once the write of `receipt` is durable, or a failure when it cannot become durable (the
    /// store failed, the replica shut down). Other requests of the channel go on meanwhile.
    private func replyOnceDurable(_ reply: ClientReply, _ receipt: WriteReceipt, on key: ObjectIdentifier) {
        Task { [weak self] in
            var result = reply.result
            do {
                try await receipt.wait(for: .durable)
            } catch {
                result = .failed(SyncError(.requestFailed, "the write was applied but not made durable: \(error)"))
            }
            let final = ClientReply(id: reply.id, result: result)
            try? self?.loop.execute { [weak self] in
                guard let self, let channel = self.channels[key], !channel.isClosed else { return }
                self.perform(channel.session.onClientReply(final, now: self.now), on: channel)
            }
        }
    }

    private func apply(_ ops: EncodedOps, from peer: ReplicaID, on channel: _SyncChannel) {
        guard !channel.isClosed else { return }
        do {
            let report = try target.applyRemote(ops)
            if let first = report.refused.first {
                // Below the compaction frontier, their origin reached this group only after a compaction
                // folded their place in stamp order (see "Snapshots" in Docs/PROTOCOL.md); out of order,
                // their origin's log is broken or forged. Either way they change nothing here.
                logger.warning(
                    "sync ops refused: at or below this replica's compaction frontier, or out of their origin's order",
                    metadata: [
                        "peer": "\(peer)", "ops": "\(report.refused.count)", "origin": "\(first.replica)",
                        "first": "\(first.text)",
                    ])
            }
        } catch {
            let code: SyncErrorCode = (error as? WeftError)?.code == .clockRefused ? .clockDrift : .localFailure
            logger.warning(
                "sync ops refused", metadata: ["peer": "\(peer)", "ops": "\(ops.count)", "error": "\(error)"])
            return perform(channel.session.onClose(error: SyncError(code, "\(error)"), now: now), on: channel)
        }
        requestPump()
    }

    private func schedule(_ timer: SyncTimer, afterMilliseconds milliseconds: UInt64, on channel: _SyncChannel) {
        channel.timers.removeValue(forKey: timer)?.cancel()
        guard !channel.isClosed else { return }
        do {
            let delay = Int(clamping: milliseconds)
            channel.timers[timer] = try loop.scheduleTimer(after: delay) { [weak self, weak channel] in
                guard let self, let channel, !channel.isClosed else { return }
                channel.timers[timer] = nil
                let actions = channel.session.onTimerFired(
                    timer, source: self.source, now: self.now)
                self.perform(actions, on: channel)
                self.publishStatusSoon()
            }
        } catch {
            // Only a stopping loop refuses a timer; every connection is being closed then.
            logger.debug("sync timer not scheduled", metadata: ["error": "\(error)"])
        }
    }

    private func record(_ status: SyncStatus, on channel: _SyncChannel) {
        let becameConnected = status.phase == .connected && !channel.status.isConnected
        channel.status.replica = status.peer ?? channel.status.replica
        channel.status.role = status.peerRole ?? channel.status.role
        channel.status.isConnected = status.phase == .connected
        channel.status.opsBehind = status.opsBehind
        if let error = status.error {
            channel.status.lastError = "\(error)"
            channel.status.lastErrorCode = error.code
        }
        if status.phase == .connected, status.peerIsMember, let outbound = channel.outbound {
            outbound.member = status.peer
        }
        if becameConnected, let peer = status.peer, let role = status.peerRole, role != .client, status.peerIsMember {
            // Membership: every replica this one replicates with directly (see Docs/PROTOCOL.md).
            if role == .hub { acknowledgements.addHub(peer) } else { acknowledgements.addMember(peer) }
            persistMembershipIfChanged()
            // A new hub caps compaction and becomes the source of stability at once, not at the next ack.
            acknowledgementsChanged()
        }
        if becameConnected {
            if channel.side == .acceptor {
                authenticationThrottle.succeeded(
                    host: AuthenticationThrottle.host(of: channel.connection.remoteAddress))
            }
            channel.wasConnected = true
            channel.status.sessionsEstablished += 1
            channel.status.lastError = nil
            channel.status.lastErrorCode = nil
            // The backoff is not reset here: a session refused just after its handshake (a skewed
            // clock, a snapshot it cannot install) would be redialled at the shortest delay for ever.
            // The reconnector starts over once a connection stayed open long enough to be healthy.
            logger.info(
                "sync session connected",
                metadata: ["peer": "\(channel.status.address)", "replica": "\(status.peer.map { "\($0)" } ?? "?")"])
        }
        if status.phase == .closed, channel.outbound != nil { noteOutboundClosed(status.error, on: channel) }
        if let outbound = channel.outbound { outbound.status = channel.status }
    }

    /// A frame could not be queued (the peer reads too slowly, or the connection broke): the session
    /// closes. What waits is dropped, so that its error frame goes next, and the connection closes even
    /// when that frame cannot be sent either: its `.close` was lost then, and a client that stopped
    /// reading kept its connection, its watches and megabytes of queued events for ever.
    func failSending(_ channel: _SyncChannel, error: SyncError) {
        channel.dropQueued()
        perform(channel.session.onClose(error: error, now: now), on: channel)
        if channel.connection.isOpen { closeTransport(channel, error: error) }
    }

    private func closeTransport(_ channel: _SyncChannel, error: SyncError?) {
        if let error {
            let message: Logger.Message = error.raisedByPeer ? "sync session closed by peer" : "sync session closed"
            let metadata: Logger.Metadata = [
                "peer": "\(channel.status.address)", "code": "\(error.code)", "error": "\(error)",
            ]
            // A shutdown, or a peer hanging up (its side logs why), is an expected end, not a fault here.
            let expected = error.code == .shutdown || error.code == .connectionLost || error.code == .resync
            logger.log(level: expected ? .info : .warning, message, metadata: metadata)
            channel.status.lastError = "\(error)"
            channel.status.lastErrorCode = error.code
        }
        channel.status.isConnected = false
        if let outbound = channel.outbound { outbound.status = channel.status }
        for timer in channel.timers.values { timer.cancel() }
        channel.timers = [:]
        // The last frames (an error, a shutdown) go to the connection's buffer, which it drains before
        // it closes, instead of staying in the channel's queue, which the close forgets.
        try? channel.flushQueue(ignoringBackpressure: true)
        channel.connection.close()
    }
}

// MARK: - Acknowledgements

extension SyncDriver {
    /// Stores the membership when it grew since it was last stored, so that a restarted replica still
    /// waits for every member before it calls ops stable. Called when a peer connects: members known
    /// only as origins of ops need no storing, since the log names them again after a restart.
    func persistMembershipIfChanged() {
        guard acknowledgements.members != persistedMembers else { return }
        persistedMembers = acknowledgements.members
        target.persistMembers(Array(persistedMembers))
    }

    /// An acknowledgement arrived: the replica's own ops held by a hub or a peer become acknowledged, and
    /// when the stable frontier moves, the replica learns it and every session announces it.
    func acknowledgementsChanged() {
        let local = target.durableVersionVector
        for origin in local.entries.keys where origin != configuration.replica {
            // A replica whose ops this one holds is a member: stability waits for it, or for a frontier
            // announced by a peer that hears from it.
            acknowledgements.addMember(origin)
        }
        // Each time, not only when the book moved: the stamp frontier also moves when an op it waited
        // for arrives, and what acks announce follows it. The target's policy decides; the driver sends.
        let frontiers = target.acknowledgementsChanged(acknowledgements, durable: local)
        stableFrontier = frontiers.stable
        let announced = frontiers.announced
        guard announced != announcedStableFrontier, announced.covers(announcedStableFrontier) else { return }
        announcedStableFrontier = announced
        let source = self.source
        for channel in Array(channels.values) where !channel.isClosed {
            perform(channel.session.onStableFrontierChanged(source: source, now: now), on: channel)
        }
    }
}

extension EventLoop {
    /// The driver's confinement check (WeftNet's own check is internal to it).
    func preconditionInLoopThreadForDriver() {
        precondition(inLoopThread, "sync driver state touched off its loop thread")
    }
}
