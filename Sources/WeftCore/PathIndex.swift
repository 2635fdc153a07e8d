import CPrefetch

/// A trie over the anchor paths of ops, with per-node summaries the merge engine needs to decide
/// quickly whether an arriving op conflicts with ops already applied.
///
/// Summaries are maxima and only grow; after compaction they may name stamps that left the log, which
/// is harmless because every new op is stamped above the compaction frontier.
final class PathIndex {
    let root = Node(key: "")
    /// Nothing was recorded.
    var isEmpty: Bool { root.children.values.isEmpty && root.latestOwn.isEmpty && root.own.isEmpty }
    /// The greatest stamp of a guarded batch recorded (a summary: it only grows).
    @exclusivity(unchecked) private(set) var guardedMax: Stamp?
    /// Ops recorded so far (the clock of ``Node/lastArrival``).
    @exclusivity(unchecked) private(set) var arrivals: UInt64 = 0

    /// Marks a re-fold of the region at `keys` from `stamp` on: snapshots there and above at or after
    /// `stamp` are dropped, and every snapshot below is stale.
    func refolding(at keys: [Key], from stamp: Stamp) {
        arrivals += 1
        var current = root
        for key in keys {
            current.trimSnapshots(from: stamp)
            guard let next = current.children[key] else { return }
            current = next
        }
        current.trimSnapshots(from: stamp)
        current.lastArrival = arrivals
    }

    /// The latest valid snapshot of the node at `keys` stamped before `stamp`, if any.
    func snapshot(at keys: [Key], before stamp: Stamp) -> (node: Node, snapshot: (stamp: Stamp, value: Value))? {
        var current = root
        var newestAbove: UInt64 = 0
        for key in keys {
            newestAbove = max(newestAbove, current.lastArrival)
            guard let next = current.children[key] else { return nil }
            current = next
        }
        guard current.lastSnapshot != nil else { return nil }
        guard newestAbove <= current.snapshotsTakenAt else {
            current.snapshots = []
            return nil
        }
        var position = current.snapshots.count - 1
        while position >= 0, current.snapshots[position].stamp >= stamp { position -= 1 }
        return position >= 0 ? (current, current.snapshots[position]) : nil
    }

    /// True when an op stamped after `stamp` (any op, when nil) is anchored at a proper ancestor of the
    /// node at `keys`.
    func hasOwnOps(above keys: ArraySlice<Key>, after stamp: Stamp?) -> Bool {
        var current = root
        for key in keys {
            if let ownMax = current.ownMax, stamp.map({ ownMax > $0 }) ?? true { return true }
            guard let next = current.children[key] else { return false }
            current = next
        }
        return false
    }

    /// The node at `keys`, nil when no op was ever anchored at or below it.
    func node(at keys: ArraySlice<Key>) -> Node? {
        var current = root
        for key in keys {
            guard let next = current.children[key] else { return nil }
            current = next
        }
        return current
    }

    /// The node whose keys are `head` then `tail`, if any op was recorded there or below.
    func node(at head: [Key], _ tail: [Key]) -> Node? {
        var current = root
        for position in 0..<(head.count + tail.count) {
            let key = position < head.count ? head[position] : tail[position - head.count]
            guard let next = current.children[key] else { return nil }
            current = next
        }
        return current
    }

    /// True when an op stamped after `stamp` is recorded at the node whose keys are `head` then `tail`, at
    /// an ancestor of it, or below it: what ``insert(_:)`` reports as a conflict, read without recording.
    func hasLater(than stamp: Stamp, at head: [Key], _ tail: [Key]) -> Bool {
        var current = root
        for position in 0..<(head.count + tail.count) {
            if let ownMax = current.ownMax, ownMax > stamp { return true }
            let key = position < head.count ? head[position] : tail[position - head.count]
            guard let next = current.children[key] else { return false }
            current = next
        }
        return current.subtreeMax.map { $0 > stamp } ?? false
    }

    /// What the index said about ops stamped after an op, read on the way in before the op was recorded.
    struct Probe {
        /// Some known op stamped later touches an anchor, an ancestor or a descendant of it.
        var conflicts = false
        /// A proper ancestor of an anchor has an op stamped later.
        var laterAbove = false
        /// A proper ancestor of an anchor may hold a scalar, or has calls.
        var scalarAbove = false
        /// The index node of the anchor, for single-anchor ops, held unretained (the trie owns its
        /// nodes and never removes one): a reference taken and dropped per op is an atomic operation,
        /// which waits for every load in flight.
        var anchor: Unmanaged<Node>?
        /// The index node of the anchor, for single-anchor ops.
        var node: Node? { anchor?.takeUnretainedValue() }
        /// For a transaction: every op recorded before it on an ancestor-or-self of its path or below
        /// was seen by its origin (the transaction rule, for an index of older ops only).
        var covered = true
        /// For a merge of several children, or a batch of several anchors: what the walk to each said,
        /// in the order of ``Op/anchors``.
        var parts: [Part] = []
    }

