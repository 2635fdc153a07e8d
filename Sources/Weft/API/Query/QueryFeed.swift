import Foundation
import WeftCore

/// What a live query delivers: its first result, then each new result with the changes from the one
/// before (index sets a table view applies as a batch update).
public enum QueryEvent: Sendable, Hashable {
    /// The result when the subscription started.
    case initial(QueryResult)
    /// A new result, and how the previous one became it.
    case updated(QueryResult, QueryChangeSet)

    /// The result this event carries.
    public var result: QueryResult {
        switch self {
        case .initial(let result), .updated(let result, _): return result
        }
    }
}

/// The engine of a live query: follows the replica's change batches, re-runs the query only when a changed
/// child can change its result, and keeps the newest result for the consumer to take.
///
/// A changed child matters when it was in the result, or now passes the range and the predicate and sorts
/// within the window's edge. To know that for the children an offset skips too, the feed keeps the result
/// of the *covering* query (offset 0, limit raised by the offset): every child that can enter the window
/// after a change is then in it or beyond its edge. Changes are noted as they come and evaluated on the
/// feed's queue, so a burst of writes is one evaluation.
///
/// Consumers pull (``take()``): the event is made from what they hold to the newest result, so a slow one
/// gets fewer, larger change sets, and memory holds two results, never a backlog.
final class QueryFeed: Finishable, @unchecked Sendable {
    // Sendable: mutable fields are guarded by `lock`; evaluations run on `queue`, one at a time.

    /// How a feed ended.
    enum End: Equatable {
        case shutDown
        case cancelled
    }

    let query: DataQuery
    private let covering: Query
    private let lock = NSLock()
    private let queue = DispatchQueue(label: "weft.query")
    private var token: ChangeListenerToken?
    /// The covering result as last evaluated, and the query's result cut from it.
    private var coveringResult = QueryResult(rows: [])
    private var coveringKeys: Set<Key> = []
    private var latest: QueryResult?
    private var delivered: QueryResult?
    /// Children changed since the last evaluation, or nil for "all of them" (a write at or above the node).
    private var touched: Set<Key>? = []
    private var isScheduled = false
    private var finished: End?
    private var wake: (@Sendable () -> Void)?
    /// Evaluations run, and those skipped because no changed child could change the result (for tests).
    private(set) var evaluations = 0

    init(query: DataQuery) {
        self.query = query
        covering = query.query.covering
    }

    private var access: ReplicaAccess { query.access }

    /// Starts following the replica; `wake` is called (on any thread, without locks held) each time there
    /// is something to take, and once the feed ended.
    func start(wake: @escaping @Sendable () -> Void) {
        lock.withLock { self.wake = wake }
        guard !access.backend.isShutDown, access.state.add(self) else {
            lock.withLock { finished = .shutDown }
            wake()
            return
        }
        let collection = query.query.path
        // The listener is added before the first run, so no batch falls between them: a batch the run
        // already saw is evaluated again, which finds nothing new.
        let token = access.backend.addChangeListener { [weak self] batch in
            self?.note(batch.changes, collection: collection)
        }
        let proceed = lock.withLock {
            guard finished == nil else { return false }
            self.token = token
            return true
        }
        guard proceed else {
            token.cancel()
            return
        }
        queue.async { self.evaluate(initial: true) }
    }

    /// Notes the children of the collection the changes touch, and schedules an evaluation.
    private func note(_ changes: [Change], collection: Path) {
        var keys: Set<Key> = []
        var wholesale = false
        let depth = collection.depth
        for change in changes {
            if change.path.depth <= depth {
                if change.path.isAncestorOrSelf(of: collection) { wholesale = true }
            } else if collection.isAncestorOrSelf(of: change.path) {
                keys.insert(change.path.keys[depth])
            }
        }
        guard wholesale || !keys.isEmpty else { return }
        let schedule: Bool = lock.withLock {
            guard finished == nil else { return false }
            if wholesale { touched = nil } else { touched?.formUnion(keys) }
            guard !isScheduled else { return false }
            isScheduled = true
            return true
        }
        if schedule { queue.async { self.evaluate(initial: false) } }
    }

    /// Runs the covering query if a noted child can change the result (always the first time), and
    /// wakes the consumer when the result changed.
    private func evaluate(initial: Bool) {
        let noted: Set<Key>?? = lock.withLock {
            guard finished == nil else { return .none }
            isScheduled = false
            defer { touched = [] }
            return .some(initial ? nil : touched)
        }
        guard case .some(let keys) = noted else { return }
        let view = access.backend.queryView()
        if !initial, let keys, !keys.contains(where: { matters($0, in: view) }) { return }
        let fresh = view.run(covering).result
        let cut = QueryResult(rows: Array(fresh.rows[query.query.window(count: fresh.count)]))
        let wake: (@Sendable () -> Void)? = lock.withLock {
            guard finished == nil else { return nil }
            evaluations += 1
            coveringResult = fresh
            coveringKeys = Set(fresh.keys)
            guard cut != latest else { return nil }
            latest = cut
            return self.wake
        }
        wake?()
    }

    /// True when the child under `key` can change the result: it was in the covering result, or it now
    /// passes the query's filters and the covering result is not full or it sorts within its edge.
    private func matters(_ key: Key, in view: QueryView) -> Bool {
        let (inResult, edge, isFull): (Bool, QueryRow?, Bool) = lock.withLock {
            let full = covering.limit.map { coveringResult.count >= $0.count } ?? false
            let edge: QueryRow? =
                if case .last = covering.limit { coveringResult.rows.first } else { coveringResult.rows.last }
            return (coveringKeys.contains(key), edge, full)
        }
        if inResult { return true }
        let child = view.tree.value(at: query.query.path)[key]
        guard covering.admits(key: key, value: child) else { return false }
        guard isFull, let edge, let limit = covering.limit else { return true }
        let order = covering.compare(
            covering.orderingValue(key: key, value: child), key, covering.orderingValue(key: edge.key, value: edge.value),
            edge.key)
        if case .last = limit { return order > 0 }
        return order < 0
    }

    /// The next event for the consumer, if the result changed since it last took one.
    func take() -> (event: QueryEvent?, end: End?) {
        lock.withLock {
            if finished == .cancelled { return (nil, .cancelled) }
            guard let latest else { return (nil, finished) }
            guard let delivered else {
                self.delivered = latest
                return (.initial(latest), nil)
            }
            guard latest != delivered else { return (nil, finished) }
            self.delivered = latest
            return (.updated(latest, QueryChangeSet(from: delivered, to: latest)), nil)
        }
    }

    /// True when the feed ended as `end` and every result was taken.
    func hasEnded(_ end: End) -> Bool {
        lock.withLock { finished == end && (latest == nil || latest == delivered) }
    }

    /// Waits until every change posted so far was evaluated (tests use it to compare with a fresh read).
    func settle() async {
        if let replica = access.backend as? Replica { await replica.notifier.waitUntilDelivered() }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { continuation.resume() }
        }
    }

    /// Stops the feed for good.
    func cancel() {
        let token = lock.withLock {
            finished = .cancelled
            wake = nil
            defer { self.token = nil }
            return self.token
        }
        token?.cancel()
        access.state.remove(self)
    }

    /// The replica shut down: no more results; one not yet taken is still delivered.
    func finish() {
        let (token, wake) = lock.withLock {
            if finished == nil { finished = .shutDown }
            defer { self.token = nil }
            return (self.token, self.wake)
        }
        token?.cancel()
        wake?()
    }

    deinit {
        token?.cancel()
        access.state.remove(self)
    }
}
