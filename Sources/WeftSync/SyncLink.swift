import WeftCore

/// The ready state of a session: what flows each way once both sides are authenticated.
///
/// Outbound, a cursor per origin marks the last op sent (or known held by the peer); ops after it
/// go out in batches while the window has room. Inbound, a bound per origin marks the last op the
/// peer may continue from: the peer's own cursor is built from this side's hello, acks and ops,
/// plus what the peer sent, so the bound follows all four, and an op beyond it is a gap.
struct SyncLink: Sendable {
    /// The peer's hello.
    let peer: Hello
    /// This replica.
    let local: ReplicaID
    /// This replica's role.
    let localRole: SyncRole
    /// True when ops flow (neither side is a client).
    let replicates: Bool
    /// True when this side sends ops: the peer replicates and may read some of the tree.
    let sendsOps: Bool
    /// The share a peer limited to part of the tree may read: each op goes to it projected into the
    /// share (``OpProjection``). Nil when the peer reads the whole tree (ops go as they are) or nothing.
    let share: CredentialShare?
    /// True when what the peer holds counts for stability: it is sent every op whole. A peer sent only
    /// its share holds placeholders and projections, not the ops, so its hello and acks are not recorded.
    let countsForStability: Bool
    /// The credential the peer authenticated with: what it may read and write (its permissions and,
    /// from a rules file, its grants). A client's changes in place when the rules are reloaded.
    var credential: PeerCredential
    /// True when the peer may write anywhere (its ops need no check one by one).
    let writesEverywhere: Bool
    /// True when the peer is a client of this daemon.
    let servesClient: Bool
    let settings: Settings
    var outbound: Outbound
    var inbound: Inbound
    var client = ClientLedger()

    struct Settings: Sendable {
        let batchOpsMax: Int
        let batchBytesMax: Int
        /// The smaller of this side's window and the one the peer advertised.
        let sendWindowBytes: Int
        /// The window this side advertised.
        let receiveWindowBytes: Int
        let windowFramesMax: Int
        let snapshotChunkBytes: Int
    }

    struct Outbound: Sendable {
        /// Per origin, the last op sent or known held by the peer.
        var cursor: VersionVector
        /// The peer's hello vector raised by each of its acks.
        var acknowledged: VersionVector
        var ledger = WindowLedger()
        /// The snapshot being sent, if any.
        var snapshot: SnapshotSending?
        /// Snapshot chunks sent in this session (their indices continue across snapshots).
        var snapshotChunksSent: UInt64 = 0
        /// To a peer limited to a share: the ops it holds as this replica decided them (see
        /// ``CarriedDecision``), by stamp, each sent again when the decision changes.
        var carried: [Stamp: CarriedDecision] = [:]
        /// True once the ops the peer held when the session began were looked through for carried ones.
        var carriedScanned = false
        /// The version vector the carried decisions were last checked at: outcomes change only as ops arrive.
        var carriedCheckedAt: VersionVector?
        /// The greatest stamp of a carried decision recorded (it may be gone since: the check is then
        /// only more often complete).
        var carriedLatest: Stamp?
        /// The compaction stamp the carried decisions were last pruned at.
        var carriedPrunedAt: Stamp?
        /// True when a carried decision was a call waiting for its function at the last look.
        var carriedWaiting = false
        /// The stamp the peer compacted up to (or installed a snapshot at), from its hello and acks.
        var peerCompaction: Stamp?
        /// The compaction stamp of this replica at the last snapshot sent in this session.
        var snapshotSentAt: Stamp?
    }

    /// An op a peer limited to a share holds as this replica decided it (``OpProjection``): the op, and
    /// the partial op last sent for it (nil when sent in an earlier session, unknown now).
    struct CarriedDecision: Sendable {
        let op: Op
        var sent: Op?
    }

    struct Inbound: Sendable {
        /// Per origin, the last op the peer may continue from.
        var bound: VersionVector
        var ledger = WindowLedger()
        /// The vectors of the last ack sent.
        var acknowledged: VersionVector
        var stableAnnounced = VersionVector()
        var compactionAnnounced: Stamp?
        /// The snapshot being received, if any.
        var snapshot: SnapshotAssembler?
        /// Snapshot chunks received in this session.
        var snapshotChunksReceived: UInt64 = 0
    }

    struct SnapshotSending: Sendable {
        let frontier: VersionVector
        let digest: StateDigest
        let entries: [SnapshotEntry]
        let entryBytes: [Int]
        var nextEntry = 0
        let touches: [CompactedTouch]
        var nextTouch = 0
    }

    /// Requests in flight and watches of a client conversation (either end): each watch by the id of the
    /// request that opened it, with its path.
    struct ClientLedger: Sendable {
        var pendingRequests: Set<UInt64> = []
        var watches: [UInt64: Path] = [:]
        /// Watches a reload ended before the owner answered them, with the refusal their answer becomes.
        var endedWatches: [UInt64: SyncError] = [:]
    }

