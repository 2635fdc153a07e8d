import Foundation
import WeftCore
import WeftStore

/// The disk seam backed by WeftStore, unchanged: a ``MemoryStore`` (whose disk model loses the
/// commits not synced when it crashes) or a ``SQLiteStore`` in a temporary folder.
///
/// Each commit is one ``StoreBatch``: the new ops (ours with status durable), the tree writes of
/// the engine's change report, and the clock. Nothing is compacted in the store (the replica
/// compacts its engine only), so no base is preserved.
final class StoreDisk: ReplicaDisk {
    private var store: (any Store)?
    private let replica: ReplicaID
    /// The database file of a SQLite store; nil for a memory store.
    private let path: String?
    private let options: StoreOptions

    /// A memory store that syncs each commit (`.full`) or only when asked (`.normal`).
    init(memoryFor replica: ReplicaID, durability: Durability, name: String) {
        self.replica = replica
        path = nil
        options = StoreOptions(durability: durability, replicaForNewDatabase: replica)
        store = MemoryStore(replica: replica, durability: durability, name: name)
    }

    /// A SQLite store at `path`, syncing each commit (a file cannot lose what SQLite committed
    /// when only the process dies, which is the crash the simulator can cause to a real file).
    /// - Throws: ``StoreError``.
    init(sqliteAt path: String, replica: ReplicaID) throws {
        self.replica = replica
        self.path = path
        options = StoreOptions(durability: .full, replicaForNewDatabase: replica)
        store = try SQLiteStore(path: path, options: options)
    }

    var storesTree: Bool { true }

    private func open() throws -> any Store {
        guard let store else { throw StoreError.closed(path: path ?? "memory") }
        return store
    }

    func commit(_ ops: [Op], encodings: [ArraySlice<UInt8>]?, changes: [Change], clockTime: UInt64) throws {
        var batch = StoreBatch()
        batch.ops = ops.indices.map { position in
            let op = ops[position]
            let status: OpStatus? = op.origin == replica ? .durable : nil
            guard let encodings else { return OpRecord(op, status: status) }
            return OpRecord(op, encoded: encodings[position], status: status)
        }
        batch.treeWrites = changes.map { StoreBatch.TreeWrite(path: $0.path, value: $0.new) }
        batch.clockTime = clockTime
        try open().commit(batch)
    }

    func sync() throws {
        // A SQLite store in `.full` has synced every commit already.
        if path == nil { try open().checkpoint() }
    }

    var unsyncedCommitCount: Int { (store as? MemoryStore)?.unsyncedCommitCount ?? 0 }

    func crash(keepingUnsyncedCommits kept: Int) -> Int {
        if let memory = store as? MemoryStore { return memory.crash(keepingUnsyncedCommits: kept) }
        // The process dies: the file keeps every commit; the next start opens it again.
        try? store?.close()
        store = nil
        return 0
    }

    func recover() throws -> RecoveredLog {
        if let path, store == nil { store = try SQLiteStore(path: path, options: options) }
        let store = try open()
        try store.requireOriginal()
        guard store.identity.replica == replica else {
            throw StoreError.foreignDatabase(
                path: path ?? "memory", reason: "it belongs to replica \(store.identity.replica), not \(replica)")
        }
        let ops = try store.allOps().map(\.op)
        return RecoveredLog(ops: ops, clockTime: store.identity.clockTime, tree: try store.readTree())
    }

    func close() {
        try? store?.close()
        store = nil
    }
}
