import CPrefetch

extension PathIndex {
    /// Bytes of a Swift array's header (object header, count, capacity) before its first element:
    /// where a prefetch asks for the header of an array known by its elements' address.
    static let arrayHeaderBytes = 32

    /// Brings into the cache the index nodes that the next ops of a batch will walk, several walks in
    /// flight at once, a few ops ahead of the ops being applied.
    ///
    /// On a large tree most nodes an op walks through are cold, and a walk waits for each level in
    /// turn. The prefetcher walks the paths of the ops ahead one step at a time, round robin: a step
    /// asks for the next slot or the next node and moves on to another walk while it comes, so the
    /// waits overlap, and by the time an op is applied its nodes have come. The op itself is cold too
    /// (a batch's ops were made long before): a walk starts by asking for the op's body, and its next
    /// step for the header and first keys of the body's path, so that reading the keys is no wait
    /// either. It creates and changes nothing, and a key that is not there ends its walk. An op's path
    /// is walked, then, for a merge, each child below it. A batch's parts are not: reading them in
    /// place copies their payloads, each copy an atomic wait on a cold line.
    ///
    /// The walks hold nodes unretained: the index never removes a node. They never hold a slot: a
    /// table that grew since is read afresh.
    struct Prefetcher {
        /// Walks in flight at most, and how many ops ahead of the op being applied walks start.
        static let lanesMax = 16
        /// Batches with fewer ops are not prefetched: their walks have little to overlap with, and a
        /// single local write would pay for the lanes.
        static let batchOpsMin = 32
        /// Cache lines of a node asked for: those a walk reads and raises on its way through.
        static let nodeLines = 4

        private var lanes: [Lane] = []
        /// The position in `order` of the next op whose walk starts.
        private var next = 0
        private let root: Unmanaged<Node>

        init(index: PathIndex) {
            root = Unmanaged.passUnretained(index.root)
            lanes.reserveCapacity(Self.lanesMax)
        }

        /// Moves each walk in flight one step, then starts the walks of the ops after the one at
        /// `applied` in `order`, up to ``lanesMax`` of them. Call it before applying each op, with its
        /// place in `order`.
        mutating func advance(past applied: Int, of ops: [Op], in order: [Int]) {
            var lane = 0
            while lane < lanes.count {
                if step(&lanes[lane], in: ops) {
                    lane += 1
                } else {
                    lanes.swapAt(lane, lanes.count - 1)
                    lanes.removeLast()
                }
            }
            // A walk for an op already applied would be no use.
            next = max(next, applied + 1)
            let limit = min(order.count, applied + 1 + Self.lanesMax)
            while lanes.count < Self.lanesMax, next < limit {
                let position = order[next]
                weft_prefetch(UnsafeRawPointer(Unmanaged.passUnretained(ops[position].body).toOpaque()))
                lanes.append(Lane(position: position, node: root))
                next += 1
            }
        }

        /// Walks the paths of the first ops of a batch to their ends before any is applied: they have
        /// nothing ahead of them to overlap with.
        mutating func warmUp(_ ops: [Op], in order: [Int]) {
            repeat { advance(past: -1, of: ops, in: order) } while !lanes.isEmpty
        }

        /// One walk: the op, how deep it went, and the node reached.
        private struct Lane {
            var position: Int
            var level = 0
            var node: Unmanaged<Node>
            /// The slot of the next key in `node`'s table was asked for.
            var slotAsked = false
            /// For a merge whose path was walked: the child being walked to, below `mergeNode`.
            var mergeChild = -1
            var mergeNode: Unmanaged<Node>?
            /// The op's body was asked for when the lane started; this step asks for its path's keys,
            /// and the walk starts at the next.
            var keysAsked = false

            init(position: Int, node: Unmanaged<Node>) {
                self.position = position
                self.node = node
            }
        }

        /// One step of a walk; false when it is over.
        @inline(__always) private func step(_ lane: inout Lane, in ops: [Op]) -> Bool {
            // The op is read in place: a copy of it would take a reference to its body.
            if !lane.keysAsked {
                // The body came: ask for the header and first keys of its path, without reading them.
                if let base = ops[lane.position].path.keys._baseAddressIfContiguous {
                    let address = UnsafeRawPointer(base)
                    weft_prefetch(address - PathIndex.arrayHeaderBytes)
                    weft_prefetch(address + 32)
                }
                lane.keysAsked = true
                return true
            }
            guard lane.mergeChild >= 0 else {
                let keys = ops[lane.position].path.keys
                guard lane.level < keys.count else {
                    lane.node._withUnsafeGuaranteedRef { $0.prefetchOwnAppend() }
                    // A merge's children hang below its path: walk to each in turn.
                    guard case .merge(let children) = ops[lane.position].kind, !children.isEmpty else { return false }
                    lane.mergeChild = 0
                    lane.mergeNode = lane.node
                    lane.level = 0
                    return true
                }
                return descend(&lane, key: keys[lane.level])
            }
            guard case .merge(let children) = ops[lane.position].kind, let mergeNode = lane.mergeNode else {
                return false
            }
            let tail = children[lane.mergeChild].relative.keys
            guard lane.level < tail.count else {
                lane.node._withUnsafeGuaranteedRef { $0.prefetchOwnAppend() }
                lane.mergeChild += 1
                guard lane.mergeChild < children.count else { return false }
                lane.node = mergeNode
                lane.level = 0
                return true
            }
            return descend(&lane, key: tail[lane.level])
        }

        /// Asks for the slot of `key` in the lane's node, or, once it was asked for, for the child it
        /// holds; false when there is no such child (the walk ends).
        @inline(__always) private func descend(_ lane: inout Lane, key: Key) -> Bool {
            if !lane.slotAsked {
                lane.node._withUnsafeGuaranteedRef { $0.children.prefetchSlot(of: key) }
                lane.slotAsked = true
                return true
            }
            guard let child = lane.node._withUnsafeGuaranteedRef({ $0.children.probe(key) }) else { return false }
            let address = UnsafeRawPointer(child.toOpaque())
            for line in 0..<Self.nodeLines { weft_prefetch(address + 64 * line) }
            lane.node = child
            lane.level += 1
            lane.slotAsked = false
            return true
        }
    }
}
