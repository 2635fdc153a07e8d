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
        if let denial = denial(of: request.command) {
            outbox.send(.reply(ClientReply(id: request.id, result: .failed(denial))))
            return
        }
        switch request.command {
        case .watch(let path):
            guard client.watches.count < SyncLimits.clientWatchesMax else {
                throw SyncError(.limitExceeded, "more than \(SyncLimits.clientWatchesMax) watches are open")
            }
            client.watches[request.id] = path
        case .watchQuery(let query):
            guard client.watches.count < SyncLimits.clientWatchesMax else {
                throw SyncError(.limitExceeded, "more than \(SyncLimits.clientWatchesMax) watches are open")
            }
            client.watches[request.id] = query.path
        case .unwatch(let watchID):
            client.watches[watchID] = nil
        case .get, .set, .merge, .push, .increment, .status, .query, .subscribe, .subscriptions:
            break
        }
        client.pendingRequests.insert(request.id)
        outbox.append(.handleRequest(request))
    }

    /// The refusal of a command the credential does not allow (naming the path and what it lacks); nil
    /// when allowed. A merge needs write access at each child's path, resolved from the merged node.
    func denial(of command: ClientCommand) -> SyncError? {
        let needs: [(Grant, Path)]
        switch command {
        case .get(let path), .watch(let path): needs = [(.read, path)]
        case .query(let query), .watchQuery(let query): needs = [(.read, query.path)]
        case .set(let path, _), .push(let path, _): needs = [(.write, path)]
        // Its reply carries the value: a write-only grant must not read it by incrementing by zero.
        case .increment(let path, _, _): needs = [(.write, path), (.read, path)]
        case .merge(let path, let children):
            // A child too deep to exist is checked at the merged node: the write fails anyway, never unchecked.
            needs = children.map { child in (.write, (try? path.appending(child.relative)) ?? path) }
        case .unwatch: needs = []
        case .status: needs = [(.read, .root)]
        case .subscribe(let request):
            // The bulk actions touch only the client's own subscriptions, whatever their nodes.
            switch request.action {
            case .subscribe, .unsubscribe: needs = [(.read, request.path)]
            case .unsubscribeAll, .updateDeviceToken: needs = []
            }
        case .subscriptions: needs = []
        }
        for (access, path) in needs {
            if let denial = denial(access, at: path) { return denial }
        }
        return nil
    }

    /// Daemon side: the owner answers a request.
    mutating func sendReply(_ reply: ClientReply, outbox: inout Outbox) {
        precondition(servesClient, "replies go to clients only")
        precondition(
            client.pendingRequests.remove(reply.id) != nil, "reply to request \(reply.id), which is not pending")
        if let ended = client.endedWatches.removeValue(forKey: reply.id) {
            outbox.send(.reply(ClientReply(id: reply.id, result: .failed(ended))))
            return
        }
        if let frame = MessageCodec.encodeIfFits(.reply(reply)) {
            if case .failed = reply.result { client.watches[reply.id] = nil }
            outbox.send(frame)
            return
        }
        // A value too large for one frame: the request fails, the session goes on.
        client.watches[reply.id] = nil
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
        guard client.watches[event.watchID] != nil else { return }
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
        guard client.watches[event.watchID] != nil else { return }
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
        // Watches are remembered on this end too: the daemon may end one later with a failed reply.
        switch request.command {
        case .watch(let path): client.watches[request.id] = path
        case .watchQuery(let query): client.watches[request.id] = query.path
        case .unwatch(let watchID): client.watches[watchID] = nil
        default: break
        }
        outbox.send(.request(request))
    }

    /// Client side: the daemon answered.
    mutating func receiveReply(_ reply: ClientReply, outbox: inout Outbox) throws(SyncError) {
        guard !servesClient, !replicates else {
            throw SyncError(.unexpectedMessage, "a reply message is only expected by a client")
        }
        guard client.pendingRequests.remove(reply.id) != nil else {
            // A failed reply to an open watch ends it (the daemon's rules no longer let it read the path).
            guard case .failed = reply.result, client.watches.removeValue(forKey: reply.id) != nil else {
                throw SyncError(.protocolViolation, "a reply to request \(reply.id), which is not pending")
            }
            outbox.append(.deliverReply(reply))
            return
        }
        if case .failed = reply.result { client.watches[reply.id] = nil }
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

// MARK: - Credentials reloaded

extension SyncLink {
    /// Daemon side: the client's credential changed (the rules were reloaded). The session goes on under the
    /// new one; each watch of a path it may no longer read ends with a failed reply carrying the watch's
    /// id and `permissionDenied`, naming the path and the rule lacking, and sends no event after it.
    mutating func updateCredential(_ new: PeerCredential, outbox: inout Outbox) {
        credential = new
        // A replicating peer's access never changes in place (the session closes instead), and a client's own
        // end watches nothing on the daemon's behalf.
        guard servesClient else { return }
        for (watchID, path) in client.watches.sorted(by: { $0.key < $1.key }) {
            guard let denial = denial(.read, at: path) else { continue }
            client.watches[watchID] = nil
            let ended = SyncError(.permissionDenied, "watch \(watchID) of \(path) ended: \(denial.message)")
            if client.pendingRequests.contains(watchID) {
                // The owner has not answered the watch yet: its answer becomes this refusal, so that the
                // client gets one reply for its request, not an answer after the end.
                client.endedWatches[watchID] = ended
            } else {
                outbox.send(.reply(ClientReply(id: watchID, result: .failed(ended))))
            }
        }
    }

    /// The ids of the open watches (daemon side: those a change must still be sent to).
    var openWatchIDs: Set<UInt64> { Set(client.watches.keys) }
}
