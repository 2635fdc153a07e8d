extension PathIndex {
    /// True when every op anchored on an ancestor-or-self of `path`, or anywhere below it, is covered
    /// by `read`: the transaction rule, for an index that holds only ops stamped before the transaction.
    func isCovered(path: Path, by read: VersionVector) -> Bool {
        var current = root
        if !current.ownSequencesCovered(by: read) { return false }
        for key in path.keys {
            guard let next = current.children[key] else { return true }
            current = next
            if !current.ownSequencesCovered(by: read) { return false }
        }
        return current.subtreeSequences.isCovered(by: read)
    }

    /// Records only which origins touched the op's anchors (for ops folded into the base, whose
    /// per-origin sequences still decide whether later transactions saw them).
    func insertTouches(of op: Op) {
        op.forEachAnchor { head, tail in
            insertTouch(at: tail.isEmpty ? head : head + tail, origin: op.origin, sequence: op.sequence)
        }
    }

    /// Every touch recorded at a node (``Node/latestOwn``), parents before children: what
    /// ``insertTouch(at:origin:sequence:)`` was given, one per node and origin at its highest sequence.
    func touches() -> [CompactedTouch] {
        var result: [CompactedTouch] = []
        var stack: [(node: Node, keys: [Key])] = [(root, [])]
        while let (node, keys) = stack.popLast() {
            node.latestOwn.forEach { entry in
                result.append(
                    CompactedTouch(path: Path(uncheckedKeys: keys), origin: entry.origin, sequence: entry.sequence))
            }
            for child in node.children.keyed.reversed() { stack.append((child.node, keys + [child.key])) }
        }
        return result
    }

    /// Records that `origin` touched the node at `keys` up to `sequence`.
    func insertTouch(at keys: [Key], origin: ReplicaID, sequence: UInt64) {
        // Unretained, as in `record`: the trie owns its nodes and the walk removes none.
        var current = Unmanaged.passUnretained(root)
        for key in keys { current = Self.pass(current, creating: key, origin: origin, sequence: sequence) }
        Self.touch(current, origin: origin, sequence: sequence)
    }

    /// One level of a touch's walk: `node` raises its subtree's sequences, and its child at `key` is next.
    @inline(__always) private static func pass(
        _ node: Unmanaged<Node>, creating key: Key, origin: ReplicaID, sequence: UInt64
    ) -> Unmanaged<Node> {
        node._withUnsafeGuaranteedRef { node in
            node.raiseSubtree(origin: origin, sequence: sequence)
            return node.children.unretained(creating: key)
        }
    }

    /// The end of a touch's walk: the node touched raises its subtree's sequences and its own.
    @inline(__always) private static func touch(_ node: Unmanaged<Node>, origin: ReplicaID, sequence: UInt64) {
        node._withUnsafeGuaranteedRef { node in
            node.raiseSubtree(origin: origin, sequence: sequence)
            node.latestOwn.raise(origin: origin, sequence: sequence)
        }
    }

    /// Records each touch (``insertTouch(at:origin:sequence:)``), in one walk that leaves the nodes of a
    /// touch's path only where the next one's path parts from it: a store reads its touches in path
    /// order, and a million of them share their leading keys.
    func insertTouches(_ touches: [CompactedTouch]) {
        var trail = TouchTrail(root: root)
        for touch in touches { trail.insert(at: touch.path.keys, origin: touch.origin, sequence: touch.sequence) }
    }

    /// The nodes of the last path a touch was recorded at, root first, held unretained (as in `record`:
    /// the trie owns its nodes and removes none while touches are recorded).
    private struct TouchTrail {
        private var nodes: [Unmanaged<Node>]
        private var keys: [Key] = []

        init(root: Node) { nodes = [Unmanaged.passUnretained(root)] }

        /// Records that `origin` touched the node at `path` up to `sequence`, as
        /// ``PathIndex/insertTouch(at:origin:sequence:)`` does, with the nodes the last path shares.
        mutating func insert(at path: [Key], origin: ReplicaID, sequence: UInt64) {
            var shared = 0
            while shared < path.count, shared < keys.count, path[shared] == keys[shared] { shared += 1 }
            nodes.removeLast(nodes.count - 1 - shared)
            for depth in 0..<shared {
                nodes[depth]._withUnsafeGuaranteedRef { $0.raiseSubtree(origin: origin, sequence: sequence) }
            }
            for depth in shared..<path.count {
                nodes.append(PathIndex.pass(nodes[depth], creating: path[depth], origin: origin, sequence: sequence))
            }
            PathIndex.touch(nodes[path.count], origin: origin, sequence: sequence)
            keys = path
        }
    }

    /// Removes the compacted ops from the own lists at their anchors: every own stamp at or below
    /// `frontier` there (compaction folds all of them, and own lists are sorted, so they are a prefix).
    func removeCompacted(_ ops: [Op], upTo frontier: Stamp) {
        var nodes: [ObjectIdentifier: Node] = [:]
        for op in ops {
            if case .call = op.kind, let node = node(at: op.path.keys[...]) { node.callCount -= 1 }
            op.forEachAnchor { head, tail in
                guard let node = node(at: head, tail) else { return }
                nodes[ObjectIdentifier(node)] = node
            }
        }
        for node in nodes.values { node.removeOwn(through: frontier) }
    }
}