    init(
        peer: Hello, credential: PeerCredential, configuration: SyncConfiguration, sentVersionVector: VersionVector
    ) {
        self.peer = peer
        self.local = configuration.replica
        self.localRole = configuration.role
        self.credential = credential
        replicates = peer.role != .client && configuration.role != .client
        let readsEverywhere = Self.allowsEverywhere(.read, credential)
        let share = CredentialShare(credential)
        self.share = replicates && !readsEverywhere && !share.isEmpty ? share : nil
        countsForStability = replicates && readsEverywhere
        sendsOps = countsForStability || self.share != nil
        writesEverywhere = Self.allowsEverywhere(.write, credential)
        servesClient = peer.role == .client
        settings = Settings(
            batchOpsMax: configuration.batchOpsMax, batchBytesMax: configuration.batchBytesMax,
            sendWindowBytes: Int(min(UInt64(configuration.windowBytes), peer.windowBytes)),
            receiveWindowBytes: configuration.windowBytes, windowFramesMax: configuration.windowFramesMax,
            snapshotChunkBytes: configuration.snapshotChunkBytes)
        outbound = Outbound(cursor: peer.versionVector, acknowledged: peer.versionVector)
        outbound.peerCompaction = peer.compactionStamp
        inbound = Inbound(bound: sentVersionVector, acknowledged: sentVersionVector)
        precondition(settings.sendWindowBytes >= SyncLimits.windowBytesMin, "the send window is below the minimum")
    }

    /// Handles one message received while ready (error frames are handled by the session).
    mutating func handle(
        _ message: Message, frameBytes: Int, source: some OpSource, outbox: inout Outbox
    ) throws(SyncError) {
        switch message {
        case .ops(let ops): try receiveOps(ops, frameBytes: frameBytes, source: source, outbox: &outbox)
        case .revisions(let ops): try receiveRevisions(ops, source: source, outbox: &outbox)
        case .ack(let acknowledgement):
            try receiveAcknowledgement(acknowledgement, holding: source.versionVector, outbox: &outbox)
        case .snapshotBegin(let begin): try receiveSnapshotBegin(begin)
        case .snapshotChunk(let entries): try receiveSnapshotChunk(entries, outbox: &outbox)
        case .snapshotTouches(let touches): try receiveSnapshotTouches(touches, outbox: &outbox)
        case .snapshotEnd(let digest): try receiveSnapshotEnd(digest, outbox: &outbox)
        case .snapshotAck(let chunkCount): try receiveSnapshotAcknowledgement(chunkCount)
        case .ping(let number): outbox.send(.pong(number))
        case .pong: break
        case .request(let request): try receiveRequest(request, outbox: &outbox)
        case .reply(let reply): try receiveReply(reply, outbox: &outbox)
        case .event(let event): try receiveEvent(event, outbox: &outbox)
        case .queryEvent(let event): try receiveQueryEvent(event, outbox: &outbox)
        case .hello, .authResponse, .welcome:
            throw SyncError(.unexpectedMessage, "a \(message.type) message is not expected once the session is ready")
        case .error: preconditionFailure("error frames are handled by the session")
        }
    }

    /// After events: acks what the local log now covers, then sends what the window allows.
    mutating func pump(source: some OpSource, outbox: inout Outbox) throws(SyncError) {
        guard replicates else { return }
        let local = source.versionVector
        if inbound.ledger.hasOps(coveredBy: local) || source.compactionStamp != inbound.compactionAnnounced {
            sendAcknowledgement(local, source: source, outbox: &outbox)
        }
        if sendsOps { try fill(source: source, outbox: &outbox) }
    }

    /// On keep-alive ticks: acks when the log or the stable frontier moved since the last ack, so
    /// the peer's view of this replica (and its stable frontier) stays fresh.
    mutating func refreshAcknowledgement(source: some OpSource, outbox: inout Outbox) {
        guard replicates else { return }
        let local = source.versionVector
        if local != inbound.acknowledged || source.stableFrontier != inbound.stableAnnounced
            || source.compactionStamp != inbound.compactionAnnounced
        {
            sendAcknowledgement(local, source: source, outbox: &outbox)
        }
    }

    mutating func sendAcknowledgement(_ local: VersionVector, source: some OpSource, outbox: inout Outbox) {
        let stable = source.stableFrontier
        let compaction = source.compactionStamp
        outbox.send(.ack(Acknowledgement(versionVector: local, stableFrontier: stable, compactionStamp: compaction)))
        inbound.ledger.release(coveredBy: local)
        inbound.bound = inbound.bound.merged(with: local)
        inbound.acknowledged = local
        inbound.stableAnnounced = stable
        inbound.compactionAnnounced = compaction
    }

    /// Ops this replica holds that the peer has not acknowledged.
    func opsBehind(source: some OpSource) -> UInt64 {
        guard sendsOps else { return 0 }
        var total: UInt64 = 0
        for (origin, sequence) in source.versionVector.entries where sequence > outbound.acknowledged[origin] {
            total += sequence - outbound.acknowledged[origin]
        }
        return total
    }

    /// True when `credential` grants `access` over the whole tree.
    static func allowsEverywhere(_ access: Grant, _ credential: PeerCredential) -> Bool {
        credential.permissions.allowsEverywhere(access) && (credential.grants?.allowsEverywhere(access) ?? true)
    }

    /// The refusal of `access` to the subtree at `path`, or nil when the credential grants it: both its
    /// permissions (prefixes, from the API) and its grants (patterns, from a rules file) must.
    func denial(_ access: Grant, at path: Path) -> SyncError? {
        if !credential.permissions.allows(access, subtree: path) {
            let word = access == .read ? "read" : access == .write ? "write" : "read and write"
            return SyncError(.permissionDenied, "no \(word) access to \(path)")
        }
        return credential.grants?.denial(access, at: path)
    }

    func requireReplication(_ message: MessageType) throws(SyncError) {
        guard replicates else {
            throw SyncError(.unexpectedMessage, "a \(message) message is not expected in a client session")
        }
    }
}
