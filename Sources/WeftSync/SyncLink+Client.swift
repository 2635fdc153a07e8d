import WeftCore

// MARK: - Client conversation

// A daemon's session with a client relays requests to the owner and the owner's replies and events
// back; a client's session sends requests and delivers replies and events. Requests in flight and
// watches are counted against SyncLimits on both ends.
extension SyncLink {
    /// Daemon side: a request from the client.
    mutating func receiveRequest(_ request: ClientRequest, outbox: inout Outbox) throws(SyncError) {
        guard servesClient else {
            throw SyncError(.unexpectedMessage, "a request message is only expected from a client")
        }
        guard client.pendingRequests.count < SyncLimits.clientRequestsPendingMax else {
            throw SyncError(
                .limitExceeded, "more than \(SyncLimits.clientRequestsPendingMax) requests are waiting for replies")
        }
        guard !client.pendingRequests.contains(request.id) else {
            throw SyncError(.protocolViolation, "request id \(request.id) is already waiting for a reply")
        }
        if let denied = deniedAccess(request.command) {
            let error = SyncError(
                .permissionDenied, "no \(denied.access == .read ? "read" : "write") access to \(denied.path)")
            outbox.send(.reply(ClientReply(id: request.id, result: .failed(error))))
            return
        }
        switch request.command {
        case .watch, .watchQuery:
            guard client.watches.count < SyncLimits.clientWatchesMax else {
                throw SyncError(.limitExceeded, "more than \(SyncLimits.clientWatchesMax) watches are open")
            }
            client.watches.insert(request.id)
        case .unwatch(let watchID):
            client.watches.remove(watchID)
        case .get, .set, .merge, .push, .increment, .status, .query:
            break
        }
        client.pendingRequests.insert(request.id)
        outbox.append(.handleRequest(request))
    }

    /// The access a command needs and lacks, with the path where it lacks it; nil when allowed.
    func deniedAccess(_ command: ClientCommand) -> (access: Grant, path: Path)? {
        let needs: [(Grant, Path)]
        switch command {
        case .get(let path), .watch(let path): needs = [(.read, path)]
        case .query(let query), .watchQuery(let query): needs = [(.read, query.path)]
        case .set(let path, _), .push(let path, _): needs = [(.write, path)]
        // Its reply carries the value: a write-only grant must not read it by incrementing by zero.
        case .increment(let path, _, _): needs = [(.write, path), (.read, path)]
        case .merge(let path, let children):
            needs = children.compactMap { child in (try? path.appending(child.relative)).map { (.write, $0) } }
        case .unwatch: needs = []
        case .status: needs = [(.read, .root)]
        }
        for (access, path) in needs where !permissions.allows(access, subtree: path) { return (access, path) }
        return nil
    }

    /// Daemon side: the owner answers a request.
    mutating func sendReply(_ reply: ClientReply, outbox: inout Outbox) {
        precondition(servesClient, "replies go to clients only")
        precondition(
            client.pendingRequests.remove(reply.id) != nil, "reply to request \(reply.id), which is not pending")
        if let frame = MessageCodec.encodeIfFits(.reply(reply)) {
            if case .failed = reply.result { client.watches.remove(reply.id) }
            outbox.send(frame)
            return
        }
        // A value too large for one frame: the request fails, the session goes on.
        client.watches.remove(reply.id)
        let error = SyncError(
            .limitExceeded,
            "the reply would be a frame of more than \(SyncLimits.frameBytesMax) bytes; read a smaller subtree")
        outbox.send(.reply(ClientReply(id: reply.id, result: .failed(error))))
    }

    /// Daemon side: a watched value changed; dropped when the watch was closed meanwhile.
    ///
    /// - Throws: `limitExceeded` when the value no longer fits in one frame: the watch cannot go on, and
    ///   the client must learn it, so the session closes with that error.
    mutating func sendEvent(_ event: ClientEvent, outbox: inout Outbox) throws(SyncError) {
        precondition(servesClient, "events go to clients only")
        guard client.watches.contains(event.watchID) else { return }
        guard let frame = MessageCodec.encodeIfFits(.event(event)) else {
            throw SyncError(
                .limitExceeded,
                "the value watched at \(event.path) outgrew a frame (\(SyncLimits.frameBytesMax) bytes); "
                    + "watch a smaller subtree")
        }
        outbox.send(frame)
    }

    /// Daemon side: a live query's result changed; dropped when the query was closed meanwhile.
    ///
    /// - Throws: `limitExceeded` when the event does not fit in one frame, as ``sendEvent(_:outbox:)``.
    mutating func sendQueryEvent(_ event: ClientQueryEvent, outbox: inout Outbox) throws(SyncError) {
        precondition(servesClient, "events go to clients only")
        guard client.watches.contains(event.watchID) else { return }
        guard let frame = MessageCodec.encodeIfFits(.queryEvent(event)) else {
            throw SyncError(
                .limitExceeded,
                "a change of live query \(event.watchID) outgrew a frame (\(SyncLimits.frameBytesMax) bytes); "
                    + "query a smaller window")
        }
        outbox.send(frame)
    }

    /// Client side: sends a request.
    mutating func sendRequest(_ request: ClientRequest, outbox: inout Outbox) throws(SyncError) {
        precondition(!servesClient && !replicates, "requests go from a client to a daemon")
        guard client.pendingRequests.count < SyncLimits.clientRequestsPendingMax else {
            throw SyncError(
                .limitExceeded, "more than \(SyncLimits.clientRequestsPendingMax) requests are waiting for replies")
        }
        guard client.pendingRequests.insert(request.id).inserted else {
            throw SyncError(.requestFailed, "request id \(request.id) is already waiting for a reply")
        }
        outbox.send(.request(request))
    }

    /// Client side: the daemon answered.
    mutating func receiveReply(_ reply: ClientReply, outbox: inout Outbox) throws(SyncError) {
        guard !servesClient, !replicates else {
            throw SyncError(.unexpectedMessage, "a reply message is only expected by a client")
        }
        guard client.pendingRequests.remove(reply.id) != nil else {
            throw SyncError(.protocolViolation, "a reply to request \(reply.id), which is not pending")
        }
        outbox.append(.deliverReply(reply))
    }

    /// Client side: a watched value changed.
    mutating func receiveEvent(_ event: ClientEvent, outbox: inout Outbox) throws(SyncError) {
        guard !servesClient, !replicates else {
            throw SyncError(.unexpectedMessage, "an event message is only expected by a client")
        }
        outbox.append(.deliverEvent(event))
    }

    /// Client side: the result of a live query changed.
    mutating func receiveQueryEvent(_ event: ClientQueryEvent, outbox: inout Outbox) throws(SyncError) {
        guard !servesClient, !replicates else {
            throw SyncError(.unexpectedMessage, "a query event message is only expected by a client")
        }
        outbox.append(.deliverQueryEvent(event))
    }
}
