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
