import WeftCore

/// The key of a stored touch of compacted ops: one row per anchor path and origin.
struct CompactedTouchSlot: Hashable, Sendable {
    var path: Path
    var origin: ReplicaID
}

extension Array where Element == CompactedTouch {
    /// The touches in the order both stores return them: by path, then by origin.
    func sortedForStore() -> [CompactedTouch] {
        sorted { ($0.path, $0.origin) < ($1.path, $1.origin) }
    }
}
