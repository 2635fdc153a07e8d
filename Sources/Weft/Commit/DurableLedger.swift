import WeftCore

/// Which ops are durable: for each origin, the highest sequence committed with no gap below it.
///
/// ```swift
/// var ledger = DurableLedger(vector: loaded)
/// ledger.add(origin: peer, sequence: 8)   // 7 not yet committed: waits above the vector
/// ledger.add(origin: peer, sequence: 7)   // the vector now covers 8
/// ```
struct DurableLedger: Sendable {
    /// The gap-free prefix of committed ops, per origin.
    private(set) var vector: VersionVector
    /// Committed sequences above a gap, per origin.
    private var above: [ReplicaID: Set<UInt64>] = [:]

    init(vector: VersionVector = VersionVector()) { self.vector = vector }

    /// Records the op `sequence` of `origin` as committed.
    mutating func add(origin: ReplicaID, sequence: UInt64) {
        let current = vector[origin]
        guard sequence > current else { return }
        guard sequence == current + 1 else {
            above[origin, default: []].insert(sequence)
            return
        }
        advance(origin: origin, to: sequence)
    }

    /// Records every op `vector` covers as committed (a snapshot's folded ops).
    mutating func raise(to vector: VersionVector) {
        for (origin, sequence) in vector.entries where sequence > self.vector[origin] {
            if let waiting = above[origin] {
                let kept = waiting.filter { $0 > sequence }
                above[origin] = kept.isEmpty ? nil : kept
            }
            advance(origin: origin, to: sequence)
        }
    }

    /// Moves `origin` to `sequence`, and on through the committed sequences waiting just above it.
    private mutating func advance(origin: ReplicaID, to sequence: UInt64) {
        var reached = sequence
        if var waiting = above[origin] {
            while waiting.remove(reached + 1) != nil { reached += 1 }
            above[origin] = waiting.isEmpty ? nil : waiting
        }
        vector.advance(origin: origin, to: reached)
        precondition(vector[origin] == reached, "the durable vector moves forward")
    }
}
