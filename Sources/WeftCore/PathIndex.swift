/// A trie over the anchor paths of ops, with per-node summaries the merge engine needs to decide
/// quickly whether an arriving op conflicts with ops already applied.
///
/// Summaries are maxima and only grow; after compaction they may name stamps that left the log, which
/// is harmless because every new op is stamped above the compaction frontier.
final class PathIndex {
    final class Node {
        var children: [String: Node] = [:]
        /// Stamps of ops anchored exactly here, ascending.
        var own: [Stamp] = []
        /// Greatest stamp of an op anchored here that is not an increment.
        var ownNonIncrementMax: Stamp?
        /// Greatest stamp anchored here or below.
        var subtreeMax: Stamp?
        /// Greatest stamp anchored strictly below.
        var descendantMax: Stamp?
        /// Greatest stamp of a transaction anchored here or below (its validity depends on what it saw).
        var subtreeTransactionMax: Stamp?
        /// Sum of the magnitudes of integer increments anchored here: a bound on how far any prefix of
        /// them can move the counter (used to prove that no prefix overflows).
        var incrementMagnitude: UInt64 = 0
        /// Highest sequence per origin of ops anchored here.
        var latestOwn: [OriginSequence] = []
        /// Highest sequence per origin of ops anchored here or below.
        var latestSubtree: [OriginSequence] = []
        /// Some op may have put a scalar exactly here (so the node's kind depends on op order).
        var mayBeScalar = false
        /// Number of call ops anchored here.
        var callCount = 0
        /// Batches with several anchors that are rejected because of their part at this node.
        var failingBatches: [Stamp] = []

        var ownMax: Stamp? { own.last }

        /// The first own stamp greater than `stamp`.
        func ownFirst(after stamp: Stamp) -> Stamp? {
            let index = ownIndex(after: stamp)
            return index < own.count ? own[index] : nil
        }

        /// Position of the first own stamp greater than `stamp` (`own.count` when none).
        func ownIndex(after stamp: Stamp) -> Int {
            var low = 0
            var high = own.count
            while low < high {
                let mid = (low + high) / 2
                if own[mid] <= stamp { low = mid + 1 } else { high = mid }
            }
            return low
        }

        func insertOwn(_ stamp: Stamp) {
            if let last = own.last, last > stamp {
                var low = 0
                var high = own.count
                while low < high {
                    let mid = (low + high) / 2
                    if own[mid] < stamp { low = mid + 1 } else { high = mid }
                }
                own.insert(stamp, at: low)
            } else {
                own.append(stamp)
            }
        }
    }

    struct OriginSequence {
        var origin: ReplicaID
        var sequence: UInt64
    }

    let root = Node()

    /// The node at `keys`, nil when no op was ever anchored at or below it.
    func node(at keys: ArraySlice<String>) -> Node? {
        var current = root
        for key in keys {
            guard let next = current.children[key] else { return nil }
            current = next
        }
        return current
    }

    /// Records `op` at each of its anchors and marks where it may put scalars.
    func insert(_ op: Op) {
        let reads: Bool
        if case .transaction = op.kind { reads = true } else { reads = false }
        var isIncrement = false
        if case .increment = op.kind { isIncrement = true }
        for anchor in op.anchors {
            var current = root
            update(current, stamp: op.stamp, reads: reads, below: !anchor.isRoot, op: op)
            for (depth, key) in anchor.keys.enumerated() {
                let next: Node
                if let existing = current.children[key] {
                    next = existing
                } else {
                    next = Node()
                    current.children[key] = next
                }
                current = next
                update(current, stamp: op.stamp, reads: reads, below: depth + 1 < anchor.keys.count, op: op)
            }
            current.insertOwn(op.stamp)
            PathIndex.raise(&current.latestOwn, origin: op.origin, sequence: op.sequence)
            if !isIncrement, current.ownNonIncrementMax.map({ $0 < op.stamp }) ?? true {
                current.ownNonIncrementMax = op.stamp
            }
            if case .call = op.kind { current.callCount += 1 }
            if case .increment(let by, _) = op.kind {
                let magnitude = by.magnitudeBound
                current.incrementMagnitude =
                    current.incrementMagnitude > UInt64.max - magnitude ? .max : current.incrementMagnitude + magnitude
            }
        }
        markScalars(of: op)
    }

