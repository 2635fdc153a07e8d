import Foundation
import Logging
import WeftCore
import WeftSync

// MARK: - SyncTarget

/// A replica serves sessions what it made durable: its own ops leave the machine only once in the
/// database file, and acks cover only durable ops, so a crash never loses an op a peer counts as held.
extension Replica: SyncTarget {
    var logStatus: SyncLogStatus {
        SyncLogStatus(
            opsKnown: versionVector.total, opsInLog: logOpCount, bytesOnDisk: path == nil ? nil : try? bytesOnDisk())
    }

    var acknowledgedOwnThrough: UInt64 { condition.withLock { acknowledgedThrough } }

    var persistedMembers: [ReplicaID] {
        do {
            return try store.members()
        } catch {
            // Membership is relearned as peers connect; stability then waits for them, never less.
            return []
        }
    }

    func persistMembers(_ members: [ReplicaID]) {
        condition.lock()
        defer { condition.unlock() }
        guard !isShuttingDown else { return }
        var entry = CommitEntry(clockTime: clock.lastTime)
        entry.members = members.sorted()
        committer.enqueue(entry)
    }

    func addOpsAppendedListener(_ listener: @escaping @Sendable () -> Void) -> ChangeListenerToken {
        let waiter = _DurableWaiter(replica: self, listener: listener)
        return addChangeListener { _ in waiter.changed() }
    }
}

/// Calls a listener once the changes seen so far are durable: one flush in flight at a time, and changes
/// made during a flush make it go round once more.
final class _DurableWaiter: @unchecked Sendable {
    private let lock = NSLock()
    private weak var replica: Replica?
    private let listener: @Sendable () -> Void
    private var flushing = false
    private var dirty = false

    init(replica: Replica, listener: @escaping @Sendable () -> Void) {
        self.replica = replica
        self.listener = listener
    }

    func changed() {
        let start = lock.withLock { () -> Bool in
            dirty = true
            guard !flushing else { return false }
            flushing = true
            return true
        }
        guard start else { return }
        Task { await self.flushLoop() }
    }

    private func flushLoop() async {
        while lock.withLock({ () -> Bool in
            guard dirty else {
                flushing = false
                return false
            }
            dirty = false
            return true
        }) {
            guard let replica, !replica.isShutDown else {
                lock.withLock { flushing = false }
                return
            }
            try? await replica.flush()
            listener()
        }
    }
}

// MARK: - Serving a replica

extension SyncDriver {
    /// A driver that replicates `replica` with peers and serves its values to daemon clients.
    ///
    /// ```swift
    /// let replica = try Replica.open(at: "weft-data/weft.sqlite")
    /// var configuration = SyncConfiguration(replica: replica.replicaID, role: .hub, name: "weft", tokens: book)
    /// let driver = try SyncDriver(replica: replica, configuration: configuration)
    /// try await driver.listen(on: "127.0.0.1", port: 7700)
    /// ```
    ///
    /// - Parameters:
    ///   - replica: the local replica; its id must be `configuration.replica`.
    ///   - configuration: role (`.peer` or `.hub`), name, tokens and pacing.
    ///   - logger: where connections, handshakes and errors are logged.
    /// - Throws: `WeftError` with code `sync` for a configuration that does not fit the replica.
    public convenience init(replica: Replica, configuration: SyncConfiguration, logger: Logger)
        throws(WeftError)
    {
        guard configuration.replica == replica.replicaID else {
            throw WeftError(
                .sync,
                "the configuration speaks for \(configuration.replica), the replica is \(replica.replicaID)"
            )
        }
        try self.init(target: replica, configuration: configuration, clients: replica, logger: logger)
    }
}
