#if canImport(Combine)
    import Combine
#else
    import OpenCombine
#endif
import Dispatch
import Foundation
import WeftCore

/// What a live typed query delivers (the Realtime ORM's collection change): the result when it started,
/// then each new result with the index sets a table view applies as a batch update.
///
/// ```swift
/// switch change {
/// case .initial(let posts): rows = posts; tableView.reloadData()
/// case .updated(let posts, let deleted, let inserted, let modified, let moved):
///     rows = posts
///     tableView.performBatchUpdates { … }
/// }
/// ```
public enum FetchedResultChange<M: Model>: Sendable, Hashable {
    /// The result when the subscription started.
    case initial(FetchedResult<M>)
    /// A new result; indexes of rows deleted (old result), inserted (new result), modified in place
    /// (old result), and moved (old index to new index).
    case updated(
        FetchedResult<M>, deleted: IndexSet, inserted: IndexSet, modified: IndexSet, moved: [QueryChangeSet.Move])

    /// The result this change carries.
    public var result: FetchedResult<M> {
        switch self {
        case .initial(let result), .updated(let result, _, _, _, _): return result
        }
    }

    /// The changes as one ``QueryChangeSet`` (empty for `.initial`).
    public var changeSet: QueryChangeSet {
        switch self {
        case .initial: return QueryChangeSet(deletions: [], insertions: [], modifications: [], moves: [])
        case .updated(_, let deleted, let inserted, let modified, let moved):
            return QueryChangeSet(deletions: deleted, insertions: inserted, modifications: modified, moves: moved)
        }
    }

    /// The change from `old` to `new`, nil when they hold the same rows.
    init?(from old: FetchedResult<M>, to new: FetchedResult<M>) {
        guard old.rows != new.rows else { return nil }
        let changes = QueryChangeSet(from: old.queryResult, to: new.queryResult)
        self = .updated(
            new, deleted: changes.deletions, inserted: changes.insertions, modified: changes.modifications,
            moved: changes.moves)
    }
}

/// Turns a live query's events into typed changes: keeps the last typed result delivered.
final class FetchedResultTracker<M: Model>: @unchecked Sendable {
    // Sendable: `last` is guarded by `lock`.
    private let lock = NSLock()
    private let request: ModelRequest
    private var last: FetchedResult<M>?

    init(request: ModelRequest, baseline: FetchedResult<M>?) {
        self.request = request
        last = baseline
    }

    /// The typed change an event makes, nil when the typed result is unchanged.
    func change(for event: QueryEvent) -> FetchedResultChange<M>? {
        let result = request.result(of: event, as: M.self)
        return lock.withLock {
            defer { last = result }
            guard let last else { return .initial(result) }
            return FetchedResultChange(from: last, to: result)
        }
    }
}

extension Replica {
    /// Calls `changeHandler` each time the result of the query `fetchedResult` came from changes (Dflat's
    /// `subscribe(fetchedResult:changeHandler:)`): changes are counted from `fetchedResult`, so the first
    /// call is an `.updated` if the result changed since it was fetched (never `.initial`).
    ///
    /// ```swift
    /// let posts = try replica.fetch(for: Post.self).where(\.$priority > 100)
    /// let token = replica.subscribe(fetchedResult: posts) { change in
    ///     if case .updated(let posts, let deleted, let inserted, let modified, let moved) = change { … }
    /// }
    /// ```
    /// - Parameters:
    ///   - queue: where `changeHandler` runs, serially; nil for ``callbackQueue``.
    /// - Returns: the token that keeps the subscription alive.
    public func subscribe<M: Model>(
        fetchedResult: FetchedResult<M>, queue: DispatchQueue? = nil,
        changeHandler: @escaping @Sendable (FetchedResultChange<M>) -> Void
    ) -> ObservationToken {
        let tracker = FetchedResultTracker(request: fetchedResult.request, baseline: fetchedResult)
        return fetchedResult.request.query.subscribe(queue: queue) { event in
            if let change = tracker.change(for: event) { changeHandler(change) }
        }
    }

