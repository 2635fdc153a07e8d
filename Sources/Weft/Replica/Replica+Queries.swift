import Foundation
import WeftCore
import WeftStore

/// What queries read: the state and the entries of the indexes, taken together under the replica's lock
/// (both copy on write, so taking them costs a few reference counts) and read outside it, so a query never
/// holds writers back, however many children it scans.
struct QueryView: Sendable {
    let tree: Value
    let indexes: [Path: [QueryIndexEntries]]

    /// The query's result and road over this view.
    func run(_ query: Query) -> QueryRun {
        query.run(on: tree.value(at: query.path), indexes: indexes[query.path] ?? [])
    }
}

extension ReplicaBackend {
    /// A view without indexes, for backends that keep none.
    func queryView() -> QueryView { QueryView(tree: snapshot(), indexes: [:]) }
}

extension Replica {
    /// Defines an index of the children of `collection` by the value at `field` below each, so that
    /// queries ordered by that field (or whose first predicate reads it) read only what they return.
    /// Children already there are indexed first (`progress` hears how many of how many, from this
    /// thread); the index is then kept in step with every write and stored in the file, so a reopened
    /// replica finds it ready. Defining an index that exists does nothing.
    ///
    /// ```swift
    /// try replica.defineIndex(on: "/posts", orderedBy: "meta/score")
    /// let top = try replica.root.relativeNode(for: "posts")!.orderedByChild("meta/score").limit(toLast: 20)
    /// try top.explain()   // index range on meta/score: read 20 entries
    /// ```
    /// Writers are held back only while the build is caught up with the writes made during it, not while
    /// it sorts. Waits for the replica's load.
    /// - Throws: `WeftError` with code `invalidPath` or `invalidQuery` (a field no key may hold),
    ///   `shutDown`, or the load's failure.
    public func defineIndex(
        on collection: String, orderedBy field: String, progress: ((_ done: Int, _ total: Int) -> Void)? = nil
    ) throws {
        let path: Path
        let checked: QueryField
        do {
            path = try Path(collection)
            guard case .child(let valid) = try Query(path: path).orderedByChild(QueryField(field)).ordering else {
                preconditionFailure("a query ordered by a child has that ordering")
            }
            checked = valid
        } catch let error as QueryError {
            throw WeftError(error, path: collection)
        } catch {
            throw WeftError.from(error)
        }
        let snapshot: Value? = try condition.withLock {
            waitForLoad()
            if case .failed(let failure) = phase { throw failure }
            guard !isShuttingDown else { throw WeftError.replicaShutDown }
            guard let engine else { preconditionFailure("a loaded replica has an engine") }
            guard !queryIndexes.has(collection: path, field: checked) else { return nil }
            queryIndexes.beginBuilding(collection: path, field: checked)
            return engine.value(at: path)
        }
        guard let snapshot else { return }
        let built = QueryIndex.build(collection: path, field: checked, node: snapshot, progress: progress)
        try condition.withLock {
            guard let engine, !isShuttingDown else {
                queryIndexes.abandonBuilding(collection: path, field: checked)
                throw WeftError.replicaShutDown
            }
            var entry = CommitEntry(clockTime: clock.lastTime)
            entry.indexWrites = queryIndexes.finishBuilding(built) { engine.value(at: $0) }
            committer.enqueue(entry)
        }
    }

    /// The indexes defined on this replica: each collection with the fields its children are indexed by.
    ///
    /// ```swift
    /// replica.indexes   // ["/posts": ["meta/score"]]
    /// ```
    public var indexes: [String: [String]] {
        condition.withLock {
            var result: [String: [String]] = [:]
            for held in queryIndexes.held {
                result[held.index.collection.description, default: []].append(held.index.field.description)
            }
            return result
        }
    }

    /// The state and the index entries, for queries (waits for the load).
    func queryView() -> QueryView {
        condition.withLock {
            waitForLoad()
            return QueryView(tree: engine?.state ?? .null, indexes: queryIndexes.allEntries)
        }
    }

    /// The indexes the store held, read during the load.
    func readQueryIndexes() throws -> [(StoredQueryIndex, [QueryIndexEntry])] {
        try store.queryIndexes().map { ($0, try store.queryIndexEntries(of: $0.id)) }
    }
}
