import Foundation
import Logging
import WeftCore
import WeftNet
import WeftSync

/// The sync shell: runs one ``SyncSession`` per TCP connection on its own libuv ``EventLoop``, and
/// performs what the sessions ask — frames out with backpressure, timers on the loop, received ops merged
/// into the local replica.
///
/// It listens for peers, dials outbound peers and redials them with jittered exponential backoff, and
/// streams every op the replica appends to every connected session.
///
/// ```swift
/// let driver = try SyncDriver(target: replica, configuration: SyncConfiguration(replica: id, role: .peer, tokens: book))
/// let port = try await driver.listen(on: "127.0.0.1", port: 0)
/// try await driver.addPeer(host: "10.0.0.2", port: 7700)
/// print(driver.status.connectedCount)
/// await driver.shutdown()
/// ```
///
/// Thread-safety: every public method may be called from any thread; the sessions, connections and timers
/// live on the loop thread only.
public final class SyncDriver: @unchecked Sendable {
    /// The loop that owns the sockets and timers (a daemon also installs its signal handlers there).
    public let loop: EventLoop
    let target: any SyncTarget
    /// Who this replica is, its tokens and pacing; its tokens change on ``updateTokens(_:)`` (loop-confined
    /// from then on).
    var configuration: SyncConfiguration
    let logger: Logger
    /// Serves daemon clients, when the driver was given a replica to serve them from.
    let clientService: _SyncClientService?
    /// Keeps the target's calls coming while the driver runs; cancelled at shutdown.
    private var opsAppendedToken: ChangeListenerToken?
    private let clockOrigin = ContinuousClock.now

    // Loop-confined state.
    var listener: Listener?
    /// The token any peer connecting to the listener may prove, besides the book's.
    var listenerToken: AuthToken?
    var channels: [ObjectIdentifier: _SyncChannel] = [:]
    var outboundPeers: [_OutboundPeer] = []
    var isShuttingDown = false
    /// What every replicating peer acknowledged, across sessions; membership and the stable frontier.
    var acknowledgements: AcknowledgementBook
    /// The members last stored through the target (see ``persistMembershipIfChanged()``).
    var persistedMembers: Set<ReplicaID>
    /// The stable frontier the target last decided from `acknowledgements` (for the status).
    var stableFrontier = VersionVector()
    /// The part of `stableFrontier` under the target's stamp frontier: what acks announce.
    var announcedStableFrontier = VersionVector()
    /// The target's compaction stamp, announced in acks: read on first use, then learnt from its
    /// compactions and installs, so that sessions never read it from the target on each event.
    var compactionStamp: Stamp??
    /// A status publication is scheduled for the next turn of the loop (``publishStatusSoon()``).
    var statusPublishScheduled = false
    /// Bytes of inbound connections closed since (outbound peers keep theirs in their status).
    var closedBytesSent = 0
    var closedBytesReceived = 0
    /// What the sessions that have not authenticated hold, against a fixed cap.
    var handshakeBudget = HandshakeBudget()
    /// How long the answer to a failed authentication waits, per remote host.
    var authenticationThrottle = AuthenticationThrottle()

    // Shared state, behind `sharedLock`.
    private let sharedLock = NSLock()
    private var publishedStatus = SyncDriverStatus(listeningAddress: nil, peers: [])
    private var pumpScheduled = false
    private var statusObservers: [@Sendable (SyncDriverStatus) -> Void] = []

