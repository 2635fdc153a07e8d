import WeftCore

/// The sans-I/O state machine of one sync connection, from hello to close.
///
/// It never touches sockets, threads, clocks or randomness: its owner (the libuv shell, the
/// simulator, a test) feeds it events with the bytes received, the time and the nonce, and
/// performs the ``SyncAction``s it returns, in order. The local op log is read through an
/// ``OpSource`` passed to each event; received ops come back to the owner as
/// ``SyncAction/applyOps(_:from:)``.
///
/// ```swift
/// var session = try SyncSession(configuration: SyncConfiguration(replica: me, role: .peer, tokens: book))
/// var actions = session.onStart(.initiator, nonce: .random(using: &generator), source: log, now: now)
/// actions += session.onBytesReceived(bytes, source: log, now: now)
/// actions += session.onLocalOpsAppended(source: log, now: now)   // the log grew
/// actions += session.onTimerFired(.keepAlive, source: log, now: now)
/// ```
///
/// Times are milliseconds on the owner's monotonic clock; only their differences matter.
public struct SyncSession: Sendable {
    /// Who this session speaks for and how it paces itself.
    public let configuration: SyncConfiguration
    var state: State = .idle
    var decoder = FrameDecoder(frameBytesMax: SyncLimits.handshakeFrameBytesMax)
    /// The paths of the peer's ops decoded so far: its frames name the same paths again and again.
    var paths: PathCache? = PathCache()
    var startedAt: UInt64 = 0
    var lastReceivedAt: UInt64 = 0
    var lastSentAt: UInt64 = 0
    var pingsSent: UInt64 = 0
    var lastStatus: SyncStatus?
    /// When the last ack went out (any ack), for the rate bound of acks sent on a durable move.
    var lastAcknowledgedAt: UInt64?
    /// A durable move waits for the rate bound: the keep-alive timer is set to fire when it ends.
    var isAcknowledgementDeferred = false

    enum State: Sendable {
        /// Not started.
        case idle
        /// Waiting for the peer's hello (the initiator already sent its own).
        case awaitingHello(Handshake)
        /// Acceptor: hello sent, waiting for the initiator's proof.
        case awaitingProof(Handshake, peer: Hello, credential: PeerCredential)
        /// Initiator: proof sent, waiting for the acceptor's welcome and proof.
        case awaitingWelcome(Handshake, peer: Hello, credential: PeerCredential)
        /// Authenticated; ops or client messages flow.
        case ready(SyncLink)
        /// Over, for this reason (nil for a clean close).
        case closed(SyncError?)
        /// Transient, while a ready link is being changed in place (so its buffers are not copied).
        case modifying
    }

    struct Handshake: Sendable {
        let side: SyncSide
        let nonce: AuthNonce
        /// The version vector in the hello this side sent (nil until sent).
        var sentVersionVector: VersionVector?
    }

    /// A session for `configuration`.
    /// - Throws: ``SyncError`` with code ``SyncErrorCode/invalidConfiguration`` when a field is out of range.
    public init(configuration: SyncConfiguration) throws(SyncError) {
        try configuration.validate()
        self.configuration = configuration
    }

    // MARK: - Inspection

    /// Where the session stands.
    public var phase: SyncPhase {
        switch state {
        case .idle, .awaitingHello, .awaitingProof, .awaitingWelcome: return .handshaking
        case .ready, .modifying: return .connected
        case .closed: return .closed
        }
    }

    /// The peer's hello, once it arrived.
    public var peerHello: Hello? {
        switch state {
        case .awaitingProof(_, let peer, _), .awaitingWelcome(_, let peer, _): return peer
        case .ready(let link): return link.peer
        case .idle, .awaitingHello, .closed, .modifying: return nil
        }
    }

    /// What the peer acknowledged so far (its hello's vector, raised by each ack); nil before ready.
    public var peerAcknowledged: VersionVector? {
        if case .ready(let link) = state { return link.outbound.acknowledged }
        return nil
    }

    /// True once ready when what the peer holds counts for stability (it replicates and is sent every op).
    public var peerCountsForStability: Bool {
        if case .ready(let link) = state { return link.countsForStability }
        return false
    }