    private func update(_ node: Node, stamp: Stamp, reads: Bool, below: Bool, op: Op) {
        if node.subtreeMax.map({ $0 < stamp }) ?? true { node.subtreeMax = stamp }
        if below, node.descendantMax.map({ $0 < stamp }) ?? true { node.descendantMax = stamp }
        if reads, node.subtreeTransactionMax.map({ $0 < stamp }) ?? true { node.subtreeTransactionMax = stamp }
        PathIndex.raise(&node.latestSubtree, origin: op.origin, sequence: op.sequence)
    }

    static func raise(_ list: inout [OriginSequence], origin: ReplicaID, sequence: UInt64) {
        for i in list.indices where list[i].origin == origin {
            if list[i].sequence < sequence { list[i].sequence = sequence }
            return
        }
        list.append(OriginSequence(origin: origin, sequence: sequence))
    }

    /// Marks the nodes where `op` may write a scalar: every scalar leaf of a written value, every
    /// increment target, and the whole node for transaction and call results.
    private func markScalars(of op: Op) {
        switch op.kind {
        case .set(let value): markLeaves(of: value, at: op.path.keys[...])
        case .merge(let children):
            for child in children { markLeaves(of: child.value, at: (op.path.keys + child.relative.keys)[...]) }
        case .increment: mark(op.path.keys[...])
        case .transaction(_, let result): markLeaves(of: result, at: op.path.keys[...])
        case .call: mark(op.path.keys[...])
        case .batch(let writes):
            for write in writes {
                switch write {
                case .set(let path, let value): markLeaves(of: value, at: path.keys[...])
                case .merge(let path, let children):
                    for child in children { markLeaves(of: child.value, at: (path.keys + child.relative.keys)[...]) }
                case .increment(let path, _, _): mark(path.keys[...])
                }
            }
        }
    }

    private func markLeaves(of value: Value, at keys: ArraySlice<String>) {
        switch value {
        case .null: return
        case .object(let children):
            // Only descend where something could hide a scalar; objects themselves are not scalars.
            for (key, child) in children where !child.isNull { markLeaves(of: child, at: keys + [key]) }
        default: mark(keys)
        }
    }

    private func mark(_ keys: ArraySlice<String>) {
        var current = root
        for key in keys {
            if let existing = current.children[key] {
                current = existing
            } else {
                let next = Node()
                current.children[key] = next
                current = next
            }
        }
        current.mayBeScalar = true
    }

    /// True when every op anchored on an ancestor-or-self of `path`, or anywhere below it, is covered
    /// by `read`: the transaction rule, for an index that holds only ops stamped before the transaction.
    func isCovered(path: Path, by read: VersionVector) -> Bool {
        var current = root
        if !PathIndex.covered(current.latestOwn, by: read) { return false }
        for key in path.keys {
            guard let next = current.children[key] else { return true }
            current = next
            if !PathIndex.covered(current.latestOwn, by: read) { return false }
        }
        return PathIndex.covered(current.latestSubtree, by: read)
    }

    private static func covered(_ list: [OriginSequence], by read: VersionVector) -> Bool {
        list.allSatisfy { read[$0.origin] >= $0.sequence }
    }

    /// Records only which origins touched the op's anchors (for ops folded into the base, whose
    /// per-origin sequences still decide whether later transactions saw them).
    func insertTouches(of op: Op) {
        for anchor in op.anchors {
            var current = root
            PathIndex.raise(&current.latestSubtree, origin: op.origin, sequence: op.sequence)
            for key in anchor.keys {
                if let existing = current.children[key] {
                    current = existing
                } else {
                    let next = Node()
                    current.children[key] = next
                    current = next
                }
                PathIndex.raise(&current.latestSubtree, origin: op.origin, sequence: op.sequence)
            }
            PathIndex.raise(&current.latestOwn, origin: op.origin, sequence: op.sequence)
        }
    }

    /// Removes `stamp` from the own list at each anchor of `op` (compaction), pruning empty leaves.
    func remove(_ op: Op) {
        for anchor in op.anchors {
            guard let node = node(at: anchor.keys[...]) else { continue }
            if let i = node.own.firstIndex(of: op.stamp) { node.own.remove(at: i) }
            if case .call = op.kind { node.callCount -= 1 }
        }
    }
}
