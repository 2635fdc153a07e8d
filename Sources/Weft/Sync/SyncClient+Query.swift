import WeftCore
import WeftSync

// MARK: - Queries through a daemon

extension SyncClient {
    /// A live query of this client: the result last delivered (nil until the daemon's reply) and its handler.
    struct LiveQuery {
        var result: QueryResult?
        let onChange: @Sendable (QueryResult, QueryChangeSet) -> Void
    }

    /// Runs a query on the daemon's replica and returns its rows, in the query's order.
    ///
    /// ```swift
    /// let top = try Query(path: try Path("/posts")).orderedByChild("meta/score").limit(toLast: 20)
    /// for row in try await client.query(top) { print(row.key, row.value) }
    /// ```
    /// - Throws: what ``request(_:)`` throws; `authentication` when the token may not read `query.path`.
    public func query(_ query: Query) async throws(WeftError) -> QueryResult {
        try Self.rows(of: await send(.query(query), onEvent: nil))
    }

    /// Opens a live query: returns the result now, then calls `onChange` with the new result and the change
    /// set from the previous one each time the result changes (bursts of writes coalesce), until the
    /// connection closes or ``unwatch(_:)`` is called with the returned id. `onChange` runs on the client's
    /// loop thread.
    ///
    /// ```swift
    /// let (id, first) = try await client.watch(query) { result, changes in print(changes) }
    /// try await client.unwatch(id)
    /// ```
    /// - Throws: what ``request(_:)`` throws.
    @discardableResult
    public func watch(
        _ query: Query, onChange: @escaping @Sendable (QueryResult, QueryChangeSet) -> Void
    ) async throws(WeftError) -> (id: UInt64, result: QueryResult) {
        let box = IDBox()
        let result = try await send(.watchQuery(query), onEvent: nil) { id in
            box.id = id
            self.liveQueries[id] = LiveQuery(result: nil, onChange: onChange)
        }
        return (box.id, try Self.rows(of: result))
    }

    /// Stops the live query or watch opened with request `id`.
    ///
    /// - Throws: what ``request(_:)`` throws (`sync` for an id this session does not watch).
    public func unwatch(_ id: UInt64) async throws(WeftError) {
        // Forgotten at once: an event already on its way is then dropped.
        _ = try await send(.unwatch(watchID: id), onEvent: nil) { _ in self.liveQueries[id] = nil }
    }

    /// On the loop: a live query's first result arrived.
    func liveQueryOpened(_ reply: ClientReply) {
        guard case .rows(let result) = reply.result, liveQueries[reply.id] != nil else { return }
        liveQueries[reply.id]?.result = result
    }

    /// On the loop: a live query changed; returns the error that ends the session when the event does not
    /// fit the result held (the daemon and this client would disagree from then on).
    func deliver(_ event: ClientQueryEvent) -> WeftError? {
        // Closed meanwhile (unwatch sent, the event was already on its way).
        guard let live = liveQueries[event.watchID] else { return nil }
        guard let old = live.result else {
            return WeftError(.sync, "live query \(event.watchID) changed before its first result")
        }
        do throws(SyncError) {
            let new = try event.applied(to: old)
            liveQueries[event.watchID]?.result = new
            live.onChange(new, event.changes)
            return nil
        } catch {
            return Self.publicError(error)
        }
    }

    private static func rows(of result: ClientResult) throws(WeftError) -> QueryResult {
        switch result {
        case .rows(let rows): return rows
        case .ok(let value): throw WeftError(.sync, "the daemon answered a query with a value (\(value.jsonString()))")
        case .failed(let error): throw publicError(error)
        }
    }
}

/// The request id a send assigns on the loop, read once the send returns (the reply comes after).
private final class IDBox: @unchecked Sendable {
    var id: UInt64 = 0
}