    /// Bytes sent to the peer and not yet acknowledged.
    public var unacknowledgedBytes: Int {
        if case .ready(let link) = state { return link.outbound.ledger.bytes }
        return 0
    }

    /// Bytes received and not yet cut into a frame: what this session holds of the peer's input. Before
    /// the handshake completes it stays below ``SyncLimits/handshakeFrameBytesMax`` plus one read, and its
    /// owner may hold all its sessions to a shared budget (the daemon does: see `Docs/SECURITY.md`).
    public var bufferedByteCount: Int { decoder.bufferedByteCount }

    /// The error the session closed with, if it closed on one.
    public var closeError: SyncError? {
        if case .closed(let error) = state { return error }
        return nil
    }

    // MARK: - Events

    /// Starts the session: the initiator sends its hello, the acceptor waits for one.
    ///
    /// - Parameters:
    ///   - side: which end of the connection this is.
    ///   - nonce: fresh random bytes for this session's authentication.
    ///   - source: the local log (its version vector goes in the hello).
    ///   - now: the current time, in milliseconds.
    public mutating func onStart(_ side: SyncSide, nonce: AuthNonce, source: some OpSource, now: UInt64) -> [SyncAction]
    {
        guard case .idle = state else { preconditionFailure("onStart in state \(state)") }
        precondition(side == .initiator || configuration.role != .client, "a client only initiates connections")
        var outbox = Outbox()
        startedAt = now
        lastReceivedAt = now
        lastSentAt = now
        var handshake = Handshake(side: side, nonce: nonce, sentVersionVector: nil)
        if side == .initiator {
            let hello = makeHello(nonce: nonce, source: source, replicates: configuration.role != .client)
            outbox.send(.hello(hello))
            handshake.sentVersionVector = hello.versionVector
        }
        state = .awaitingHello(handshake)
        outbox.append(.scheduleTimer(.idle, afterMilliseconds: configuration.handshakeTimeoutMilliseconds))
        report(phase: .handshaking, opsBehind: 0, error: nil, outbox: &outbox)
        return finish(&outbox, now: now)
    }

    /// Bytes arrived from the transport, in any chunking.
    ///
    /// Every complete frame is handled in order; garbage, a broken rule or a limit exceeded closes
    /// the session with an error frame (see ``SyncErrorCode``), never a trap.
    ///
    /// - Parameters:
    ///   - bytes: the bytes read, possibly part of a frame or several frames.
    ///   - source: the local log (to filter ops already held, and to send more once acks free the window).
    ///   - now: the current time, in milliseconds.
    public mutating func onBytesReceived(_ bytes: some Sequence<UInt8>, source: some OpSource, now: UInt64)
        -> [SyncAction]
    {
        switch state {
        case .idle, .modifying: preconditionFailure("bytes received in state \(state)")
        case .closed: return []
        case .awaitingHello, .awaitingProof, .awaitingWelcome, .ready: break
        }
        var outbox = Outbox()
        lastReceivedAt = now
        decoder.append(bytes)
        do throws(SyncError) {
            try drainFrames(source: source, outbox: &outbox, now: now)
            if case .ready = state {
                try withLink { link throws(SyncError) in try link.pump(source: source, outbox: &outbox) }
            }
        } catch {
            fail(error, outbox: &outbox)
        }
        reportIfChanged(source: source, outbox: &outbox)
        return finish(&outbox, now: now)
    }

    /// The local log grew (local writes, or ops merged after ``SyncAction/applyOps(_:from:)`` or a
    /// snapshot installed): acks what the peer sent, and streams what the peer lacks.
    ///
    /// Call it after each group commit on every session of the replica; before the session is
    /// connected it does nothing (the ops go out once it is). When the log moved past the last ack
    /// sent, an ack goes out too (at most one per
    /// ``SyncLimits/durableAcknowledgementIntervalMillisecondsMin``): the peer learns at once what this
    /// replica holds durably, its own new writes included, so stability does not wait for a keep-alive.
    ///
    /// - Parameters:
    ///   - source: the local log, grown.
    ///   - now: the current time, in milliseconds.
    public mutating func onLocalOpsAppended(source: some OpSource, now: UInt64) -> [SyncAction] {
        guard case .ready = state else { return [] }
        var outbox = Outbox()
        do throws(SyncError) {
            try withLink { link throws(SyncError) in try link.pump(source: source, outbox: &outbox) }
        } catch {
            fail(error, outbox: &outbox)
        }
        acknowledgeDurableMove(source: source, outbox: &outbox, now: now)
        // The peer's backlog grew by these ops: the status says so now, not at the peer's next frame
        // (a peer that reads slowly, or not at all, may send none for a long while).
        reportIfChanged(source: source, outbox: &outbox)
        return finish(&outbox, now: now)
    }

