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

    var acknowledgedOwnThrough: UInt64 { condition.withLock { instance.acknowledgedThrough } }

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
        // The group committer's own signal: each move of the durable frontier, the moment it moves. (It
        // went through the app's change events before, then a flush: a merged op that changed no value,
        // a rejected transaction, waited for the next keep-alive to be acked.)
        committer.addDurableListener(listener)
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
