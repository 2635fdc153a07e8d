import Foundation
import WeftCore
import WeftStore

// The lazy load: the tree, the base overrides and the log are read in slices on a background thread,
// letting reads of the file through between slices, then replayed into the merge engine.

extension Replica {
    /// What a load read from the store.
    struct Loaded {
        var base: Value
        var ops: [Op]
        var frontier: Stamp?
        var baseVector: VersionVector
        /// The touches of the ops folded into `base`, for the transaction rule.
        var compactedTouches: [CompactedTouch]
        var overridePaths: [Path]
        var ownSequenceMax: UInt64
        /// The tree as stored, when the load read it (no override covers the root).
        var tree: Value?
        var queryIndexes: [(StoredQueryIndex, [QueryIndexEntry])] = []
    }

    /// Starts the background load.
    func startLoading() {
        let thread = Thread { [self] in load() }
        thread.name = "weft.load"
        thread.start()
    }

    private func load() {
        var failure: WeftError?
        do {
            let read = try readStore()
            let functions = condition.withLock { (registry: registry(), known: registrations.count) }
            let engine = MergeEngine(
                registry: functions.registry, base: read.base, frontier: read.frontier, baseVector: read.baseVector,
                compactedTouches: read.compactedTouches, capturesChanges: false)
            engine.apply(read.ops)
            // This replica's own ops are written in sequence and committed in order, so the log holds
            // them without a gap. One missing or damaged there would leave every new write short of
            // durable for ever: the durable frontier cannot pass the gap.
            let ownThrough = engine.versionVector[replicaID]
            if read.ownSequenceMax > ownThrough {
                throw StoreError.corrupt(
                    path: path ?? "the store",
                    reason: "its log holds this replica's ops up to \(read.ownSequenceMax), but op \(ownThrough + 1) "
                        + "is missing or damaged")
            }
            engine.capturesChanges = true
            let stored = try storedTreeIfItMayDiffer(read)
            install(engine, loaded: read, registrationsKnown: functions.known, stored: stored)
        } catch {
            failure = WeftError.wrapping(error)
        }
        let waiters: [CheckedContinuation<Void, Never>] = condition.withLock {
            if let failure { phase = .failed(failure) }
            precondition(!{ if case .loading = phase { true } else { false } }(), "a load ends ready or failed")
            condition.broadcast()
            defer { loadWaiters = [] }
            return loadWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// The registry of every function known now. Call with `condition` held.
    func registry() -> FunctionRegistry {
        var registry = options.functions
        for registration in registrations {
            registry.register(name: registration.name, version: registration.version, registration.function)
        }
        return registry
    }

    /// Reads the tree, the overrides and the log, a slice at a time.
    private func readStore() throws -> Loaded {
        let overrides = try store.baseOverrides()
        var base: Value
        if let root = overrides.first(where: { $0.path.isRoot }) {
            // The base differs from the tree everywhere: the tree is not needed.
            base = root.value
        } else {
            var reader = TreeSliceReader()
            while !reader.isFinished {
                letWaitingReadersThrough()
                try store.readTreeSlice(&reader, rowsMax: WeftLimits.loadSliceRowsMax)
            }
            base = reader.tree
        }
        let tree = overrides.contains { $0.path.isRoot } ? nil : base
        if tree != nil { for override in overrides { base.write(override.value, at: override.path) } }
        var ops: [Op] = []
        var ownSequenceMax: UInt64 = 0
        var after: LogPosition?
        while true {
            letWaitingReadersThrough()
            let page = try store.ops(after: after, limit: StoreLimits.opsPerQueryMax)
            for stored in page {
                ops.append(stored.op)
                if stored.op.origin == replicaID { ownSequenceMax = max(ownSequenceMax, stored.op.sequence) }
            }
            guard page.count == StoreLimits.opsPerQueryMax, let last = page.last else { break }
            after = LogPosition(of: last.op)
        }
        let frontier = store.logMarks.frontier
        let baseVector = frontier == nil ? VersionVector() : (try store.peerVectors()[replicaID] ?? VersionVector())
        let touches = frontier == nil ? [] : try store.compactedTouches()
        return Loaded(
            base: base, ops: ops, frontier: frontier, baseVector: baseVector, compactedTouches: touches,
            overridePaths: overrides.map(\.path), ownSequenceMax: ownSequenceMax, tree: tree,
            queryIndexes: try readQueryIndexes())
    }

    /// The stored tree, when the loaded state may differ from it: a call that waited for a function
    /// when it was stored applies now that the options register it (or the reverse, for a function
    /// registered at run time only). Reads during the load came from the file, so subscribers started
    /// then hold the stored tree and must hear how the load changed it. Nil when the log holds no call.
    private func storedTreeIfItMayDiffer(_ read: Loaded) throws -> Value? {
        let holdsCall = read.ops.contains { if case .call = $0.kind { true } else { false } }
        guard holdsCall else { return nil }
        return try read.tree ?? store.readTree(at: .root)
    }

    /// Waits until as many reads of the file have ended as had begun now, so that a read waits one slice
    /// at most, and reads begun later wait for the next pause (a later read that ends first may let the
    /// load go on before an earlier one: that one then waits one more slice, never the whole load).
    private func letWaitingReadersThrough() {
        condition.lock()
        let begun = storeReadsBegun
        while storeReadsEnded < begun { condition.wait() }
        condition.unlock()
    }

    /// Makes the loaded engine the replica's, and learns the functions registered during the load.
    private func install(_ engine: MergeEngine, loaded: Loaded, registrationsKnown: Int, stored: Value?) {
        condition.lock()
        defer { condition.unlock() }
        for path in loaded.overridePaths { regions.insert(path) }
        instance.loaded(ownSequenceMax: loaded.ownSequenceMax, compactionVector: loaded.baseVector)
        committer.setDurable(engine.versionVector)
        self.engine = engine
        phase = .ready
        let indexWrites = queryIndexes.load(loaded.queryIndexes) { engine.value(at: $0) }
        if !indexWrites.isEmpty {
            var entry = CommitEntry(clockTime: clock.lastTime)
            entry.indexWrites = indexWrites
            committer.enqueue(entry)
        }
        if let stored, stored != engine.state {
            // The changes go to the file too, which then holds the loaded state.
            var report = ApplyReport()
            Self.differences(from: stored, to: engine.state, at: .root, into: &report.changes)
            record(report, records: [], isLocalPending: false, engine: engine)
        }
        for registration in registrations[registrationsKnown...] {
            let report = engine.register(
                name: registration.name, version: registration.version, registration.function)
            record(report, records: [], isLocalPending: false, engine: engine)
        }
    }

    /// The changes that turn `old` into `new`, at the deepest nodes where they differ (a node as deep
    /// as a path may go changes as a whole).
    static func differences(from old: Value, to new: Value, at path: Path, into changes: inout [Change]) {
        guard old != new else { return }
        guard case .object(let oldChildren) = old, case .object(let newChildren) = new,
            path.depth < CoreLimits.pathDepthMax
        else {
            changes.append(Change(path: path, old: old, new: new))
            return
        }
        for key in Set(oldChildren.keys).union(newChildren.keys) {
            guard let child = try? path.child(key) else {
                preconditionFailure("\(path) is below the depth limit, so its children are valid paths")
            }
            differences(from: oldChildren[key] ?? .null, to: newChildren[key] ?? .null, at: child, into: &changes)
        }
    }
}