    /// Acks when the durable log moved past the last ack sent: now, or, within the rate bound of the
    /// last ack, when the bound ends (the keep-alive timer fires early and its refresh sends it).
    mutating func acknowledgeDurableMove(source: some OpSource, outbox: inout Outbox, now: UInt64) {
        guard !isAcknowledgementDeferred, isAcknowledgementBehind(source: source) else { return }
        let interval = SyncLimits.durableAcknowledgementIntervalMillisecondsMin
        let earliest = lastAcknowledgedAt.map { $0 + interval } ?? now
        if now >= earliest {
            withLinkNoThrow { $0.sendAcknowledgement(source.versionVector, source: source, outbox: &outbox) }
        } else {
            isAcknowledgementDeferred = true
            outbox.append(.scheduleTimer(.keepAlive, afterMilliseconds: earliest - now))
        }
    }

    /// True when ready and the log moved past the last ack sent. (A helper, so that the link read here
    /// is let go before the caller changes it in place: a copy still held would make it copy its buffers.)
    private func isAcknowledgementBehind(source: some OpSource) -> Bool {
        guard case .ready(let link) = state, link.replicates else { return false }
        return link.inbound.acknowledged != source.versionVector
    }

    /// The owner's stable frontier moved (acknowledgements from its members): acks at once, so the peer
    /// learns the new frontier (a hub's leaves learn stability this way) without waiting for a keep-alive.
    ///
    /// - Parameters:
    ///   - source: the local log, whose ``OpSource/stableFrontier`` is the new frontier.
    ///   - now: the current time, in milliseconds.
    public mutating func onStableFrontierChanged(source: some OpSource, now: UInt64) -> [SyncAction] {
        guard case .ready = state else { return [] }
        var outbox = Outbox()
        withLinkNoThrow { $0.refreshAcknowledgement(source: source, outbox: &outbox) }
        return finish(&outbox, now: now)
    }

    /// The owner closes the session; with an error, an error frame tells the peer why.
    ///
    /// - Parameters:
    ///   - error: nil for a clean close; otherwise the reason, for example ``SyncErrorCode/clockDrift``
    ///     when a received stamp runs too far ahead or ``SyncErrorCode/shutdown``.
    ///   - now: the current time, in milliseconds.
    public mutating func onClose(error: SyncError?, now: UInt64) -> [SyncAction] {
        if case .closed = state { return [] }
        var outbox = Outbox()
        if let error {
            fail(error, outbox: &outbox)
        } else {
            close(error: nil, outbox: &outbox)
        }
        return finish(&outbox, now: now)
    }

    /// The transport closed (end of stream or a socket error) without an error frame.
    ///
    /// - Parameter now: the current time, in milliseconds.
    /// - Returns: timer cancellations, a closed status and a close action with
    ///   ``SyncErrorCode/connectionLost``; nothing when the session was already closed.
    public mutating func onTransportClosed(now: UInt64) -> [SyncAction] {
        if case .closed = state { return [] }
        var outbox = Outbox()
        let unfinished = decoder.bufferedByteCount
        let reason =
            unfinished == 0
            ? "the connection closed" : "the connection closed \(unfinished) bytes into an unfinished frame"
        close(error: SyncError(.connectionLost, reason), outbox: &outbox)
        return finish(&outbox, now: now)
    }

    // MARK: - Frames

    mutating func drainFrames(source: some OpSource, outbox: inout Outbox, now: UInt64) throws(SyncError) {
        while true {
            if case .closed = state { return }
            guard let frame = try decoder.nextFrame() else { return }
            let message = try MessageCodec.decode(frame, paths: &paths)
            try handle(message, frameBytes: frame.encodedCount, source: source, outbox: &outbox, now: now)
        }
    }