    /// Makes a driver with its own loop thread over `target`; nothing listens or dials yet.
    ///
    /// - Parameters:
    ///   - target: the local replica.
    ///   - configuration: who this replica is, its tokens and pacing; the role must be `.peer` or `.hub`.
    ///   - clients: the replica to serve client requests from (`weft get`, `weft set`…); nil refuses them.
    ///   - logger: where connections, handshakes and errors are logged.
    /// - Throws: `WeftError` with code `sync` for an invalid configuration or when the loop cannot start.
    init(
        target: any SyncTarget, configuration: SyncConfiguration, clients: (any ReplicaBackend)? = nil,
        logger: Logger = Logger.weft(label: "weft.sync")
    ) throws(WeftError) {
        guard configuration.role != .client else {
            throw WeftError(.sync, "a sync driver replicates: its role must be peer or hub, not client")
        }
        do {
            try configuration.validate()
        } catch {
            throw WeftError(.sync, "invalid sync configuration: \(error)")
        }
        do {
            loop = try EventLoop(label: "weft.sync.loop", logger: logger)
        } catch {
            throw WeftError(.sync, "cannot start the sync loop: \(error)")
        }
        self.target = target
        self.configuration = configuration
        // Members known before a restart hold the stable frontier back until they ack again.
        acknowledgements = AcknowledgementBook(local: configuration.replica, members: Set(target.persistedMembers))
        persistedMembers = acknowledgements.members
        self.logger = logger
        clientService = clients.map { _SyncClientService(backend: $0) }
        opsAppendedToken = target.addOpsAppendedListener { [weak self] in self?.requestPump() }
        target.addCompactionListener { [weak self] stamp in self?.compacted(upTo: stamp) }
        // A driver before this one may have left another cap.
        target.setCompactionCap(.unlimited)
        if let clients, let clientService {
            clientService.listenerToken = clients.addChangeListener { [weak self] batch in
                self?.clientValuesChanged(batch)
            }
        }
    }

    deinit {
        // Only ask: the last reference may be dropped on the loop thread itself, which cannot join itself.
        loop.beginShutdown()
    }

    // MARK: - Public surface

    /// Where the driver listens and how every peer stands, as of the last change.
    public var status: SyncDriverStatus { sharedLock.withLock { publishedStatus } }

    /// Calls `observer` (on the loop thread) after every change of ``status``.
    public func observeStatus(_ observer: @escaping @Sendable (SyncDriverStatus) -> Void) {
        sharedLock.withLock { statusObservers.append(observer) }
    }

    /// Listens for peers and clients on a numeric address.
    ///
    /// ```swift
    /// let port = try await driver.listen(on: "127.0.0.1", port: 0) // the port the system chose
    /// ```
    ///
    /// - Parameters:
    ///   - host: a numeric IPv4 or IPv6 address.
    ///   - port: the port, or 0 for one the system chooses.
    ///   - token: a token that any peer the token book does not name may prove to connect (with full
    ///     permissions); nil accepts only the peers of the book.
    /// - Returns: the port listened on.
    /// - Throws: `WeftError` with code `sync` when the address is invalid or in use, or the driver is shut down.
    @discardableResult
    public func listen(on host: String, port: Int, token: AuthToken? = nil) async throws(WeftError) -> Int {
        try await onLoop { () throws(WeftError) -> Int in
            guard self.listener == nil else { throw WeftError(.sync, "the driver already listens") }
            guard !self.isShuttingDown else { throw WeftError(.shutDown, "the sync driver is shut down") }
            do {
                // A connection past the limit is told why before it closes (the listener logs the limit).
                let refusal = MessageCodec.encode(
                    .error(
                        SyncError(
                            .busy, "too many connections: the replica is at its connection limit; try again later")))
                let listener = try self.loop.listen(host: host, port: port, refusal: refusal) {
                    [weak self] connection in
                    self?.accept(connection)
                }
                self.listener = listener
                self.listenerToken = token
                self.publishStatus()
                return listener.port
            } catch {
                throw WeftError(.sync, "cannot listen on \(host):\(port): \(error)")
            }
        }
    }

    /// Dials a peer now and redials it, with jittered exponential backoff, whenever the connection fails or
    /// drops, until ``shutdown()``.
    ///
    /// - Parameters:
    ///   - host: a numeric address or a host name.
    ///   - port: the port, 1...65535.
    ///   - token: the token the peer at this address shares with this replica, whatever its name (it
    ///     must prove it, as this replica does); nil to look the peer up in the token book.
    /// - Throws: `WeftError` with code `sync` for a bad address, a peer already dialled, more than
    ///   ``SyncShellLimits/outboundPeersMax`` peers, or a driver shut down.
    public func addPeer(host: String, port: Int, token: AuthToken? = nil) async throws(WeftError) {
        try await onLoop { () throws(WeftError) in
            guard !self.isShuttingDown else { throw WeftError(.shutDown, "the sync driver is shut down") }
            let address = SocketAddressText.describe(host: host, port: port)
            guard !self.outboundPeers.contains(where: { $0.address == address }) else {
                throw WeftError(.sync, "peer \(address) is already dialled")
            }
            guard self.outboundPeers.count < SyncShellLimits.outboundPeersMax else {
                throw WeftError(.sync, "at most \(SyncShellLimits.outboundPeersMax) outbound peers")
            }
            let peer = _OutboundPeer(address: address, token: token)
            let reconnector = Reconnector(loop: self.loop, host: host, port: port) {
                [weak self, weak peer] connection in
                guard let self, let peer else { return connection.close() }
                self.open(connection, side: .initiator, outbound: peer)
            }
            reconnector.onRetryScheduled = { [weak self, weak peer] error, delay in
                guard let self, let peer else { return }
                if let error {
                    peer.status.lastError = "\(error)"
                    peer.status.lastErrorCode = nil
                }
                self.logger.debug(
                    "sync peer retry scheduled",
                    metadata: [
                        "peer": "\(peer.address)", "delay_ms": "\(delay)",
                        "error": "\(error.map { "\($0)" } ?? "none")",
                    ])
                self.publishStatus()
            }
            do {
                try reconnector.start()
            } catch {
                throw WeftError(.sync, "cannot dial \(address): \(error)")
            }
            peer.reconnector = reconnector
            self.outboundPeers.append(peer)
            self.publishStatus()
        }
    }

