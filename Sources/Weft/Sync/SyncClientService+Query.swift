import WeftCore
import WeftSync

// MARK: - Queries and live queries of daemon clients

extension _SyncClientService {
    /// A live query: the query and the result its client holds.
    struct LiveQuery {
        let query: Query
        var lastResult: QueryResult
    }

    /// The one place the daemon runs a query: on the replica's query view (its state and indexes, taken
    /// together under its lock), through an index of the queried collection when one serves the query
    /// (`weft serve --index`), else by scanning the children.
    func evaluate(_ query: Query) -> QueryResult {
        backend.queryView().run(query).result
    }

    /// Answers `query` and `watchQuery` requests; a live query is recorded with the result its reply carries.
    func handleQuery(_ request: ClientRequest, channel: ObjectIdentifier) -> Answer {
        switch request.command {
        case .query(let query):
            return Answer(result: .rows(evaluate(query)))
        case .watchQuery(let query):
            let count = (watches[channel]?.count ?? 0) + (liveQueries[channel]?.count ?? 0)
            guard count < SyncLimits.clientWatchesMax else {
                let reason = "at most \(SyncLimits.clientWatchesMax) watches and live queries per session"
                return Answer(result: .failed(SyncError(.limitExceeded, reason)))
            }
            let result = evaluate(query)
            liveQueries[channel, default: [:]][request.id] = LiveQuery(query: query, lastResult: result)
            return Answer(result: .rows(result))
        default:
            return Answer(result: .failed(SyncError(.requestFailed, "not a query: \(request.command)")))
        }
    }

    /// The live queries whose result changed, given the paths changed since the last pass (nil: any may
    /// have). A write under the queried node that leaves the result as it was sends nothing.
    func queryEvents(changed: [Path]?) -> [(ObjectIdentifier, ClientQueryEvent)] {
        var events: [(ObjectIdentifier, ClientQueryEvent)] = []
        for (channel, queries) in liveQueries {
            for (watchID, live) in queries {
                if let changed, !changed.contains(where: { $0.isRelated(to: live.query.path) }) { continue }
                let result = evaluate(live.query)
                guard result != live.lastResult else { continue }
                liveQueries[channel]?[watchID]?.lastResult = result
                events.append((channel, ClientQueryEvent(watchID: watchID, from: live.lastResult, to: result)))
            }
        }
        return events
    }

    /// On the loop: the live query events found by the last pass.
    func takeQueryEvents() -> [(ObjectIdentifier, ClientQueryEvent)] {
        defer { queryEventsDue = [] }
        return queryEventsDue
    }
}