    /// What the walk to one child of a merge said.
    struct Part {
        /// The node, unretained (see ``Probe/anchor``).
        var anchor: Unmanaged<Node>
        var node: Node { anchor.takeUnretainedValue() }
        /// Some known op stamped later touches this child, an ancestor or a descendant of it.
        var conflicts: Bool
        var laterAbove: Bool
        var scalarAbove: Bool
    }

    /// Records `op` at each of its anchors and marks where it may put scalars, in one walk per anchor
    /// that reads the summaries of older ops before updating them.
    @discardableResult
    func insert(_ op: Op) -> Probe {
        arrivals += 1
        var probe = Probe()
        let stamp = op.stamp
        var read: VersionVector?
        if case .transaction(let vector, _) = op.kind { read = vector }
        switch op.kind {
        case .set, .increment, .transaction, .call:
            let anchor = record(op, at: op.path.keys, [], stamp: stamp, reads: read != nil, read: read, probe: &probe)
            probe.anchor = anchor
            anchor._withUnsafeGuaranteedRef { node in
                // One switch that binds each payload once: every binding of a payload copies it.
                switch op.kind {
                case .set(let value), .transaction(_, let value):
                    markLeaves(of: value, from: anchor)
                    node.addWritten(value)
                    node.raiseNonIncrement(stamp)
                case .increment(let by, let from):
                    node.mayBeScalar = true
                    node.addIncrement(by)
                    node.addWritten(by)
                    node.addWritten(from)
                case .call:
                    node.mayBeScalar = true
                    node.callCount += 1
                    node.numberMagnitude = .infinity
                    node.raiseNonIncrement(stamp)
                case .merge, .batch, .guardedBatch:
                    break
                }
            }
        case .merge(let children):
            insertMerge(op, children: children, probe: &probe)
        case .batch(let writes):
            insertBatch(op, writes: writes, reads: [], read: nil, probe: &probe)
        case .guardedBatch(let vector, let reads, let writes):
            if guardedMax.map({ $0 < stamp }) ?? true { guardedMax = stamp }
            insertBatch(op, writes: writes, reads: reads, read: vector, probe: &probe)
        }
        if probe.laterAbove { probe.conflicts = true }
        return probe
    }

    /// Records a merge at each of its children's nodes and marks where it may put scalars.
    private func insertMerge(_ op: Op, children: [MergeChild], probe: inout Probe) {
        var nodes: [Unmanaged<Node>] = []
        nodes.reserveCapacity(children.count)
        if children.count > 1 { probe.parts.reserveCapacity(children.count) }
        for child in children {
            let node = recordPart(
                op, at: op.path.keys, child.relative.keys, listed: children.count > 1, probe: &probe)
            nodes.append(node)
        }
        if children.count == 1 { probe.anchor = nodes[0] }
        for position in children.indices {
            markLeaves(of: children[position].value, from: nodes[position])
            nodes[position]._withUnsafeGuaranteedRef { $0.addWritten(children[position].value) }
        }
    }

    /// Records a batch at each node it writes and marks where it may put scalars. A guarded batch is
    /// recorded at its read paths too, where it asks for the transaction rule as a transaction does
    /// (`probe.covered` says whether every op recorded before it there was seen).
    private func insertBatch(_ op: Op, writes: [Write], reads: [Path], read: VersionVector?, probe: inout Probe) {
        // Each anchor once (a batch may write one node in several parts), and for each part, in the
        // order ``Op/forEachAnchor(_:)`` gives them, the position of its anchor.
        var anchors: [[Key]] = []
        var partAnchors: [Int] = []
        op.forEachAnchor { head, tail in
            let keys = tail.isEmpty ? head : head + tail
            if let known = anchors.firstIndex(of: keys) {
                partAnchors.append(known)
            } else {
                partAnchors.append(anchors.count)
                anchors.append(keys)
            }
        }
        // The rule at each read path, asked before the op is recorded anywhere: recorded at a written
        // node below or above a read path first, it would count as an op its origin had not seen.
        if let read { probe.covered = reads.allSatisfy { isCovered(path: $0, by: read) } }
        var nodes: [Unmanaged<Node>] = []
        nodes.reserveCapacity(anchors.count)
        if anchors.count > 1 { probe.parts.reserveCapacity(anchors.count) }
        for anchor in anchors {
            let guards = !reads.isEmpty && reads.contains { $0.keys == anchor }
            nodes.append(recordPart(op, at: anchor, [], listed: anchors.count > 1, guards: guards, probe: &probe))
        }
        if nodes.count == 1 { probe.anchor = nodes[0] }
        // Where the batch may put scalars, and the numbers it writes, marked from the nodes the walks
        // reached, part by part.
        var parts = partAnchors.makeIterator()
        func nextNode() -> Unmanaged<Node>? { parts.next().map { nodes[$0] } }
        for write in writes {
            switch write {
            case .set(_, let value):
                guard let node = nextNode() else { continue }
                markLeaves(of: value, from: node)
                node._withUnsafeGuaranteedRef { $0.addWritten(value) }
            case .merge(_, let children):
                for child in children {
                    guard let node = nextNode() else { continue }
                    markLeaves(of: child.value, from: node)
                    node._withUnsafeGuaranteedRef { $0.addWritten(child.value) }
                }
            case .increment(_, let by, let from):
                guard let node = nextNode() else { continue }
                node._withUnsafeGuaranteedRef { node in
                    node.mayBeScalar = true
                    node.addWritten(by)
                    node.addWritten(from)
                }
            }
        }
    }