    /// Closes every session with a shutdown error frame, stops dialling and listening, and stops the loop.
    /// Safe to call more than once.
    public func shutdown() async {
        try? await onLoop { () throws(WeftError) in self.closeEverything() }
        loop.beginShutdown()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread { [loop] in
                loop.waitUntilStopped()
                continuation.resume()
            }
        }
    }

    // MARK: - Loop work

    /// Runs `work` on the loop thread.
    func onLoop<Value: Sendable>(_ work: @escaping @Sendable () throws(WeftError) -> Value) async throws(WeftError)
        -> Value
    {
        let result: Result<Value, WeftError>
        do {
            result = try await loop.submit { () -> Result<Value, WeftError> in
                do throws(WeftError) { return .success(try work()) } catch { return .failure(error) }
            }
        } catch {
            throw WeftError(.shutDown, "the sync loop is stopped: \(error)")
        }
        return try result.get()
    }

    /// The local log as sessions read it, with the stable frontier to announce.
    var source: _SyncTargetSource {
        if compactionStamp == nil { compactionStamp = .some(target.compactionStamp) }
        return _SyncTargetSource(
            target: target, stableFrontier: announcedStableFrontier, compactionStamp: compactionStamp ?? nil)
    }

    /// Milliseconds on a monotonic clock, for sessions (only differences matter).
    var now: UInt64 {
        let elapsed = clockOrigin.duration(to: .now)
        return UInt64(elapsed.components.seconds) * 1_000
            + UInt64(elapsed.components.attoseconds / 1_000_000_000_000_000)
    }

    private func closeEverything() {
        guard !isShuttingDown else { return }
        isShuttingDown = true
        // Every session first, those this driver dialed too: each gets its `shutdown` frame, and its
        // connection drains it before it closes. Stopping a reconnector closes its connection, so done
        // first it left the sessions dialed from here nothing to send the frame on.
        for channel in Array(channels.values) where !channel.isClosed {
            perform(
                channel.session.onClose(error: SyncError(.shutdown, "the replica is shutting down"), now: now),
                on: channel)
        }
        for peer in outboundPeers {
            peer.reconnector?.stop()
        }
        listener?.close()
        listener = nil
        clientService?.listenerToken?.cancel()
        opsAppendedToken?.cancel()
        logger.info("sync driver stopped")
        publishStatus()
    }

    // MARK: - Status

    /// Publishes the status on the next turn of the loop, once for everything handled in this one: a
    /// frame, or a session timer, rebuilt the whole status (linear in the open connections) each time,
    /// so with a thousand idle sockets open a busy client's requests ran at a third of their rate.
    func publishStatusSoon() {
        guard !statusPublishScheduled else { return }
        statusPublishScheduled = true
        do {
            try loop.scheduleTimer(after: 0) { [weak self] in
                guard let self else { return }
                self.statusPublishScheduled = false
                self.publishStatus()
            }
        } catch {
            // A stopping loop takes no timer: publish now.
            statusPublishScheduled = false
            publishStatus()
        }
    }

    /// Recomputes the published status from the loop-confined state and tells the observers.
    func publishStatus() {
        // A dialled peer out of reach keeps no session to count its backlog: the driver counts it, so
        // that writes made offline show.
        let isAnyAway = outboundPeers.contains { !($0.channel?.status ?? $0.status).isConnected }
        let held = isAnyAway ? target.durableVersionVector : nil
        var peers = outboundPeers.map { peer in
            var status = peer.channel?.status ?? peer.status
            if let held, !status.isConnected { status.opsBehind = backlog(of: peer, status: status, holding: held) }
            return status
        }
        for channel in channels.values where channel.outbound == nil {
            peers.append(channel.status)
        }
        let status = SyncDriverStatus(
            listeningAddress: listener?.address, peers: peers,
            bytesSent: peers.reduce(closedBytesSent) { $0 + $1.bytesSent },
            bytesReceived: peers.reduce(closedBytesReceived) { $0 + $1.bytesReceived })
        let observers = sharedLock.withLock { () -> [@Sendable (SyncDriverStatus) -> Void] in
            guard publishedStatus != status else { return [] }
            publishedStatus = status
            return statusObservers
        }
        for observer in observers { observer(status) }
    }

    /// The backlog of a dialled peer that is not connected: the ops held beyond what it acknowledged
    /// (across sessions), or, for a peer not reached yet, this replica's own ops nobody acknowledged.
    private func backlog(of peer: _OutboundPeer, status: SyncPeerStatus, holding held: VersionVector) -> UInt64 {
        if let member = peer.member {
            let acknowledged = acknowledgements.acknowledged[member] ?? VersionVector()
            var total: UInt64 = 0
            for (origin, sequence) in held.entries where sequence > acknowledged[origin] {
                total += sequence - acknowledged[origin]
            }
            return total
        }
        // Reached, but not as a member (it is sent its share, or nothing): the session's count stands.
        guard status.sessionsEstablished == 0 else { return status.opsBehind }
        let own = held[configuration.replica]
        let acknowledged = target.acknowledgedOwnThrough
        return own > acknowledged ? own - acknowledged : 0
    }

    // MARK: - Pumping local ops

    /// The replica grew: schedules one pass over every session, coalescing requests made meanwhile.
    /// The target compacted (on any thread): the loop learns the new stamp, and the sessions announce it.
    func compacted(upTo stamp: Stamp) {
        do {
            try loop.execute { [weak self] in
                guard let self else { return }
                compactionStamp = .some(stamp)
                pumpAll()
            }
        } catch {
            logger.debug("compaction not announced", metadata: ["error": "\(error)"])
        }
    }

    func requestPump() {
        let schedule = sharedLock.withLock { () -> Bool in
            guard !pumpScheduled else { return false }
            pumpScheduled = true
            return true
        }
        guard schedule else { return }
        do {
            try loop.execute { [weak self] in self?.pumpAll() }
        } catch {
            sharedLock.withLock { pumpScheduled = false }
            logger.debug("sync pump not scheduled", metadata: ["error": "\(error)"])
        }
    }

    /// The replica's state changed: schedules one pass over the client watches.
    private func clientValuesChanged(_ batch: ChangeBatch) {
        guard let clientService, clientService.noteChanges(batch) else { return }
        do {
            try loop.execute { [weak self] in self?.sendWatchEvents() }
        } catch {
            logger.debug("sync watch pass not scheduled", metadata: ["error": "\(error)"])
        }
    }

    private func sendWatchEvents() {
        guard let clientService else { return }
        for (key, event) in clientService.takeEvents() {
            guard let channel = channels[key], !channel.isClosed else { continue }
            perform(channel.session.onClientEvent(event, now: now), on: channel)
        }
        for (key, event) in clientService.takeQueryEvents() {
            guard let channel = channels[key], !channel.isClosed else { continue }
            perform(channel.session.onClientQueryEvent(event, now: now), on: channel)
        }
    }

    private func pumpAll() {
        sharedLock.withLock { pumpScheduled = false }
        // The durable log grew: ops every member acked before they were durable here may be stable now
        // (no further ack need come to say so).
        acknowledgementsChanged()
        let source = self.source
        for channel in Array(channels.values) where !channel.isClosed {
            perform(channel.session.onLocalOpsAppended(source: source, now: now), on: channel)
        }
        publishStatus()
    }
}

/// `host:port`, bracketing IPv6 addresses, as WeftNet writes addresses.
enum SocketAddressText {
    static func describe(host: String, port: Int) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
