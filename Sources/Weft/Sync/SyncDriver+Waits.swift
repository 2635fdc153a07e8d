import WeftCore
import WeftSync

// MARK: - Waits

// What the embedded sync waits read from the loop: whether the group caught up, and a dialled peer's
// connection state; and the removal of a dialled peer whose token was refused.
extension SyncDriver {
    /// True when at least one replicating peer is connected, every connected one holds what this
    /// replica holds durably and nothing more, and this replica's own ops through `ownThrough` are
    /// durable and acknowledged.
    func isSynced(ownThrough: UInt64) async throws(WeftError) -> Bool {
        try await onLoop { () throws(WeftError) -> Bool in
            let held = self.target.durableVersionVector
            guard held[self.configuration.replica] >= ownThrough, self.target.acknowledgedOwnThrough >= ownThrough
            else { return false }
            var connected = 0
            for channel in self.channels.values where !channel.isClosed && channel.status.isConnected {
                guard channel.status.role != .client, channel.session.peerCountsForStability else { continue }
                guard let acknowledged = channel.session.peerAcknowledged else { return false }
                // The peer holds all this replica holds, and this replica all the peer acknowledged holding.
                guard acknowledged.covers(held), held.covers(acknowledged) else { return false }
                connected += 1
            }
            return connected > 0
        }
    }

    /// How the dialled peer at `address` stands; nil when it is not dialled.
    func outboundStatus(address: String) async throws(WeftError) -> SyncPeerStatus? {
        try await onLoop { () throws(WeftError) -> SyncPeerStatus? in
            guard let peer = self.outboundPeers.first(where: { $0.address == address }) else { return nil }
            let status = peer.channel?.status ?? peer.status
            // Published now, so that the app's `syncStatus` shows the connection once the wait returns.
            if status.isConnected { self.publishStatus() }
            return status
        }
    }

    /// Stops dialling `address` and closes its connection (a peer whose token was refused).
    func removePeer(address: String) async throws(WeftError) {
        try await onLoop { () throws(WeftError) in
            guard let index = self.outboundPeers.firstIndex(where: { $0.address == address }) else { return }
            let peer = self.outboundPeers.remove(at: index)
            if let channel = peer.channel, !channel.isClosed {
                let error = SyncError(.shutdown, "the peer is no longer dialled")
                self.perform(channel.session.onClose(error: error, now: self.now), on: channel)
            }
            peer.reconnector?.stop()
            self.publishStatus()
        }
    }
}
