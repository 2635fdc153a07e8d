// The path index's summaries recomputed from scratch and compared with what the index holds: the check
// behind `MergeEngine.checkInvariants()`. It reads the index and changes nothing in it.

extension PathIndex {
    /// What the ops anchored exactly at one node say its summaries should hold, gathered from the log
    /// by ``expect(_:outcome:failingAnchors:into:)`` without the index's own code.
    struct NodeExpectation {
        /// The ops anchored here, in any order until ``checkSummaries(against:frontier:)`` sorts them.
        var own: [Anchored] = []
        var ownNonIncrementMax: Stamp?
        var ownTransactionMax: Stamp?
        var callCount: Int32 = 0
        var mayBeScalar = false
        var incrementMagnitude: UInt64 = 0
        var numberMagnitude: Double = 0
        /// Rejected batches that failed because of their part here (``MergeEngine/failingAnchors(of:reason:)``).
        var failing: [Stamp] = []

        mutating func addWritten(_ value: Value) {
            if let number = Number(value) { addWritten(number) }
        }

        mutating func addWritten(_ number: Number) { numberMagnitude += Node.exactMagnitude(of: number) }
    }

    /// Adds what `op` (logged, with `outcome`) says about the nodes it touches to `expected`, by the
    /// definition of each summary: every anchor lists it; a set, a transaction, a call, a merge child
    /// and every part of a batch raise the anchor's greatest non-increment stamp; each scalar leaf of a
    /// written value, each increment and each call may leave a scalar; increments add their step to
    /// the counter's magnitude, and every number written or started from adds to its number magnitude.
    static func expect(_ op: Op, failingAnchors: [Path], into expected: inout [Path: NodeExpectation]) {
        let anchored = Anchored(stamp: op.stamp, sequence: op.sequence)
        func update(_ path: Path, _ body: (inout NodeExpectation) -> Void) {
            body(&expected[path, default: NodeExpectation()])
        }
        func markLeaves(of value: Value, at path: Path) {
            switch value {
            case .null: return
            case .object(let children):
                for (key, child) in children { markLeaves(of: child, at: Path(uncheckedKeys: path.keys + [key])) }
            default: update(path) { $0.mayBeScalar = true }
            }
        }
        switch op.kind {
        case .set(let value), .transaction(_, let value):
            update(op.path) { node in
                node.own.append(anchored)
                node.ownNonIncrementMax = max(node.ownNonIncrementMax ?? op.stamp, op.stamp)
                if case .transaction = op.kind { node.ownTransactionMax = max(node.ownTransactionMax ?? op.stamp, op.stamp) }
                node.addWritten(value)
            }
            markLeaves(of: value, at: op.path)
        case .increment(let by, let from):
            update(op.path) { node in
                node.own.append(anchored)
                node.mayBeScalar = true
                let size = by.magnitudeBound
                node.incrementMagnitude =
                    node.incrementMagnitude > UInt64.max - size ? .max : node.incrementMagnitude + size
                node.addWritten(by)
                node.addWritten(from)
            }
        case .call:
            update(op.path) { node in
                node.own.append(anchored)
                node.ownNonIncrementMax = max(node.ownNonIncrementMax ?? op.stamp, op.stamp)
                node.mayBeScalar = true
                node.callCount += 1
                node.numberMagnitude = .infinity
            }
        case .merge(let children):
            for child in children {
                let path = Path(uncheckedKeys: op.path.keys + child.relative.keys)
                update(path) { node in
                    node.own.append(anchored)
                    node.ownNonIncrementMax = max(node.ownNonIncrementMax ?? op.stamp, op.stamp)
                    node.addWritten(child.value)
                }
                markLeaves(of: child.value, at: path)
            }
        case .batch(let writes), .guardedBatch(_, _, let writes):
            let reads = op.guardedPaths
            for anchor in op.anchors {
                update(anchor) { node in
                    node.own.append(anchored)
                    node.ownNonIncrementMax = max(node.ownNonIncrementMax ?? op.stamp, op.stamp)
                    // A guarded batch asks for the transaction rule at its read paths.
                    if reads.contains(anchor) {
                        node.ownTransactionMax = max(node.ownTransactionMax ?? op.stamp, op.stamp)
                    }
                }
            }
            for write in writes {
                switch write {
                case .set(let path, let value):
                    update(path) { $0.addWritten(value) }
                    markLeaves(of: value, at: path)
                case .merge(let base, let children):
                    for child in children {
                        let path = Path(uncheckedKeys: base.keys + child.relative.keys)
                        update(path) { $0.addWritten(child.value) }
                        markLeaves(of: child.value, at: path)
                    }
                case .increment(let path, let by, let from):
                    update(path) { node in
                        node.mayBeScalar = true
                        node.addWritten(by)
                        node.addWritten(from)
                    }
                }
            }
        }
        for path in failingAnchors { update(path) { $0.failing.append(op.stamp) } }
    }

