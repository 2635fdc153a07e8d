import Foundation
import WeftCore
import WeftStore
import WeftSync

// Compaction: the ops up to the stable frontier are folded into the base, in memory and in the file,
// and dropped from the log.

/// What a compaction did.
///
/// ```swift
/// let report = try await replica.compact()
/// print(report.opsFolded, report.bytesBefore, "→", report.bytesAfter)
/// ```
public struct CompactionReport: Sendable, Hashable {
    /// Ops folded into the base and dropped from the log.
    public var opsFolded: Int
    /// The frontier the log now starts after; nil when nothing was stable.
    public var frontier: Stamp?
    /// Bytes on disk before and after (write-ahead log included).
    public var bytesBefore: Int
    public var bytesAfter: Int
}

extension Replica {
    /// Folds every op up to the frontier given to ``markStable(through:)`` into the compacted base and
    /// drops them from the log. The state and its digest do not change. With `vacuum`, the file is then
    /// rebuilt without its free pages, so it shrinks (this holds the committer for as long as the file
    /// takes to copy).
    ///
    /// ```swift
    /// replica.markStable(through: frontier)
    /// let report = try await replica.compact()
    /// ```
    /// - Throws: `WeftError` with code `shutDown`, or the code of a failed commit or vacuum (a vacuum runs
    ///   after the compaction's commit: its error says the compaction stands).
    @discardableResult
    public func compact(vacuum: Bool = true) async throws -> CompactionReport {
        try await flush()
        let bytesBefore = try bytesOnDisk()
        let (folded, frontier) = try queueCompaction(vacuum: vacuum)
        try await flush()
        let maintenanceFailure = committer.takeMaintenanceFailure()
        if folded > 0, let frontier {
            for listener in condition.withLock({ compactionListeners }) { listener(frontier) }
        }
        if let failure = maintenanceFailure {
            // The store's message says nothing was written, which holds for the vacuum alone.
            throw WeftError(
                failure.code,
                "the compaction folded \(folded) op\(folded == 1 ? "" : "s") and was committed; the vacuum after it "
                    + "failed, so the file keeps its free pages (compact again once that is fixed): \(failure.message)",
                path: failure.path)
        }
        return CompactionReport(
            opsFolded: folded, frontier: frontier, bytesBefore: bytesBefore, bytesAfter: try bytesOnDisk())
    }

    /// How many ops ``compact(vacuum:)`` would fold now: those in the log at or below the stable
    /// frontier (and before any call waiting for a function). A daemon compacts once it passes a bound.
    ///
    /// ```swift
    /// if replica.compactableOpCount() >= 50_000 { try await replica.compact(vacuum: false) }
    /// ```
    public func compactableOpCount() -> Int {
        condition.lock()
        defer { condition.unlock() }
        guard case .ready = phase, let engine, let frontier = instance.compactionFrontier(log: engine) else { return 0 }
        var count = 0
        engine.forEachLoggedOp(through: frontier) { _ in count += 1 }
        return count
    }

    /// Compacts the engine and queues the compaction's commit, alone: it reads the store's overrides,
    /// so nothing may be queued or committing, and nothing else is queued while the lock is held.
    private func queueCompaction(vacuum: Bool) throws -> (folded: Int, frontier: Stamp?) {
        condition.lock()
        defer { condition.unlock() }
        let engine = try writableEngine()
        // The instance decides how far (see `ReplicaInstance.compactionFrontier(log:)`).
        guard let frontier = instance.compactionFrontier(log: engine) else { return (0, engine.frontier) }
        try committer.waitUntilIdle()
        let overrides: [BaseOverride]
        do {
            overrides = try store.baseOverrides()
        } catch {
            throw WeftError.wrapping(error)
        }
        instance.compacting(upTo: frontier, log: engine)
        let folded = engine.compact(upTo: frontier)
        var entry = CommitEntry(clockTime: clock.lastTime)
        entry.frontier = frontier
        // Committed with the frontier, atomically: a store holding the new base without the touches of
        // the ops folded into it would decide later transactions differently after a reopen.
        entry.compactedTouches = engine.lastCompactionTouches
        entry.baseWrites = baseWrites(for: overrides, engine: engine)
        entry.peerVectors = [replicaID: instance.compactionVector]
        let stableThrough = instance.stableThrough
        entry.statusChanges = stableThrough > 0 ? [.stableThrough(sequence: stableThrough)] : []
        entry.maintenance = vacuum ? .vacuum : .checkpoint
        committer.enqueue(entry)
        return (folded, frontier)
    }

    /// The base writes that bring the store's overrides to the engine's new base, and the regions they
    /// leave. An override whose base now equals the state is released (the tree is the base there); a
    /// large one is split into its children, so that later compactions rewrite small values.
    private func baseWrites(for overrides: [BaseOverride], engine: MergeEngine) -> [StoreBatch.BaseWrite] {
        regions.removeAll()
        guard engine.opCount > 0 else { return overrides.isEmpty ? [] : [.releaseAll] }
        var writes: [StoreBatch.BaseWrite] = []
        for override in overrides {
            let base = engine.base.value(at: override.path)
            let state = engine.state.value(at: override.path)
            if base == state {
                writes.append(.release(override.path))
                continue
            }
            let large = base.nodeCount(atMost: WeftLimits.preservedRegionNodesMax) > WeftLimits.preservedRegionNodesMax
            guard large, case .object(let baseChildren) = base, case .object(let stateChildren) = state else {
                writes.append(.set(override.path, base))
                regions.insert(override.path)
                continue
            }
            writes.append(.release(override.path))
            for key in Set(baseChildren.keys).union(stateChildren.keys) where baseChildren[key] != stateChildren[key] {
                // Stored keys are valid, and an object's children are within the depth limit.
                guard let child = try? override.path.child(key) else {
                    preconditionFailure("\(override.path) holds an object, so its children are valid paths")
                }
                writes.append(.set(child, baseChildren[key] ?? .null))
                regions.insert(child)
            }
        }
        return writes
    }
}