    /// A live typed query as a Combine publisher: `.initial`, then each `.updated` (Dflat's
    /// `publisher(for:).where(…)`). It finishes when the replica shuts down.
    ///
    /// ```swift
    /// try replica.publisher(for: Post.self).where(\.$priority > 100)
    ///     .sink { change in render(change.result) }.store(in: &cancellables)
    /// ```
    public func publisher<M: Model>(for type: M.Type) -> ModelQuery<M, AnyPublisher<FetchedResultChange<M>, Never>> {
        ModelQuery(access: access) { request in
            Deferred {
                let tracker = FetchedResultTracker<M>(request: request, baseline: nil)
                return request.query.publisher().compactMap { tracker.change(for: $0) }
            }.eraseToAnyPublisher()
        }
    }

    /// A live typed query following a result fetched before: changes are counted from it (no `.initial`).
    ///
    /// ```swift
    /// replica.publisher(for: posts).sink { change in … }
    /// ```
    public func publisher<M: Model>(for fetchedResult: FetchedResult<M>) -> AnyPublisher<FetchedResultChange<M>, Never> {
        let request = fetchedResult.request
        return Deferred {
            let tracker = FetchedResultTracker<M>(request: request, baseline: fetchedResult)
            return request.query.publisher().compactMap { tracker.change(for: $0) }
        }.eraseToAnyPublisher()
    }

    /// A live typed query as an `AsyncSequence`: `.initial`, then each `.updated`; it ends when the
    /// replica shuts down. A consumer that falls behind gets one change from what it holds to the newest.
    ///
    /// ```swift
    /// for await change in try replica.changes(for: Post.self).where(\.$priority > 100) {
    ///     render(change.result)
    /// }
    /// ```
    public func changes<M: Model>(for type: M.Type) -> ModelQuery<M, FetchedResultChanges<M>> {
        ModelQuery(access: access) { FetchedResultChanges(request: $0) }
    }

    /// Follows one object until it is deleted (Dflat's `subscribe(object:changeHandler:)`): `.updated`
    /// with its snapshot now and after each change, then `.deleted` once, the last call. Shutdown ends it
    /// without a call.
    ///
    /// ```swift
    /// let token = replica.subscribe(object: posts[0]) { update in
    ///     switch update {
    ///     case .updated(let post): render(post.title)
    ///     case .deleted: dismiss()
    ///     }
    /// }
    /// ```
    public func subscribe<M: Model>(
        object: ModelSnapshot<M>, queue: DispatchQueue? = nil,
        changeHandler: @escaping @Sendable (SubscribedObject<ModelSnapshot<M>>) -> Void
    ) -> ObservationToken {
        let node = object.node
        return node.subscribe(object: Value.self, queue: queue) { update in
            switch update {
            case .updated(let value): changeHandler(.updated(ModelSnapshot(node: node, value: value)))
            case .deleted: changeHandler(.deleted)
            }
        }
    }

    /// ``subscribe(object:queue:changeHandler:)`` for a live (or frozen) object: follows its node.
    ///
    /// - Throws: `WeftError` with code `invalidValue` for a detached object.
    public func subscribe<M: Model>(
        object: M, queue: DispatchQueue? = nil,
        changeHandler: @escaping @Sendable (SubscribedObject<ModelSnapshot<M>>) -> Void
    ) throws -> ObservationToken {
        guard let node = object.node else {
            throw WeftError(.invalidValue, "this \(M.self) is not stored: insert it before subscribing to it")
        }
        try access.checkOwns(node)
        return subscribe(object: ModelSnapshot<M>(node: node, value: .null), queue: queue, changeHandler: changeHandler)
    }
}

/// The changes of a live typed query as an `AsyncSequence` (see `Replica.changes(for:)`).
public struct FetchedResultChanges<M: Model>: AsyncSequence, Sendable {
    public typealias Element = FetchedResultChange<M>
    let request: ModelRequest

    public func makeAsyncIterator() -> Iterator {
        Iterator(events: request.query.results.makeAsyncIterator(), tracker: FetchedResultTracker(request: request, baseline: nil))
    }

    /// Takes the next change, waiting for one.
    public struct Iterator: AsyncIteratorProtocol {
        var events: QueryResults.Iterator
        let tracker: FetchedResultTracker<M>

        public mutating func next() async -> FetchedResultChange<M>? {
            while let event = await events.next() {
                if let change = tracker.change(for: event) { return change }
            }
            return nil
        }
    }
}
