import CPrefetch

extension PathIndex {
    /// The children of a node by key: every op walks its path through them, so a lookup reads one slot
    /// of an open-addressed table (the child and its key's hash bits together), where a dictionary
    /// reads its occupancy bitmap, its key and its value in three places. The child confirms the key.
    struct Children {
        /// A slot of the table: empty when `node` is nil.
        private struct Slot {
            var hashBits: UInt64
            var node: Unmanaged<Node>?
        }

        /// The table, unretained: ``values`` owns the children (children are never removed), so that a
        /// lookup on an op's walk takes and drops no reference. Freed by the node's `deinit`.
        private var slots: UnsafeMutablePointer<Slot>?
        /// The table's capacity minus one (a power of two minus one), held here so that a lookup reads
        /// only its slot.
        private var mask = 0
        /// The children, in the order they were made.
        private(set) var values: [Node] = []

        /// The first slot to look at for `hashBits`. The table's address seeds it, as the standard
        /// library's tables are seeded, so that keys cannot be chosen to fall into one run of slots.
        @inline(__always) private func start(_ hashBits: UInt64, in slots: UnsafeMutablePointer<Slot>) -> Int {
            FastHash.hash(hashBits, seed: Int(bitPattern: slots)) & mask
        }

        subscript(key: Key) -> Node? { find(key)?.takeUnretainedValue() }

        @inline(__always) private func find(_ key: Key) -> Unmanaged<Node>? {
            guard let slots else { return nil }
            var position = start(key.hashBits, in: slots)
            while let node = slots[position].node {
                if slots[position].hashBits == key.hashBits, node._withUnsafeGuaranteedRef({ $0.key == key }) {
                    return node
                }
                position = (position + 1) & mask
            }
            return nil
        }

        /// Every child with its key, sorted by key.
        var keyed: [(key: Key, node: Node)] { values.map { ($0.key, $0) }.sorted { $0.key < $1.key } }

        /// The child under `key`, unretained, made when missing.
        mutating func unretained(creating key: Key) -> Unmanaged<Node> {
            if let existing = find(key) { return existing }
            let made = Node(key: key)
            // At most three quarters full, so that a missing key's run of slots stays short.
            if (values.count + 1) * 4 > (mask + 1) * 3 || slots == nil { grow() }
            values.append(made)
            let unretained = Unmanaged.passUnretained(made)
            place(Slot(hashBits: key.hashBits, node: unretained))
            return unretained
        }

        private mutating func place(_ slot: Slot) {
            guard let slots else { return }
            var position = start(slot.hashBits, in: slots)
            while slots[position].node != nil { position = (position + 1) & mask }
            slots[position] = slot
        }

        private mutating func grow() {
            let capacity = slots == nil ? 4 : (mask + 1) * 2
            let old = slots
            let oldCapacity = old == nil ? 0 : mask + 1
            let made = UnsafeMutablePointer<Slot>.allocate(capacity: capacity)
            made.initialize(repeating: Slot(hashBits: 0, node: nil), count: capacity)
            slots = made
            mask = capacity - 1
            guard let old else { return }
            for position in 0..<oldCapacity where old[position].node != nil { place(old[position]) }
            old.deallocate()
        }

        /// Asks for the slot a lookup of `key` starts at to be brought into the cache.
        @inline(__always) func prefetchSlot(of key: Key) {
            guard let slots else { return }
            weft_prefetch(slots + start(key.hashBits, in: slots))
        }

        /// The child whose slot holds `key`'s hash bits, without the child confirming its key (reading
        /// the child is the wait a prefetch avoids): for prefetching only, where a wrong child costs
        /// nothing but a useless fetch. The same loop as `find`'s without the confirmation, kept apart: a
        /// shared loop would test a flag on every slot of every walk.
        @inline(__always) func probe(_ key: Key) -> Unmanaged<Node>? {
            guard let slots else { return nil }
            var position = start(key.hashBits, in: slots)
            while let node = slots[position].node {
                if slots[position].hashBits == key.hashBits { return node }
                position = (position + 1) & mask
            }
            return nil
        }

        /// Frees the table (the node's `deinit`; the children go with ``values``).
        func deallocate() { slots?.deallocate() }
    }
}