    /// What a subtree holds, gathered bottom-up by the check.
    private struct SubtreeFacts {
        /// Greatest stamp the log anchors here or below.
        var stampMax: Stamp?
        /// Greatest stamp of a transaction the log anchors here or below.
        var transactionMax: Stamp?
        /// Highest sequence per origin of the ops the nodes of the subtree list (own or compacted).
        var sequences: [ReplicaID: UInt64] = [:]
        /// Failing batches listed here and below.
        var failingCount = 0
    }

    /// Compares the summaries of every node with their recomputation, and throws the first that
    /// differs. Read only: no summary is gathered or cached on the way (``Node/subtreeSequences`` is
    /// not asked).
    ///
    /// - Parameters:
    ///   - expected: what the log says of each anchored node (``expect(_:failingAnchors:into:)``); nil for
    ///     an index of compacted touches, of which only the summaries drawn from the index itself are
    ///     checked (the children tables, the subtrees' sequences, the failing batches' counts).
    ///   - frontier: compacted ops leave their stamps in maxima, flags and magnitudes, which only grow:
    ///     a summary may exceed its recomputation by what ops at or below the frontier left.
    func checkSummaries(
        against expected: [Path: NodeExpectation]?, frontier: Stamp?
    ) throws(MergeInvariantViolation) {
        var keys: [Key] = []
        var matched = 0
        _ = try check(root, keys: &keys, expected: expected, frontier: frontier, matched: &matched)
        guard let expected, matched < expected.count else { return }
        for path in expected.keys.sorted() where node(at: path.keys[...]) == nil {
            throw MergeInvariantViolation(
                summary: .missingNode, path: path, expected: "a node for the ops anchored here", found: "none")
        }
    }

    /// The check of one node, after its children's.
    private func check(
        _ node: Node, keys: inout [Key], expected: [Path: NodeExpectation]?, frontier: Stamp?, matched: inout Int
    ) throws(MergeInvariantViolation) -> SubtreeFacts {
        var facts = SubtreeFacts()
        var below: Stamp?
        var failingChildren: Set<ObjectIdentifier> = []
        for child in node.children.values {
            guard node.children[child.key] === child else {
                throw violation(.children, keys, expected: "child \(child.key) found by its key", found: "another")
            }
            keys.append(child.key)
            let childFacts = try check(child, keys: &keys, expected: expected, frontier: frontier, matched: &matched)
            keys.removeLast()
            below = Self.max(below, childFacts.stampMax)
            facts.transactionMax = Self.max(facts.transactionMax, childFacts.transactionMax)
            facts.sequences.merge(childFacts.sequences, uniquingKeysWith: Swift.max)
            facts.failingCount += childFacts.failingCount
            if childFacts.failingCount > 0 { failingChildren.insert(ObjectIdentifier(child)) }
        }
        var stored: [Anchored] = []
        node.own.forEach(after: nil) { stored.append($0) }
        for entry in stored { facts.sequences[entry.stamp.replica, default: 0].raise(to: entry.sequence) }
        node.latestOwn.forEach { facts.sequences[$0.origin, default: 0].raise(to: $0.sequence) }
        try checkStructure(node, keys: keys, stored: stored, failingChildren: failingChildren, facts: &facts)
        if node.tracksSubtree {
            var held: [ReplicaID: UInt64] = [:]
            node.latestSubtree.forEach { held[$0.origin, default: 0].raise(to: $0.sequence) }
            guard held == facts.sequences else {
                throw violation(.subtreeSequences, keys, expected: "\(facts.sequences)", found: "\(held)")
            }
        }
        guard let expected else { return facts }
        var mine = NodeExpectation()
        if let found = expected[Path(uncheckedKeys: keys)] {
            mine = found
            matched += 1
        }
        mine.own.sort { $0.stamp < $1.stamp }
        facts.stampMax = Self.max(mine.own.last?.stamp, below)
        facts.transactionMax = Self.max(facts.transactionMax, mine.ownTransactionMax)
        try checkAgainstLog(node, keys: keys, stored: stored, mine: mine, frontier: frontier)
        let maxima: [(MergeInvariantViolation.Summary, Stamp?, Stamp?)] = [
            (.subtreeMax, node.subtreeMax, facts.stampMax), (.descendantMax, node.descendantMax, below),
            (.subtreeTransactionMax, node.subtreeTransactionMax, facts.transactionMax),
            (.ownNonIncrementMax, node.ownNonIncrementMax, mine.ownNonIncrementMax),
        ]
        for (summary, found, recomputed) in maxima where !Self.matches(found, recomputed, frontier: frontier) {
            throw violation(summary, keys, expected: Self.text(recomputed), found: Self.text(found))
        }
        return facts
    }

