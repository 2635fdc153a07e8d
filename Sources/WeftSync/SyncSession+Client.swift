import WeftCore

// MARK: - Client conversation

extension SyncSession {
    /// Client side: sends a request to the daemon. Call only once the session is connected.
    ///
    /// ```swift
    /// let actions = try session.onClientRequest(ClientRequest(id: 1, command: .get(try Path("/a"))), now: now)
    /// ```
    /// - Throws: ``SyncError`` with code ``SyncErrorCode/limitExceeded`` when
    ///   ``SyncLimits/clientRequestsPendingMax`` requests already wait for replies, or
    ///   ``SyncErrorCode/requestFailed`` when `request.id` is already waiting.
    public mutating func onClientRequest(_ request: ClientRequest, now: UInt64) throws(SyncError) -> [SyncAction] {
        guard case .ready = state, configuration.role == .client else {
            preconditionFailure("client request in state \(stateName) with role \(configuration.role)")
        }
        var outbox = Outbox()
        try withLink { link throws(SyncError) in try link.sendRequest(request, outbox: &outbox) }
        return finish(&outbox, now: now)
    }

    /// Daemon side: answers a request delivered by ``SyncAction/handleRequest(_:)``. Ignored once closed.
    public mutating func onClientReply(_ reply: ClientReply, now: UInt64) -> [SyncAction] {
        guard case .ready = state else { return [] }
        var outbox = Outbox()
        withLinkNoThrow { $0.sendReply(reply, outbox: &outbox) }
        return finish(&outbox, now: now)
    }

    /// Daemon side: a watched value changed. Ignored once closed, or when the watch was closed; closes
    /// the session with `limitExceeded` when the value no longer fits in a frame.
    public mutating func onClientEvent(_ event: ClientEvent, now: UInt64) -> [SyncAction] {
        guard case .ready = state else { return [] }
        var outbox = Outbox()
        do {
            try withLink { (link: inout SyncLink) throws(SyncError) in try link.sendEvent(event, outbox: &outbox) }
        } catch {
            fail(error, outbox: &outbox)
        }
        return finish(&outbox, now: now)
    }

    /// Daemon side: a live query's result changed. Ignored once closed, or when the query was closed;
    /// closes the session with `limitExceeded` when the event does not fit in a frame.
    public mutating func onClientQueryEvent(_ event: ClientQueryEvent, now: UInt64) -> [SyncAction] {
        guard case .ready = state else { return [] }
        var outbox = Outbox()
        do {
            try withLink { (link: inout SyncLink) throws(SyncError) in
                try link.sendQueryEvent(event, outbox: &outbox)
            }
        } catch {
            fail(error, outbox: &outbox)
        }
        return finish(&outbox, now: now)
    }

    mutating func withLinkNoThrow(_ body: (inout SyncLink) -> Void) {
        guard case .ready(var link) = state else { preconditionFailure("no link in state \(state)") }
        state = .modifying
        body(&link)
        state = .ready(link)
    }
}

/// An op source with no ops, for clients (which hold no replica) and tests.
///
/// ```swift
/// session.onStart(.initiator, nonce: nonce, source: EmptyOpSource(), now: now)
/// ```
public struct EmptyOpSource: OpSource, Sendable {
    /// The empty source.
    public init() {}

    /// Always empty.
    public var versionVector: VersionVector { VersionVector() }

    /// Always none.
    public func ops(from origin: ReplicaID, after sequence: UInt64, limit: Int, bytesMax: Int) -> [Op] { [] }
}

// MARK: - Credentials reloaded

extension SyncSession {
    /// The owner reloaded its tokens and rules (`weft serve` on SIGHUP): the session goes on under its
    /// peer's new credential, or ends when it may not.
    ///
    /// - A peer whose token was removed or changed: closed with `authenticationFailed` (it proved a secret
    ///   the owner no longer trusts).
    /// - A peer whose entry is now of another kind: closed with `roleMismatch`.
    /// - A replicating peer whose access changed: closed with `permissionDenied`; it dials again, and its
    ///   new session follows the new rules from its hello on (what it is sent, whether it is a member).
    /// - A client: goes on under the new rules; each of its watches of a path it may no longer read ends
    ///   with a failed reply (``SyncLink/updateCredential(_:outbox:)``).
    ///
    /// A session still in its handshake takes the new credential for the rest of it.
    ///
    /// - Parameters:
    ///   - tokens: the new book, as the owner would use it for a new session with this peer.
    ///   - now: the current time, in milliseconds.
    public mutating func onCredentialsChanged(_ tokens: TokenBook, now: UInt64) -> [SyncAction] {
        var outbox = Outbox()
        switch state {
        case .idle, .awaitingHello, .closed, .modifying: return []
        case .awaitingProof(let handshake, let peer, _):
            if let credential = tokens.credential(name: peer.name, replica: peer.replica) {
                state = .awaitingProof(handshake, peer: peer, credential: credential)
            } else {
                fail(authenticationFailed(peer), outbox: &outbox)
            }
        case .awaitingWelcome(let handshake, let peer, _):
            if let credential = tokens.credential(name: peer.name, replica: peer.replica) {
                state = .awaitingWelcome(handshake, peer: peer, credential: credential)
            } else {
                fail(authenticationFailed(peer), outbox: &outbox)
            }
        case .ready(let link):
            let peer = link.peer
            let who = peer.who
            guard let credential = tokens.credential(name: peer.name, replica: peer.replica) else {
                fail(SyncError(.authenticationFailed, "the token of \(who) was removed"), outbox: &outbox)
                break
            }
            if credential.token.bytes != link.credential.token.bytes {
                fail(
                    SyncError(.authenticationFailed, "the token of \(who) changed: authenticate with the new one"),
                    outbox: &outbox)
            } else if !credential.kind.admits(peer.role) {
                do throws(SyncError) {
                    try checkKind(of: credential, peer: peer)
                } catch {
                    fail(error, outbox: &outbox)
                }
            } else if link.credential.isEquivalent(to: credential) {
                break
            } else if link.replicates, !link.credential.grantsSameAccess(as: credential) {
                let reason = "the rules of \(who) changed: the session ends; dial again to replicate under the new ones"
                fail(SyncError(.permissionDenied, reason), outbox: &outbox)
            } else {
                // A client, or a peer whose kind only was named: the session goes on under the new credential.
                withLinkNoThrow { $0.updateCredential(credential, outbox: &outbox) }
            }
        }
        return finish(&outbox, now: now)
    }

    /// The ids of the client watches still open on a ready session (none otherwise): the owner forgets
    /// the others, which a reload of the rules may have ended.
    public var openWatchIDs: Set<UInt64> {
        if case .ready(let link) = state { return link.openWatchIDs }
        return []
    }
}