    /// Records one anchor of a merge or a batch (a blind or whole write there, never an increment of its
    /// own kind), folding what its walk said into `probe`, and listing it in `probe.parts` when `listed`.
    private func recordPart(
        _ op: Op, at head: [Key], _ tail: [Key], listed: Bool, guards: Bool = false, probe: inout Probe
    ) -> Unmanaged<Node> {
        var part = Probe()
        let node = record(op, at: head, tail, stamp: op.stamp, reads: guards, read: nil, probe: &part)
        node._withUnsafeGuaranteedRef { $0.raiseNonIncrement(op.stamp) }
        probe.conflicts = probe.conflicts || part.conflicts
        probe.laterAbove = probe.laterAbove || part.laterAbove
        probe.scalarAbove = probe.scalarAbove || part.scalarAbove
        if listed {
            probe.parts.append(
                Part(
                    anchor: node, conflicts: part.conflicts || part.laterAbove, laterAbove: part.laterAbove,
                    scalarAbove: part.scalarAbove))
        }
        return node
    }

    /// Walks to the node whose keys are `head` then `tail` (a merge child's path, without joining the
    /// two into a new array), creating nodes, reading what older ops left before updating it with `op`.
    /// - Returns: the node reached, unretained.
    private func record(
        _ op: Op, at head: [Key], _ tail: [Key], stamp: Stamp, reads: Bool, read: VersionVector?,
        probe: inout Probe
    ) -> Unmanaged<Node> {
        // The trie owns its nodes and nothing is removed during the walk: the walk holds them
        // unretained, so that it takes and drops no reference per level.
        // The keys are borrowed from the paths' buffers: a copy of one whose text is on the heap (a push
        // id) takes and drops a reference.
        var current = Unmanaged.passUnretained(root)
        @inline(__always) func pass(_ key: Key) {
            current = current._withUnsafeGuaranteedRef { node in
                if let ownMax = node.ownMax, ownMax > stamp { probe.laterAbove = true }
                if node.mayBeScalar || node.callCount > 0 { probe.scalarAbove = true }
                if let read, probe.covered, !node.ownSequencesCovered(by: read) { probe.covered = false }
                node.trimSnapshots(from: stamp)
                update(node, stamp: stamp, reads: reads, below: true, op: op)
                return node.children.unretained(creating: key)
            }
        }
        head.withUnsafeBufferPointer { keys in
            for depth in keys.indices { pass(keys[depth]) }
        }
        tail.withUnsafeBufferPointer { keys in
            for depth in keys.indices { pass(keys[depth]) }
        }
        current._withUnsafeGuaranteedRef { node in
            if let subtreeMax = node.subtreeMax, subtreeMax > stamp { probe.conflicts = true }
            if let read, probe.covered, !node.subtreeSequences.isCovered(by: read) { probe.covered = false }
            update(node, stamp: stamp, reads: reads, below: false, op: op)
            node.trimSnapshots(from: stamp)
            node.lastArrival = arrivals
            node.insertOwn(Anchored(stamp: stamp, sequence: op.sequence))
        }
        return current
    }

    private func update(_ node: Node, stamp: Stamp, reads: Bool, below: Bool, op: Op) {
        if node.subtreeMax.map({ $0 < stamp }) ?? true { node.subtreeMax = stamp }
        if below, node.descendantMax.map({ $0 < stamp }) ?? true { node.descendantMax = stamp }
        if reads, node.subtreeTransactionMax.map({ $0 < stamp }) ?? true { node.subtreeTransactionMax = stamp }
        node.raiseSubtree(origin: op.origin, sequence: op.sequence)
    }

    /// Marks the scalar leaves of a value written at `node`, walking down from it.
    private func markLeaves(of value: Value, from node: Unmanaged<Node>) {
        switch value {
        case .null: return
        case .object(let children):
            for (key, child) in children where !child.isNull {
                markLeaves(of: child, from: node._withUnsafeGuaranteedRef { $0.children.unretained(creating: key) })
            }
        default: node._withUnsafeGuaranteedRef { $0.mayBeScalar = true }
        }
    }
}
