import WeftCore
import WeftSync

// MARK: - Status report

extension SyncDriver {
    /// What a `status` request gets: this replica, its log, its stable frontier and every peer, as a value
    /// (peers keyed by address). The fields are listed in `Docs/PROTOCOL.md`.
    func statusReport() -> Value {
        publishStatus()
        let status = self.status
        let log = target.logStatus
        var logFields: [Key: Value] = [
            "opsKnown": .int(Int64(clamping: log.opsKnown)), "opsInLog": .int(Int64(log.opsInLog)),
            "opsStable": .int(Int64(clamping: stableFrontier.total)),
            "opsCompacted": .int(Int64(clamping: target.compactionVector.total)),
        ]
        if let bytes = log.bytesOnDisk { logFields["bytesOnDisk"] = .int(Int64(bytes)) }
        var peers: [Key: Value] = [:]
        for peer in status.peers {
            var fields: [Key: Value] = [
                "direction": .string(peer.direction.rawValue), "connected": .bool(peer.isConnected),
                "opsBehind": .int(Int64(clamping: peer.opsBehind)), "bytesSent": .int(Int64(peer.bytesSent)),
                "bytesReceived": .int(Int64(peer.bytesReceived)),
                "sessions": .int(Int64(peer.sessionsEstablished)),
            ]
            if let replica = peer.replica { fields["replica"] = .string(replica.description) }
            if let role = peer.role { fields["role"] = .string("\(role)") }
            if let error = peer.lastError { fields["lastError"] = .string(error) }
            if let advice = peer.advice { fields["advice"] = .string(advice) }
            if peer.role == .client { continue }
            // Keys may not hold `.`, `[`, `]`…: the address is a value, the key its position.
            fields["address"] = .string(peer.address)
            peers["\(peers.count)"] = .object(fields)
        }
        var fields: [Key: Value] = [
            "replica": .string(configuration.replica.description), "role": .string("\(configuration.role)"),
            "log": .object(logFields),
        ]
        if let address = status.listeningAddress { fields["listening"] = .string(address) }
        if !peers.isEmpty { fields["peers"] = .object(peers) }
        if let replica = target as? Replica { fields["subscriptions"] = replica.subscriptions.statusValue() }
        return .object(fields)
    }
}
