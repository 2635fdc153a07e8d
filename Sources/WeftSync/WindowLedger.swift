import WeftCore

/// The frames in flight on one direction of a session: sent (or received) and not yet acknowledged.
///
/// The sender releases a frame when an ack covers it; the receiver when it sends that ack. Both
/// count the same frame bytes, so the receiver's count never exceeds the sender's and it can hold
/// the sender to the window it advertised.
struct WindowLedger: Sendable {
    /// The highest sequence of one origin carried by an ops frame.
    struct Mark: Sendable, Hashable {
        var origin: ReplicaID
        var sequence: UInt64
    }

    enum Content: Sendable, Hashable {
        /// An ops frame, released when an ack's version vector covers every mark.
        case ops([Mark])
        /// The snapshot chunk of this index (from 0), released by a snapshot ack counting past it.
        case snapshotChunk(UInt64)
    }

    struct Entry: Sendable, Hashable {
        var content: Content
        var bytes: Int
    }

    private(set) var entries: [Entry] = []
    /// Sum of the bytes of the entries.
    private(set) var bytes = 0

    var frameCount: Int { entries.count }

    mutating func add(_ content: Content, bytes frameBytes: Int) {
        precondition(frameBytes > 0, "a frame has bytes")
        entries.append(Entry(content: content, bytes: frameBytes))
        bytes += frameBytes
    }

    /// True when some ops frame would be released by `vector`.
    func hasOps(coveredBy vector: VersionVector) -> Bool {
        entries.contains { WindowLedger.covers(vector, $0.content) }
    }

    /// Releases the ops frames that `vector` covers; returns how many.
    @discardableResult
    mutating func release(coveredBy vector: VersionVector) -> Int {
        release { WindowLedger.covers(vector, $0) }
    }

    /// Releases the snapshot chunks whose index is below `chunkCount`; returns how many.
    @discardableResult
    mutating func release(snapshotChunksBelow chunkCount: UInt64) -> Int {
        release {
            if case .snapshotChunk(let index) = $0 { return index < chunkCount }
            return false
        }
    }

    private mutating func release(where isReleased: (Content) -> Bool) -> Int {
        let before = entries.count
        var freed = 0
        entries.removeAll { entry in
            guard isReleased(entry.content) else { return false }
            freed += entry.bytes
            return true
        }
        bytes -= freed
        precondition(bytes >= 0, "window ledger released more bytes than it held")
        precondition(entries.isEmpty == (bytes == 0), "window ledger bytes disagree with its entries")
        return before - entries.count
    }

    private static func covers(_ vector: VersionVector, _ content: Content) -> Bool {
        guard case .ops(let marks) = content else { return false }
        return marks.allSatisfy { vector[$0.origin] >= $0.sequence }
    }
}
