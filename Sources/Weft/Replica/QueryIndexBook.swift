import WeftCore
import WeftStore

/// The query indexes of a replica, kept in step with its state on the write road: every report the merge
/// engine makes (local writes, remote ops, batches, re-folds) and every state it is replaced by (a snapshot
/// installed) goes through ``follow(_:state:)``, under the replica's lock, and the index rows it returns
/// join the same commit entry as the tree writes, so the file's indexes always match the file's tree.
///
/// Not thread-safe: the replica's `condition` guards it.
struct QueryIndexBook: Sendable {
    /// An index in step with the state, with its id in the store.
    struct Held: Sendable {
        let id: Int64
        var index: QueryIndex
    }

    /// An index being built outside the lock from a snapshot of its collection: the children changed
    /// since, caught up when it is installed.
    struct Building: Sendable {
        let collection: Path
        let field: QueryField
        var touched: Set<Key> = []
        var wholesale = false
    }

    private(set) var held: [Held] = []
    private var building: [Building] = []
    private var nextID: Int64 = 1
    /// Indexes the last load found out of step with the state and built again (tests expect none).
    private(set) var rebuilt = 0

    /// True when an index of `collection` by `field` exists or is being built.
    func has(collection: Path, field: QueryField) -> Bool {
        held.contains { $0.index.collection == collection && $0.index.field == field }
            || building.contains { $0.collection == collection && $0.field == field }
    }

    /// The sorted entries of the indexes of `collection`, for a reader (copies share the chunks).
    func entries(of collection: Path) -> [QueryIndexEntries] {
        held.compactMap { $0.index.collection == collection ? $0.index.entries : nil }
    }

    /// The entries of every index, by collection.
    var allEntries: [Path: [QueryIndexEntries]] {
        var result: [Path: [QueryIndexEntries]] = [:]
        for held in held { result[held.index.collection, default: []].append(held.index.entries) }
        return result
    }

    // MARK: - Loading

    /// Takes the indexes a store held, checking each against the state: entries out of order, or a count
    /// that is not the collection's, rebuild the index (and the returned writes replace it in the store).
    mutating func load(
        _ stored: [(StoredQueryIndex, [QueryIndexEntry])], state: (Path) -> Value
    ) -> [StoreBatch.IndexWrite] {
        var writes: [StoreBatch.IndexWrite] = []
        for (definition, entries) in stored {
            nextID = max(nextID, definition.id + 1)
            let node = state(definition.collection)
            if let index = QueryIndex(collection: definition.collection, field: definition.field, sorted: entries),
                index.count == node.children.count
            {
                held.append(Held(id: definition.id, index: index))
                continue
            }
            writes.append(.drop(id: definition.id))
            rebuilt += 1
            let index = QueryIndex.build(collection: definition.collection, field: definition.field, node: node)
            writes += install(index)
        }
        return writes
    }

    // MARK: - Defining

    /// Starts building an index: changes to its collection are noted until ``finishBuilding(_:state:)``.
    mutating func beginBuilding(collection: Path, field: QueryField) {
        precondition(!has(collection: collection, field: field), "an index is defined once")
        building.append(Building(collection: collection, field: field))
    }

    /// Installs an index built from a snapshot, brought up to date with the children changed since.
    /// - Returns: the store writes that define it and write its entries.
    mutating func finishBuilding(_ built: QueryIndex, state: (Path) -> Value) -> [StoreBatch.IndexWrite] {
        guard let position = building.firstIndex(where: { $0.collection == built.collection && $0.field == built.field })
        else { preconditionFailure("an index finishes the build it began") }
        let noted = building.remove(at: position)
        var index = built
        let node = state(index.collection)
        let keys = noted.wholesale ? Set(index.keys).union(node.children.keys) : noted.touched
        for key in keys { index.update(key: key, child: node[key]) }
        return install(index)
    }

    /// Forgets a build that will not finish.
    mutating func abandonBuilding(collection: Path, field: QueryField) {
        building.removeAll { $0.collection == collection && $0.field == field }
    }

    private mutating func install(_ index: QueryIndex) -> [StoreBatch.IndexWrite] {
        let id = nextID
        nextID += 1
        held.append(Held(id: id, index: index))
        var writes: [StoreBatch.IndexWrite] = [
            .define(StoredQueryIndex(id: id, collection: index.collection, field: index.field))
        ]
        writes.reserveCapacity(index.count + 1)
        for entry in index.entries.all { writes.append(.insert(id: id, entry: entry)) }
        return writes
    }

    // MARK: - Following the state

    /// Brings every index up to date with `changes`, which the state (`state` reads it) now reflects.
    /// - Returns: the store writes that do the same to the stored indexes.
    mutating func follow(_ changes: [Change], state: (Path) -> Value) -> [StoreBatch.IndexWrite] {
        guard !changes.isEmpty, !held.isEmpty || !building.isEmpty else { return [] }
        for position in building.indices {
            Self.touches(changes, collection: building[position].collection) { key in
                if let key { building[position].touched.insert(key) } else { building[position].wholesale = true }
            }
        }
        var writes: [StoreBatch.IndexWrite] = []
        for position in held.indices {
            let collection = held[position].index.collection
            var touched: Set<Key> = []
            var wholesale = false
            Self.touches(changes, collection: collection) { key in
                if let key { touched.insert(key) } else { wholesale = true }
            }
            guard wholesale || !touched.isEmpty else { continue }
            let node = state(collection)
            let id = held[position].id
            let keys = wholesale ? Set(held[position].index.keys).union(node.children.keys) : touched
            for key in keys {
                let (removed, inserted) = held[position].index.update(key: key, child: node[key])
                if let removed { writes.append(.delete(id: id, entry: removed)) }
                if let inserted { writes.append(.insert(id: id, entry: inserted)) }
            }
        }
        return writes
    }

    /// Calls `body` with the key of each child of `collection` a change is at or below, and with nil for a
    /// change at or above the collection (every child may have changed).
    private static func touches(_ changes: [Change], collection: Path, _ body: (Key?) -> Void) {
        let depth = collection.depth
        for change in changes {
            if change.path.depth <= depth {
                if change.path.isAncestorOrSelf(of: collection) { body(nil) }
            } else if collection.isAncestorOrSelf(of: change.path) {
                body(change.path.keys[depth])
            }
        }
    }
}
