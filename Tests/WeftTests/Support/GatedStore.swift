import Foundation
import WeftCore
import WeftStore

/// A gate that threads wait at until it opens.
final class Gate: @unchecked Sendable {
    private let condition = NSCondition()
    private var isOpen: Bool

    init(open: Bool) { isOpen = open }

    func open() {
        condition.lock()
        isOpen = true
        condition.broadcast()
        condition.unlock()
    }

    func close() { condition.withLock { isOpen = false } }

    func pass() {
        condition.lock()
        while !isOpen { condition.wait() }
        condition.unlock()
    }
}

/// A store that forwards to another, where commits, and the reads of a load (slices of the tree, pages
/// of the log), wait at gates: a test holds a commit or a load in the middle to observe what the replica
/// does meanwhile.
final class GatedStore: Store, @unchecked Sendable {
    let inner: any Store
    let commitGate = Gate(open: true)
    let loadGate = Gate(open: true)
    private let lock = NSLock()
    private var commitsStarted = 0

    init(_ inner: any Store) { self.inner = inner }

    /// The error every vacuum throws, when set (a disk that filled up).
    var vacuumFailure: StoreError? {
        get { lock.withLock { storedVacuumFailure } }
        set { lock.withLock { storedVacuumFailure = newValue } }
    }
    private var storedVacuumFailure: StoreError?

    /// Commits that reached the store (passed the gate or waiting at it).
    var commitsReached: Int { lock.withLock { commitsStarted } }

    var durability: Durability { inner.durability }
    var identity: StoreIdentity { inner.identity }
    var logMarks: LogMarks { inner.logMarks }

    func commit(_ batch: StoreBatch) throws {
        lock.withLock { commitsStarted += 1 }
        commitGate.pass()
        try inner.commit(batch)
    }

    func readTreeSlice(_ reader: inout TreeSliceReader, rowsMax: Int) throws {
        loadGate.pass()
        try inner.readTreeSlice(&reader, rowsMax: rowsMax)
    }

    func ops(from origin: ReplicaID, after sequence: UInt64, limit: Int) throws -> [StoredOp] {
        try inner.ops(from: origin, after: sequence, limit: limit)
    }
    func ops(after position: LogPosition?, limit: Int) throws -> [StoredOp] {
        loadGate.pass()
        return try inner.ops(after: position, limit: limit)
    }
    func allOps() throws -> [StoredOp] { try inner.allOps() }
    func op(_ stamp: Stamp) throws -> StoredOp? { try inner.op(stamp) }
    func opCount() throws -> Int { try inner.opCount() }
    func readTree(at path: Path) throws -> Value { try inner.readTree(at: path) }
    func treeLeafCount() throws -> Int { try inner.treeLeafCount() }
    func readBase(at path: Path) throws -> Value { try inner.readBase(at: path) }
    func baseOverrides() throws -> [BaseOverride] { try inner.baseOverrides() }
    func peerVectors() throws -> [ReplicaID: VersionVector] { try inner.peerVectors() }
    func members() throws -> [ReplicaID] { try inner.members() }
    func compactedTouches() throws -> [CompactedTouch] { try inner.compactedTouches() }
    func queryIndexes() throws -> [StoredQueryIndex] { try inner.queryIndexes() }
    func queryIndexEntries(of id: Int64) throws -> [QueryIndexEntry] { try inner.queryIndexEntries(of: id) }
    func requireOriginal() throws { try inner.requireOriginal() }
    func reidentify(newID: ReplicaID) throws { try inner.reidentify(newID: newID) }
    func checkpoint() throws { try inner.checkpoint() }
    func vacuum() throws {
        if let failure = vacuumFailure { throw failure }
        try inner.vacuum()
    }
    func bytesOnDisk() throws -> Int { try inner.bytesOnDisk() }
    func close() throws { try inner.close() }
}
