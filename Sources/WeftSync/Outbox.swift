/// Collects the actions of one event call, joining consecutive frames into one send.
struct Outbox {
    private(set) var actions: [SyncAction] = []
    private var pending: [UInt8] = []

    /// True when a frame was queued in this call.
    private(set) var sentAny = false

    mutating func send(_ frame: [UInt8]) {
        precondition(frame.count >= SyncLimits.frameHeaderBytes, "a frame holds at least its header")
        if pending.isEmpty {
            pending = frame
        } else {
            pending.append(contentsOf: frame)
        }
        sentAny = true
    }

    mutating func send(_ message: Message) { send(MessageCodec.encode(message)) }

    mutating func append(_ action: SyncAction) {
        if case .send = action { preconditionFailure("queue frames with send(_:)") }
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
