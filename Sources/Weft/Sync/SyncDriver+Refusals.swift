import Logging
import WeftCore
import WeftSync

// MARK: - Lasting refusals

// A dialled peer that refuses this replica for a reason only a change of configuration ends (a token it
// does not hold, a client token used as a peer's, a leaf dialling a replica of the whole tree) would be
// redialled at the backoff's pace for ever, each attempt refused the same way. Such a refusal makes the
// reconnector wait a long fixed delay instead, and is said once, with what to change, in the log and in
// the peer's status.
extension SyncDriver {
    /// A dialled session closed: a lasting refusal fixes the redial delay and gives its advice; any other
    /// end gives the backoff back.
    func noteOutboundClosed(_ error: SyncError?, on channel: _SyncChannel) {
        guard let outbound = channel.outbound else { return }
        guard let error, let advice = Self.advice(for: error, wasConnected: channel.wasConnected) else {
            outbound.reconnector?.fixedRetryDelayMilliseconds = nil
            outbound.refusalLogged = nil
            channel.status.advice = nil
            return
        }
        outbound.reconnector?.fixedRetryDelayMilliseconds = SyncShellLimits.refusedRedialDelayMilliseconds
        channel.status.advice = advice
        guard outbound.refusalLogged != error.code else { return }
        outbound.refusalLogged = error.code
        logger.warning(
            "sync peer refused for good: \(advice)",
            metadata: [
                "peer": "\(outbound.address)", "code": "\(error.code)", "error": "\(error)",
                "redial_ms": "\(SyncShellLimits.refusedRedialDelayMilliseconds)",
            ])
    }

    /// What to change when `error` is a refusal that only a change of configuration ends; nil otherwise.
    ///
    /// A refusal at the handshake, or raised here, lasts. A peer that closes an established session
    /// with the same code (its tokens or rules were reloaded) is dialled again at once, as before: the
    /// next handshake tells whether it still refuses.
    static func advice(for error: SyncError, wasConnected: Bool) -> String? {
        guard !error.raisedByPeer || !wasConnected else { return nil }
        switch error.code {
        case .authenticationFailed:
            return "the two replicas do not share a token for each other: give both the same secret "
                + "under each other's name (a token file entry or --peer-token), then reload or restart"
        case .roleMismatch where error.message.contains("holds only its share"):
            // Said by the leaf ("this replica holds only …") or of it ("\"leaf1\" holds only …"), here or
            // by the peer: the words tell which end this replica is.
            let saidByLeaf = error.message.contains("this replica holds only its share")
            guard saidByLeaf != error.raisedByPeer else {
                return "the peer holds only a hub's share of the tree and syncs with that hub only: "
                    + "remove it from this replica's configuration"
            }
            return "this replica holds only its share of the tree and syncs with its hub only: "
                + "remove this peer from its configuration (or give it a database of its own)"
        case .roleMismatch:
            return "the peer's token entry and this replica's role do not match (a client token used by a "
                + "replica, or the reverse): fix the entry's kind or use a peer token"
        default:
            return nil
        }
    }
}