    mutating func handle(
        _ message: Message, frameBytes: Int, source: some OpSource, outbox: inout Outbox, now: UInt64
    ) throws(SyncError) {
        if case .error(let error) = message {
            close(error: error, outbox: &outbox)
            return
        }
        switch state {
        case .awaitingHello(let handshake):
            guard case .hello(let hello) = message else { throw unexpected(message) }
            try receiveHello(hello, handshake: handshake, source: source, outbox: &outbox, now: now)
        case .awaitingProof(let handshake, let peer, let credential):
            guard case .authResponse(let proof) = message else { throw unexpected(message) }
            try receiveProof(
                proof, handshake: handshake, peer: peer, credential: credential, source: source, outbox: &outbox,
                now: now)
        case .awaitingWelcome(let handshake, let peer, let credential):
            guard case .welcome(let proof) = message else { throw unexpected(message) }
            try receiveWelcome(
                proof, handshake: handshake, peer: peer, credential: credential, source: source, outbox: &outbox,
                now: now)
        case .ready:
            try withLink { link throws(SyncError) in
                try link.handle(message, frameBytes: frameBytes, source: source, outbox: &outbox)
            }
        case .closed: return
        case .idle, .modifying: preconditionFailure("message \(message.type) handled in state \(state)")
        }
    }

    func unexpected(_ message: Message) -> SyncError {
        SyncError(.unexpectedMessage, "a \(message.type) message is not expected while \(stateName)")
    }

    var stateName: String {
        switch state {
        case .idle: return "idle"
        case .awaitingHello: return "waiting for a hello"
        case .awaitingProof: return "waiting for the initiator's proof"
        case .awaitingWelcome: return "waiting for the acceptor's welcome"
        case .ready: return "ready"
        case .closed: return "closed"
        case .modifying: return "modifying"
        }
    }

    // MARK: - Helpers

    /// Runs `body` on the ready link in place.
    mutating func withLink<T>(_ body: (inout SyncLink) throws(SyncError) -> T) throws(SyncError) -> T {
        guard case .ready(var link) = state else { preconditionFailure("no link in state \(state)") }
        state = .modifying
        defer { state = .ready(link) }
        return try body(&link)
    }

    /// Closes on an error found locally: the peer gets an error frame unless it raised the error.
    mutating func fail(_ error: SyncError, outbox: inout Outbox) {
        if case .closed = state { return }
        if !error.raisedByPeer, error.code != .connectionLost { outbox.send(.error(error)) }
        close(error: error, outbox: &outbox)
    }

    mutating func close(error: SyncError?, outbox: inout Outbox) {
        if case .closed = state { return }
        let opsBehind = lastStatus?.opsBehind ?? 0
        let peer = peerHello
        state = .closed(error)
        outbox.append(.cancelTimer(.keepAlive))
        outbox.append(.cancelTimer(.idle))
        let status = SyncStatus(
            peer: peer?.replica, peerName: peer?.name ?? "", peerRole: peer?.role, phase: .closed,
            opsBehind: opsBehind, error: error)
        lastStatus = status
        outbox.append(.reportStatus(status))
        outbox.append(.close(error))
    }

    mutating func report(phase: SyncPhase, opsBehind: UInt64, error: SyncError?, outbox: inout Outbox) {
        let peer = peerHello
        let isMember = if case .ready(let link) = state { link.countsForStability } else { false }
        let status = SyncStatus(
            peer: peer?.replica, peerName: peer?.name ?? "", peerRole: peer?.role, phase: phase,
            opsBehind: opsBehind, error: error, peerIsMember: isMember)
        guard status != lastStatus else { return }
        lastStatus = status
        outbox.append(.reportStatus(status))
    }

    /// Reports the ready session's status when the peer's backlog changed.
    mutating func reportIfChanged(source: some OpSource, outbox: inout Outbox) {
        guard case .ready(let link) = state else { return }
        report(phase: .connected, opsBehind: link.opsBehind(source: source), error: nil, outbox: &outbox)
    }

    mutating func finish(_ outbox: inout Outbox, now: UInt64) -> [SyncAction] {
        if outbox.sentAny { lastSentAt = now }
        if outbox.sentAcknowledgement { lastAcknowledgedAt = now }
        return outbox.finish()
    }
}
