import WeftCore
import WeftSync

// Waiting for sync: until the group caught up (Realm's `SyncSession.wait(for:)`, Firestore's
// `waitForPendingWrites`), and until a dialled peer is connected (or refused this replica's token).

extension Replica {
    /// Waits until this replica and the peers it is connected to hold the same ops: every write made here
    /// before the call is durable and acknowledged, and every connected peer holds every op this replica
    /// holds, and this replica every op the peer holds. At least one peer must be connected.
    ///
    /// ```swift
    /// try await replica.connect(to: "127.0.0.1:7700", token: secret, waitUntilConnected: .seconds(5))
    /// try await replica.root.child("order").set(order)
    /// try await replica.waitUntilSynced(timeout: .seconds(10))
    /// ```
    ///
    /// - Parameter timeout: how long to wait.
    /// - Throws: `WeftError` with code `timeout` when the replica is not synced in time (no peer
    ///   connected, or one that lags), `sync` when it neither listens nor connects, `shutDown`.
    public func waitUntilSynced(timeout: Duration) async throws(WeftError) {
        guard !isShutDown else { throw WeftError(.shutDown, "the replica is shut down") }
        guard let driver = syncLink.currentDriver else {
            throw WeftError(.sync, "this replica does not sync: call listen(on:token:) or connect(to:token:) first")
        }
        let ownThrough = versionVector[replicaID]
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            if try await driver.isSynced(ownThrough: ownThrough) { return }
            guard !isShutDown else { throw WeftError(.shutDown, "the replica shut down while waiting for sync") }
            guard ContinuousClock.now < deadline else {
                let status = syncStatus
                throw WeftError(
                    .timeout,
                    "not synced within \(timeout): \(status.connectedCount) of \(status.peers.count) peers connected, "
                        + "activity \(status.activity.rawValue)")
            }
            try? await Task.sleep(for: .milliseconds(WeftLimits.syncWaitPollMilliseconds))
        }
    }

    /// Connects to a peer or a hub as ``connect(to:token:)`` does, and waits until the session is up.
    ///
    /// A peer that refuses the token (or whose proof this replica refuses) ends the wait at once with the
    /// reason, and is no longer dialled, so that a later call may try another token. When the time runs
    /// out first, the peer is still dialled, with backoff, and ``syncStatus`` follows it.
    ///
    /// ```swift
    /// do {
    ///     try await replica.connect(to: "10.0.0.2:7700", token: secret, waitUntilConnected: .seconds(5))
    /// } catch let error as WeftError where error.code == .authentication {
    ///     print("wrong token:", error.message)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - address: `HOST:PORT`, the host numeric or a name.
    ///   - token: the secret shared with the replica at that address.
    ///   - timeout: how long to wait for the session.
    /// - Throws: `WeftError` with code `authentication` (the peer and this replica do not share the token,
    ///   or the peer refused this replica), `timeout` when not connected in time (the last error says why),
    ///   and the errors of ``connect(to:token:)``.
    public func connect(to address: String, token: String, waitUntilConnected timeout: Duration)
        async throws(WeftError)
    {
        try await connect(to: address, token: token)
        guard let driver = syncLink.currentDriver else { throw WeftError(.shutDown, "the replica is shut down") }
        let (host, port) = try _SyncAddress.parse(address, ports: 1...65_535)
        let dialled = SocketAddressText.describe(host: host, port: port)
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            guard let status = try await driver.outboundStatus(address: dialled) else {
                throw WeftError(.shutDown, "sync stopped while connecting to \(address)")
            }
            if status.isConnected { return }
            if let code = status.lastErrorCode, code == .authenticationFailed || code == .permissionDenied {
                try await driver.removePeer(address: dialled)
                throw WeftError(
                    .authentication, "\(address) refused the connection: \(status.lastError ?? "\(code)")")
            }
            guard ContinuousClock.now < deadline else {
                throw WeftError(
                    .timeout,
                    "not connected to \(address) within \(timeout)"
                        + (status.lastError.map { "; last error: \($0)" } ?? "; still dialling"))
            }
            try? await Task.sleep(for: .milliseconds(WeftLimits.syncWaitPollMilliseconds))
        }
    }
}
