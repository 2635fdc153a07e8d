/// Collects the actions of one event call, joining consecutive frames into one send, and consecutive
/// batches of ops from one peer into one ``SyncAction/applyOps(_:from:)``.
///
/// Joining batches lets the replica merge every op frame of one read at once: one commit, and one
/// re-fold per region for the late ops of all of them instead of one per frame.
struct Outbox {
    private(set) var actions: [SyncAction] = []
    private var pending: [UInt8] = []

    /// True when a frame was queued in this call.
    private(set) var sentAny = false
    /// True when an ack was queued in this call.
    private(set) var sentAcknowledgement = false

    mutating func send(_ frame: [UInt8]) {
        precondition(frame.count >= SyncLimits.frameHeaderBytes, "a frame holds at least its header")
        if pending.isEmpty {
            pending = frame
        } else {
            pending.append(contentsOf: frame)
        }
        sentAny = true
    }

    mutating func send(_ message: Message) {
        if case .ack = message { sentAcknowledgement = true }
        send(MessageCodec.encode(message))
    }

    mutating func append(_ action: SyncAction) {
        if case .send = action { preconditionFailure("queue frames with send(_:)") }
        if pending.isEmpty, case .applyOps(let ops, let peer) = action, case .applyOps(_, peer)? = actions.last,
            case .applyOps(var batch, _) = actions.removeLast()
        {
            // Nothing was queued between the two batches: applying them together is applying them in
            // turn. The batch is taken out of the list so that it grows in place.
            batch.append(contentsOf: ops)
            actions.append(.applyOps(batch, from: peer))
            return
        }
        flush()
        actions.append(action)
    }

    mutating func finish() -> [SyncAction] {
        flush()
        return actions
    }

    private mutating func flush() {
        guard !pending.isEmpty else { return }
        actions.append(.send(pending))
        pending = []
    }
}
