import Foundation
import WeftCore
import WeftSync

/// Serves the requests of daemon clients (`weft get`, `weft set`, `weft watch`, …) from the local replica,
/// and pushes watch events when watched values change.
///
/// Requests run on the driver's loop thread. A read is answered at once; a write once it is durable
/// (its group commit is in the file), so that a daemon killed after the reply keeps what the client was
/// told was done.
final class _SyncClientService: @unchecked Sendable {
    /// A request's result, and the write whose durability its reply waits for.
    struct Answer {
        let result: ClientResult
        var awaiting: WriteReceipt?
    }

    struct Watch {
        let path: Path
        var lastValue: Value
    }

    let backend: any ReplicaBackend
    /// Watches per channel, by the id of the request that opened them. Loop-confined.
    var watches: [ObjectIdentifier: [UInt64: Watch]] = [:]
    var listenerToken: ChangeListenerToken?
    /// Live queries per channel, by the id of the request that opened them. Loop-confined.
    var liveQueries: [ObjectIdentifier: [UInt64: LiveQuery]] = [:]
    /// Live query events found by the last ``takeEvents()``, for ``takeQueryEvents()``. Loop-confined.
    var queryEventsDue: [(ObjectIdentifier, ClientQueryEvent)] = []

    // Shared with the replica's notification queue, behind `lock`.
    private let lock = NSLock()
    /// Paths changed since the last pass over the watches; nil when too many to track (every watch is read).
    private var changedPaths: [Path]? = []
    private var passScheduled = false

    init(backend: any ReplicaBackend) {
        self.backend = backend
    }

    /// Answers one request; watch requests also record the watch (the first event is sent by the caller).
    func handle(_ request: ClientRequest, channel: ObjectIdentifier) -> Answer {
        do {
            switch request.command {
            case .set(let path, let value):
                let receipt = try backend.submit(path: path, kind: .set(value), at: .now)
                return Answer(result: .ok(.null), awaiting: receipt)
            case .merge(let path, let children):
                // As `DataNode.merge` refuses it: a merge of nothing is a mistake, not a write.
                guard !children.isEmpty else {
                    return Answer(result: .failed(SyncError(.requestFailed, "merge needs at least one member")))
                }
                let receipt = try backend.submit(path: path, kind: .merge(children), at: .now)
                return Answer(result: .ok(.null), awaiting: receipt)
            case .push(let path, let value):
                let (key, receipt) = try backend.submitPush(parent: path, value: value, at: .now)
                return Answer(result: .ok(.string(key)), awaiting: receipt)
            case .increment(let path, let step, let from):
                // Refused before it is an op when the value here already rejects it: recorded, a rejected
                // increment stayed in the log for ever (and went to every peer) though the client was told
                // it failed. In the daemon requests and merged ops both run on the loop, so nothing changes
                // the value between this check and the submit.
                if let rejection = Self.incrementRejection(
                    at: path, current: backend.value(at: path), by: step, from: from)
                {
                    return Answer(result: .failed(SyncError(.requestFailed, "refused: \(rejection)")))
                }
                // Decided again as it applies (a local op is decided at once): the client hears a rejection
                // there too, rather than reading the unchanged value.
                let receipt = try backend.submit(path: path, kind: .increment(by: step, from: from), at: .now)
                if case .rejected(let rejection) = receipt.status {
                    return Answer(result: .failed(SyncError(.requestFailed, "rejected: \(rejection)")))
                }
                return Answer(result: .ok(backend.value(at: path)), awaiting: receipt)
            case .get(let path):
                return Answer(result: .ok(backend.value(at: path)))
            case .query, .watchQuery:
                return handleQuery(request, channel: channel)
            case .watch(let path):
                let count = (watches[channel]?.count ?? 0) + (liveQueries[channel]?.count ?? 0)
                guard count < SyncLimits.clientWatchesMax else {
                    let reason = "at most \(SyncLimits.clientWatchesMax) watches per session"
                    return Answer(result: .failed(SyncError(.limitExceeded, reason)))
                }
                watches[channel, default: [:]][request.id] = Watch(path: path, lastValue: backend.value(at: path))
                return Answer(result: .ok(.null))
            case .unwatch(let watchID):
                let closedQuery = liveQueries[channel]?.removeValue(forKey: watchID) != nil
                guard watches[channel]?.removeValue(forKey: watchID) != nil || closedQuery else {
                    return Answer(result: .failed(SyncError(.requestFailed, "no watch \(watchID) on this session")))
                }
                return Answer(result: .ok(.null))
            case .status, .subscribe, .subscriptions:
                return Answer(result: .failed(SyncError(.requestFailed, "the sync driver answers this request")))
            }
        } catch {
            return Answer(result: .failed(SyncError(.requestFailed, "\(error)")))
        }
    }

    /// Why an increment of `current` by `step` would be rejected (the fold's rule: a number, or null,
    /// counting as `from`, moves to a finite sum), or nil when it would apply.
    static func incrementRejection(at path: Path, current: Value, by step: Number, from: Number) -> Rejection? {
        let base: Number
        switch current {
        case .null: base = from
        case .int(let value): base = .int(value)
        case .double(let value): base = .double(value)
        default: return .notANumber(path)
        }
        return base.adding(step) == nil ? .nonFinite(path) : nil
    }

    /// The current value of a watch just opened, for its first event.
    func firstEvent(watchID: UInt64, channel: ObjectIdentifier) -> ClientEvent? {
        guard let watch = watches[channel]?[watchID] else { return nil }
        return ClientEvent(watchID: watchID, path: watch.path, value: watch.lastValue)
    }

    /// Forgets watches the session ended (a reload of the rules took their path away).
    func endWatches(_ watchIDs: Set<UInt64>, channel: ObjectIdentifier) {
        for watchID in watchIDs { watches[channel]?[watchID] = nil }
    }

    /// Forgets the watches of a closed channel.
    func channelClosed(_ channel: ObjectIdentifier) {
        watches[channel] = nil
        liveQueries[channel] = nil
    }

    /// Records changed paths from the replica's notification queue; true when a pass must be scheduled.
    func noteChanges(_ batch: ChangeBatch) -> Bool {
        lock.withLock {
            if changedPaths != nil {
                changedPaths?.append(contentsOf: batch.changes.map(\.path))
                if (changedPaths?.count ?? 0) > SyncShellLimits.watchPathsPendingMax { changedPaths = nil }
            }
            guard !passScheduled else { return false }
            passScheduled = true
            return true
        }
    }

    /// On the loop: the events due since the last pass, per channel.
    func takeEvents() -> [(ObjectIdentifier, ClientEvent)] {
        let changed = lock.withLock { () -> [Path]? in
            defer {
                changedPaths = []
                passScheduled = false
            }
            return changedPaths
        }
        if let changed, changed.isEmpty { return [] }
        var events: [(ObjectIdentifier, ClientEvent)] = []
        for (channel, channelWatches) in watches {
            for (watchID, watch) in channelWatches {
                if let changed, !changed.contains(where: { $0.isRelated(to: watch.path) }) { continue }
                let value = backend.value(at: watch.path)
                guard value != watch.lastValue else { continue }
                watches[channel]?[watchID]?.lastValue = value
                events.append((channel, ClientEvent(watchID: watchID, path: watch.path, value: value)))
            }
        }
        queryEventsDue.append(contentsOf: queryEvents(changed: changed))
        return events
    }
}
