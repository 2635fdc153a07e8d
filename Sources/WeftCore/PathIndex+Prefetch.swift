import CPrefetch

extension PathIndex {
    /// Brings into the cache the index nodes that a batch of ops is about to walk, several walks in
    /// flight at once.
    ///
    /// On a large tree most nodes an op walks through are cold, and a walk waits for each level in
    /// turn. Here the walks to the ops' paths advance one step at a time, round robin over
    /// ``prefetchLanes`` of them: a step asks for the next slot or the next node and moves on to
    /// another walk while it comes, so the waits overlap. Nothing is created or changed, and a key that
    /// is not there ends its walk. Only the op's path is walked (for a merge or a batch, the common
    /// ancestor of what it writes): walking every anchor of those cost more than it saved.
    func prefetchWalks(of ops: [Op], in order: [Int]) {
        var lanes: [Lane] = []
        lanes.reserveCapacity(Self.prefetchLanes)
        var next = 0
        let root = Unmanaged.passUnretained(root)
        while lanes.count < Self.prefetchLanes, next < order.count {
            lanes.append(Lane(position: order[next], node: root))
            next += 1
        }
        while !lanes.isEmpty {
            var lane = 0
            while lane < lanes.count {
                if advance(&lanes[lane], in: ops) {
                    lane += 1
                } else if next < order.count {
                    lanes[lane] = Lane(position: order[next], node: root)
                    next += 1
                    lane += 1
                } else {
                    lanes.swapAt(lane, lanes.count - 1)
                    lanes.removeLast()
                }
            }
        }
    }

    /// Walks in flight at once in ``prefetchWalks(of:in:)``.
    static let prefetchLanes = 16

    /// Cache lines of a node asked for: a node's fields span about five.
    static let prefetchNodeLines = 5

    /// One walk of ``prefetchWalks(of:in:)``: the op, how deep it went, and the node reached.
    private struct Lane {
        var position: Int
        var level = 0
        var node: Unmanaged<Node>
        /// The slot of the next key in `node`'s table was asked for.
        var slotAsked = false

        init(position: Int, node: Unmanaged<Node>) {
            self.position = position
            self.node = node
        }
    }

    /// One step of a walk; false when it is over.
    @inline(__always) private func advance(_ lane: inout Lane, in ops: [Op]) -> Bool {
        let keys = ops[lane.position].path.keys
        guard lane.level < keys.count else { return false }
        let key = keys[lane.level]
        if !lane.slotAsked {
            lane.node._withUnsafeGuaranteedRef { $0.children.prefetchSlot(of: key) }
            lane.slotAsked = true
            return true
        }
        guard let child = lane.node._withUnsafeGuaranteedRef({ $0.children.probe(key) }) else { return false }
        let address = UnsafeRawPointer(child.toOpaque())
        for line in 0..<Self.prefetchNodeLines { weft_prefetch(address + 64 * line) }
        lane.node = child
        lane.level += 1
        lane.slotAsked = false
        return true
    }
}