    /// The summaries a node draws from itself and its children: its children table, own list order,
    /// snapshots, and failing batches' counts.
    private func checkStructure(
        _ node: Node, keys: [Key], stored: [Anchored], failingChildren: Set<ObjectIdentifier>,
        facts: inout SubtreeFacts
    ) throws(MergeInvariantViolation) {
        guard node.ownMax == stored.last?.stamp else {
            throw violation(.ownMax, keys, expected: Self.text(stored.last?.stamp), found: Self.text(node.ownMax))
        }
        for (earlier, later) in zip(stored, stored.dropFirst()) where !(earlier.stamp < later.stamp) {
            throw violation(.ownOps, keys, expected: "ascending stamps", found: "\(earlier.stamp) then \(later.stamp)")
        }
        let snapshots = node.snapshots.map(\.stamp)
        for (earlier, later) in zip(snapshots, snapshots.dropFirst()) where !(earlier < later) {
            throw violation(.snapshots, keys, expected: "ascending stamps", found: "\(earlier) then \(later)")
        }
        guard node.lastSnapshot == snapshots.last else {
            throw violation(.snapshots, keys, expected: Self.text(snapshots.last), found: Self.text(node.lastSnapshot))
        }
        guard snapshots.count <= CoreLimits.snapshotsPerNodeMax else {
            throw violation(.snapshots, keys, expected: "≤ \(CoreLimits.snapshotsPerNodeMax)", found: "\(snapshots.count)")
        }
        guard node.snapshotsTakenAt <= arrivals, node.lastArrival <= arrivals else {
            throw violation(
                .snapshots, keys, expected: "arrival counts ≤ \(arrivals)",
                found: "taken at \(node.snapshotsTakenAt), last arrival \(node.lastArrival)")
        }
        facts.failingCount += node.failingBatches.count
        guard Set(node.failingBatches).count == node.failingBatches.count else {
            throw violation(.failingBatches, keys, expected: "each batch once", found: "\(node.failingBatches)")
        }
        guard node.failingBelow == facts.failingCount else {
            throw violation(.failingBelow, keys, expected: "\(facts.failingCount)", found: "\(node.failingBelow)")
        }
        let listed = node.failingChildren.map(ObjectIdentifier.init)
        guard listed.count == failingChildren.count, Set(listed) == failingChildren else {
            throw violation(
                .failingChildren, keys, expected: "\(failingChildren.count) children", found: "\(listed.count) listed")
        }
    }

