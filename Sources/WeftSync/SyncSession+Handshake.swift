import WeftCore

// MARK: - Handshake

// The initiator sends its hello; the acceptor answers with its own (the challenge: its nonce). The
// initiator proves it holds the shared token with an HMAC over both nonces and both ids; the
// acceptor checks it and answers with a welcome carrying its own proof, which the initiator checks.
extension SyncSession {
    /// This side's hello. Towards a client, or from one, it says nothing of the log: neither replicates.
    func makeHello(nonce: AuthNonce, source: some OpSource, replicates: Bool) -> Hello {
        Hello(
            replica: configuration.replica, role: configuration.role, name: configuration.name, nonce: nonce,
            versionVector: replicates ? source.versionVector : VersionVector(),
            windowBytes: UInt64(configuration.windowBytes),
            compactionStamp: replicates ? source.compactionStamp : nil, holdsShare: replicates && source.holdsShare)
    }

    mutating func receiveHello(
        _ peer: Hello, handshake: Handshake, source: some OpSource, outbox: inout Outbox, now: UInt64
    ) throws(SyncError) {
        try checkPeer(peer, side: handshake.side)
        guard let credential = configuration.tokens.credential(name: peer.name, replica: peer.replica) else {
            throw authenticationFailed(peer)
        }
        var handshake = handshake
        switch handshake.side {
        case .acceptor:
            // A client holds no replica: it needs no vector (which could be large).
            let hello = makeHello(nonce: handshake.nonce, source: source, replicates: peer.role != .client)
            outbox.send(.hello(hello))
            handshake.sentVersionVector = hello.versionVector
            state = .awaitingProof(handshake, peer: peer, credential: credential)
        case .initiator:
            let proof = Authenticator.proof(
                token: credential.token, prover: .initiator, initiator: (configuration.replica, handshake.nonce),
                acceptor: (peer.replica, peer.nonce))
            outbox.send(.authResponse(proof))
            state = .awaitingWelcome(handshake, peer: peer, credential: credential)
        }
        report(phase: .handshaking, opsBehind: 0, error: nil, outbox: &outbox)
    }

    mutating func receiveProof(
        _ proof: AuthProof, handshake: Handshake, peer: Hello, credential: PeerCredential, source: some OpSource,
        outbox: inout Outbox, now: UInt64
    ) throws(SyncError) {
        precondition(handshake.side == .acceptor, "only an acceptor waits for a proof")
        let initiator = (peer.replica, peer.nonce)
        let acceptor = (configuration.replica, handshake.nonce)
        guard
            Authenticator.verify(
                proof, token: credential.token, prover: .initiator, initiator: initiator, acceptor: acceptor)
        else { throw authenticationFailed(peer) }
        try checkKind(of: credential, peer: peer)
        try checkShare(of: credential, peer: peer)
        let ownProof = Authenticator.proof(
            token: credential.token, prover: .acceptor, initiator: initiator, acceptor: acceptor)
        outbox.send(.welcome(ownProof))
        try becomeReady(
            peer: peer, credential: credential, handshake: handshake, source: source, outbox: &outbox, now: now)
    }

    mutating func receiveWelcome(
        _ proof: AuthProof, handshake: Handshake, peer: Hello, credential: PeerCredential, source: some OpSource,
        outbox: inout Outbox, now: UInt64
    ) throws(SyncError) {
        precondition(handshake.side == .initiator, "only an initiator waits for a welcome")
        guard
            Authenticator.verify(
                proof, token: credential.token, prover: .acceptor, initiator: (configuration.replica, handshake.nonce),
                acceptor: (peer.replica, peer.nonce))
        else { throw authenticationFailed(peer) }
        try checkKind(of: credential, peer: peer)
        try checkShare(of: credential, peer: peer)
        try becomeReady(
            peer: peer, credential: credential, handshake: handshake, source: source, outbox: &outbox, now: now)
    }

