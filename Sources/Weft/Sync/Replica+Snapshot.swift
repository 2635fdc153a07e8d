import Foundation
import WeftCore
import WeftStore
import WeftSync

// Snapshots: a replica whose compaction folded ops a joining peer lacks sends that peer its compacted
// base instead of the ops; the peer installs it as its own base and keeps its ops above it.

/// What installing a snapshot did.
///
/// ```swift
/// let report = try replica.installSnapshot(snapshot)
/// print(report.opsFolded, report.opsKept, report.opsRestamped)
/// ```
public struct SnapshotInstallReport: Sendable, Hashable {
    /// Ops of this replica's log the snapshot already held (folded into the new base, dropped from the log).
    public var opsFolded: Int
    /// Ops kept in the log above the snapshot (replayed on the new base).
    public var opsKept: Int
    /// Own ops that were stamped at or below the sender's compaction stamp and were stamped again
    /// above it (see ``Replica/installSnapshot(_:)``).
    public var opsRestamped: Int
    /// False when the replica already held every op of the snapshot: nothing was installed.
    public var installed: Bool
}

extension Replica {
    /// The version vector of the ops folded into the compacted base: a peer missing any of them is
    /// sent a snapshot.
    var compactionVector: VersionVector { condition.withLock { instance.compactionVector } }

    /// The stamp the engine compacted up to (or installed a snapshot at).
    var compactionStamp: Stamp? {
        condition.lock()
        defer { condition.unlock() }
        waitForLoad()
        return engine?.frontier
    }

    /// How far ``compact(vacuum:)`` may go: sync sets it from the hubs' compaction stamps.
    func setCompactionCap(_ cap: CompactionCap) { condition.withLock { instance.setCompactionCap(cap) } }

    func addCompactionListener(_ listener: @escaping @Sendable (Stamp) -> Void) {
        condition.withLock { compactionListeners.append(listener) }
    }

    /// The compacted base with its frontiers and touches, as a session sends it.
    func syncSnapshot() throws -> SyncSnapshot {
        condition.lock()
        defer { condition.unlock() }
        let engine = try writableEngine()
        return SyncSnapshot(
            value: engine.base, frontier: instance.compactionVector, stampFrontier: engine.frontier,
            touches: engine.allCompactedTouches())
    }

    /// Installs a snapshot of another replica's compacted base: the state becomes the snapshot's value
    /// with this replica's ops outside it replayed on top, in stamp order.
    ///
    /// Ops the snapshot covers are folded (the sender folded the same ops). Ops outside it stay in the
    /// log, and flow back to the sender as usual. An op outside the snapshot stamped at or below the
    /// sender's compaction stamp cannot take its place in stamp order any more (the ops around it are
    /// folded): when it is one of this replica's own and no replica acknowledged it, this replica's ops
    /// from that one on are stamped again, in order, above the sender's stamp, keeping their sequences,
    /// as if written now (their receipts keep the stamp the write first got; their statuses follow the
    /// op under its sequence); otherwise the install is refused and nothing changes.
    ///
    /// ```swift
    /// let report = try replica.installSnapshot(snapshotFromHub)
    /// ```
    /// - Throws: `WeftError` with code `sync` when the snapshot cannot be installed (this replica
    ///   compacted ops the snapshot lacks, or holds ops of other replicas below the sender's stamp, or
    ///   own ones a replica acknowledged), `clockRefused` when the sender's stamp is beyond the drift
    ///   limit, `shutDown`, or the code of a failed commit.
    @discardableResult
    public func installSnapshot(_ snapshot: SyncSnapshot) throws -> SnapshotInstallReport {
        condition.lock()
        defer { condition.unlock() }
        let engine = try writableEngine()
        let nothing = SnapshotInstallReport(opsFolded: 0, opsKept: 0, opsRestamped: 0, installed: false)
        let wall = options.wallClockMillis()
        let install: CompactedBaseInstall?
        do {
            // The instance decides; its clock adopts the sender's stamp first (checking its drift): later
            // stamps, and those of ops stamped again, are above it.
            switch try instance.snapshotInstall(snapshot, wallMillis: wall, log: engine) {
            case .holdsEverything:
                return nothing
            case .lacksStampFrontier:
                throw WeftError(
                    .sync, "a snapshot of \(snapshot.frontier) came without the stamp its sender compacted up to")
            case .install(let base):
                install = try engine.installing(
                    base, local: replicaID, localBaseVector: instance.compactionVector,
                    acknowledgedThrough: instance.acknowledgedThrough
                ) { try instance.nextStamp(wallMillis: wall) }
            }
        } catch let error as WeftError {
            throw error
        } catch {
            throw WeftError.wrapping(error)
        }
        guard let install else { return nothing }
        commitInstall(of: snapshot, into: install.engine, replacing: engine, restamped: !install.restamped.isEmpty)
        if !install.restamped.isEmpty {
            // Ops stamped again leave this replica only once the batch that stores them is durable: a
            // crash before it would reopen the old stamps, which a peer would then hold twice over.
            // Sessions read ops under the lock held here, so none reads the new stamps before then.
            do {
                try committer.waitUntilIdle()
            } catch {
                throw WeftError.wrapping(error)
            }
        }
        return SnapshotInstallReport(
            opsFolded: install.folded, opsKept: install.kept, opsRestamped: install.restamped.count, installed: true)
    }

    /// Makes `installed` the replica's engine, tells the listeners what changed, and queues the commit
    /// that replaces the stored tree, base and frontier. Call with `condition` held.
    private func commitInstall(
        of snapshot: SyncSnapshot, into installed: MergeEngine, replacing engine: MergeEngine, restamped: Bool
    ) {
        var outcomes: [Stamp: Outcome] = [:]
        var statusChanges: [StoreBatch.StatusChange] = []
        var records: [OpRecord] = []
        for op in installed.ops(from: replicaID, after: snapshot.frontier[replicaID], limit: .max) {
            let outcome = installed.outcome(of: op.stamp) ?? .applied
            if restamped, engine.op(for: op.stamp) == nil {
                // Stamped again: the store replaces the op under its sequence.
                if case .rejected = outcome {
                    records.append(OpRecord(op, status: .rejected))
                } else {
                    records.append(OpRecord(op, status: .durable))
                }
            }
            if engine.outcome(of: op.stamp) != outcome { outcomes[op.stamp] = outcome }
        }
        let old = engine.state
        let new = installed.state
        let change = old == new ? [] : [Change(path: .root, old: old, new: new)]
        var report = ApplyReport()
        report.changes = change
        report.outcomes = outcomes
        reviseOutcomes(report, records: [], into: &statusChanges, installed)

        var entry = CommitEntry(clockTime: clock.lastTime)
        entry.replacedOps = records
        entry.treeWrites = [StoreBatch.TreeWrite(path: .root, value: new)]
        entry.baseWrites = new == installed.base ? [.releaseAll] : [.releaseAll, .set(.root, installed.base)]
        entry.frontier = installed.frontier
        entry.compactedTouches = snapshot.touches
        entry.peerVectors = [replicaID: snapshot.frontier]
        entry.statusChanges = statusChanges
        entry.durableVector = snapshot.frontier
        entry.indexWrites = queryIndexes.follow(change) { installed.value(at: $0) }
        committer.enqueue(entry)

        regions.removeAll()
        if new != installed.base { regions.insert(.root) }
        instance.installed(snapshot.frontier)
        self.engine = installed
        if !change.isEmpty || !outcomes.isEmpty {
            notifier.post(ChangeBatch(changes: change, isLocalPending: false, outcomes: outcomes))
        }
    }
}