    /// The summaries a node draws from the ops the log anchors there.
    private func checkAgainstLog(
        _ node: Node, keys: [Key], stored: [Anchored], mine: NodeExpectation, frontier: Stamp?
    ) throws(MergeInvariantViolation) {
        guard stored == mine.own else {
            throw violation(
                .ownOps, keys, expected: "\(mine.own.map(\.stamp))", found: "\(stored.map(\.stamp))")
        }
        let compacted = frontier != nil
        guard node.callCount == mine.callCount else {
            throw violation(.callCount, keys, expected: "\(mine.callCount)", found: "\(node.callCount)")
        }
        guard node.mayBeScalar == mine.mayBeScalar || (compacted && node.mayBeScalar) else {
            throw violation(.mayBeScalar, keys, expected: "\(mine.mayBeScalar)", found: "\(node.mayBeScalar)")
        }
        let increments = node.incrementMagnitude
        guard increments == mine.incrementMagnitude || (compacted && increments > mine.incrementMagnitude) else {
            throw violation(.incrementMagnitude, keys, expected: "\(mine.incrementMagnitude)", found: "\(increments)")
        }
        // Sums of doubles taken in another order may differ in their last bits.
        let numbers = node.numberMagnitude
        let tolerance = 1e-9 * Swift.max(1, mine.numberMagnitude.isFinite ? mine.numberMagnitude : 0)
        let close =
            numbers == mine.numberMagnitude
            || (numbers.isFinite && mine.numberMagnitude.isFinite && abs(numbers - mine.numberMagnitude) <= tolerance)
        guard close || (compacted && numbers > mine.numberMagnitude) else {
            throw violation(.numberMagnitude, keys, expected: "\(mine.numberMagnitude)", found: "\(numbers)")
        }
        try checkOwnSequences(node, keys: keys, stored: stored, compacted: compacted)
        let failing = Set(node.failingBatches.filter { stamp in frontier.map { stamp > $0 } ?? true })
        guard failing == Set(mine.failing), mine.failing.count == failing.count else {
            throw violation(
                .failingBatches, keys, expected: "\(mine.failing.sorted())", found: "\(failing.sorted())")
        }
    }

    /// The sequences a node keeps of its own ops: all of them once it keeps them, none of a node that
    /// never lost an op to compaction and holds few.
    private func checkOwnSequences(
        _ node: Node, keys: [Key], stored: [Anchored], compacted: Bool
    ) throws(MergeInvariantViolation) {
        var held: [ReplicaID: UInt64] = [:]
        node.latestOwn.forEach { held[$0.origin, default: 0].raise(to: $0.sequence) }
        guard node.keepsOwnSequences else {
            guard stored.count <= Node.ownScanMax else {
                throw violation(.ownSequences, keys, expected: "kept past \(Node.ownScanMax) ops", found: "not kept")
            }
            guard compacted || held.isEmpty else {
                throw violation(.ownSequences, keys, expected: "none before compaction", found: "\(held)")
            }
            return
        }
        var own: [ReplicaID: UInt64] = [:]
        for entry in stored { own[entry.stamp.replica, default: 0].raise(to: entry.sequence) }
        let covered = own.allSatisfy { origin, sequence in (held[origin] ?? 0) >= sequence }
        guard covered, compacted || held == own else {
            throw violation(.ownSequences, keys, expected: "\(own)", found: "\(held)")
        }
    }

    /// True when a summary `found` equals its recomputation, or exceeds it only by a stamp at or below
    /// the frontier that a compacted op left where no logged op remains.
    private static func matches(_ found: Stamp?, _ recomputed: Stamp?, frontier: Stamp?) -> Bool {
        if found == recomputed { return true }
        guard recomputed == nil, let found, let frontier else { return false }
        return found <= frontier
    }

    private static func max(_ first: Stamp?, _ second: Stamp?) -> Stamp? {
        guard let first else { return second }
        guard let second else { return first }
        return Swift.max(first, second)
    }

    private static func text(_ stamp: Stamp?) -> String { stamp.map(\.description) ?? "none" }

    private func violation(
        _ summary: MergeInvariantViolation.Summary, _ keys: [Key], expected: String, found: String
    ) -> MergeInvariantViolation {
        MergeInvariantViolation(summary: summary, path: Path(uncheckedKeys: keys), expected: expected, found: found)
    }
}

extension UInt64 {
    /// Raises this sequence to `other` when `other` is higher.
    fileprivate mutating func raise(to other: UInt64) { if other > self { self = other } }
}