    /// Both sides are authenticated: set up the link, start the timers, send what the peer lacks.
    mutating func becomeReady(
        peer: Hello, credential: PeerCredential, handshake: Handshake, source: some OpSource, outbox: inout Outbox,
        now: UInt64
    ) throws(SyncError) {
        guard let sentVersionVector = handshake.sentVersionVector else {
            preconditionFailure("ready before this side sent its hello")
        }
        decoder.frameBytesMax = SyncLimits.frameBytesMax
        let link = SyncLink(
            peer: peer, credential: credential, configuration: configuration, sentVersionVector: sentVersionVector)
        state = .ready(link)
        lastReceivedAt = now
        outbox.append(.scheduleTimer(.idle, afterMilliseconds: configuration.idleTimeoutMilliseconds))
        outbox.append(.scheduleTimer(.keepAlive, afterMilliseconds: configuration.pingIntervalMilliseconds))
        // The status first: the owner learns the peer's role (a hub, a member) before it counts the
        // peer's first acknowledgement. Counted first, a restarted leaf, which does not remember which
        // member is its hub, took it for a plain member: it called stable what only the hub had, and
        // its compaction was not yet capped by the hub's.
        report(phase: .connected, opsBehind: link.opsBehind(source: source), error: nil, outbox: &outbox)
        if link.countsForStability || link.share != nil {
            // The hello's vector is what the peer holds: its first acknowledgement, with this replica's own
            // ops counted as every ack counts them (``SyncLink/counting(_:holding:)``).
            let counted = Acknowledgement(versionVector: link.counting(peer.versionVector, holding: source.versionVector))
            outbox.append(
                link.countsForStability
                    ? .recordAcknowledgement(counted, from: peer.replica)
                    : .recordShareAcknowledgement(counted, from: peer.replica))
        }
        try withLink { link throws(SyncError) in try link.pump(source: source, outbox: &outbox) }
        // The log may have moved since this side's hello (a write made during the handshake, whose move
        // found the session not ready): the peer learns it now, not at the first keep-alive.
        acknowledgeDurableMove(source: source, outbox: &outbox, now: now)
    }

    /// Refuses a peer that uses this replica's id, or whose role cannot talk to this one.
    func checkPeer(_ peer: Hello, side: SyncSide) throws(SyncError) {
        guard peer.replica != configuration.replica else {
            throw SyncError(
                .duplicateReplica,
                "the peer uses this replica's own id \(peer.replica): a copied database or a connection to itself; "
                    + "give the copy a new replica id")
        }
        guard !(peer.role == .client && configuration.role == .client) else {
            throw SyncError(.roleMismatch, "two clients cannot talk to each other")
        }
        guard !(peer.role == .client && side == .initiator) else {
            throw SyncError(.roleMismatch, "a client does not accept connections")
        }
    }

    /// Refuses a peer whose token entry is of another kind than its hello's role: a client token opening a
    /// peer session (it would be sent every op and could send ops under any origin), or a peer token a
    /// client one. Checked only once the proof verified, so that a stranger learns nothing of the entry.
    func checkKind(of credential: PeerCredential, peer: Hello) throws(SyncError) {
        guard !credential.kind.admits(peer.role) else { return }
        let who = peer.who
        let asked = peer.role == .client ? "a client session" : "a \(peer.role) session"
        throw SyncError(
            .roleMismatch, "\(who) holds a \(credential.kind) token, which cannot open \(asked)")
    }

    /// Refuses a peer that holds a hub's share of the tree (partial ops) when this side would send it every
    /// op whole: whole ops from a second source would let it decide again what its hub decided for it,
    /// and its share could not take them in beside the ops its hub cut down. Checked before any op flows.
    func checkShare(of credential: PeerCredential, peer: Hello) throws(SyncError) {
        guard peer.holdsShare, peer.role != .client, configuration.role != .client,
            SyncLink.allowsEverywhere(.read, credential)
        else { return }
        let who = peer.who
        throw SyncError(
            .roleMismatch,
            "\(who) holds only its share of the tree (ops its hub cut down to what it may read) and syncs only "
                + "with that hub; this replica would send it every op whole. Remove this peer from its "
                + "configuration, or, to make it a replica of the whole tree, start it afresh on an empty file")
    }

    func authenticationFailed(_ peer: Hello) -> SyncError {
        let who = peer.who
        // The same words whichever check failed (no token under that name, or another secret): a
        // stranger learns nothing about the token file, and both ends learn what to check.
        return SyncError(
            .authenticationFailed,
            "authentication failed for \(who): both ends must hold the same secret, each filed under the "
                + "other's name (weft serve's --name, an embedded replica's ReplicaSyncOptions.name; "
                + "see Docs/CLI.md)")
    }
}

extension Hello {
    /// How refusals name the sender: by its token name, or by its replica id when it gave none.
    var who: String { name.isEmpty ? "replica \(replica)" : "\"\(name)\"" }
}
