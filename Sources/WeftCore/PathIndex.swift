import CPrefetch

/// A trie over the anchor paths of ops, with per-node summaries the merge engine needs to decide
/// quickly whether an arriving op conflicts with ops already applied.
///
/// Summaries are maxima and only grow; after compaction they may name stamps that left the log, which
/// is harmless because every new op is stamped above the compaction frontier.
final class PathIndex {
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
        /// nothing but a useless fetch. The same loop as `find`'s without the confirmation: one loop
        /// with a flag for it measured 3 % slower in stamp order.
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

    /// A node of the trie. Its summaries are read and raised on every level every op walks through, so
    /// they skip the runtime's exclusivity bookkeeping: the index is driven by one owner, and no
    /// access to a summary overlaps another.
    final class Node {
        // Fields are laid out in declaration order: those every op reads or raises on each level it
        // walks through come first, then those it raises at its anchor, then those only transactions,
        // re-folds and failing batches use, so that a walk touches two or three cache lines per node,
        // not five, and the prefetcher's four lines hold every field an op changes at its anchor (the
        // three from `ownNonIncrementMaxSlot` to `numberMagnitude` had sat at bytes 256 to 288, in a
        // fifth line: a wait on each op).
        // Optional stamps are held in 16-byte slots (an optional stamp takes 24).

        /// The key of this node under its parent (empty for the root): a lookup in the parent's table
        /// confirms it.
        let key: Key
        @exclusivity(unchecked) private var ownMaxSlot = StampSlot()
        @exclusivity(unchecked) private var subtreeMaxSlot = StampSlot()
        @exclusivity(unchecked) private var descendantMaxSlot = StampSlot()
        @exclusivity(unchecked) private var lastSnapshotSlot = StampSlot()
        @exclusivity(unchecked) var children = Children()
        /// Some op may have put a scalar exactly here (so the node's kind depends on op order).
        @exclusivity(unchecked) var mayBeScalar = false
        /// ``latestSubtree`` is kept up to date: a transaction was anchored here, so the transaction rule
        /// asked for it. Only the nodes transactions are anchored at pay for raising it on every op that
        /// walks through them (the array of origins is a cache miss per level).
        @exclusivity(unchecked) private(set) var tracksSubtree = false
        /// ``latestOwn`` holds every op anchored here, not only compacted ones: the own list grew past
        /// ``ownScanMax`` entries, too many to read for each transaction walking through.
        @exclusivity(unchecked) private(set) var keepsOwnSequences = false
        /// Number of call ops anchored here (32 bits, to share a word with the flags above).
        @exclusivity(unchecked) var callCount: Int32 = 0
        /// The arrival count of the latest op anchored here or re-folded from here: it may have changed
        /// the subtree below at any stamp, so snapshots below taken before it are stale.
        @exclusivity(unchecked) var lastArrival: UInt64 = 0
        /// Ops anchored exactly here, ascending by stamp.
        @exclusivity(unchecked) private(set) var own = AnchorList()
        @exclusivity(unchecked) private var ownNonIncrementMaxSlot = StampSlot()
        /// Sum of the magnitudes of integer increments anchored here: a bound on how far any prefix of
        /// them can move the counter (used to prove that no prefix overflows).
        @exclusivity(unchecked) var incrementMagnitude: UInt64 = 0
        /// Sum of the magnitudes of the numbers ops anchored here write or start an increment from
        /// (infinite once one is not a multiple of 2^-16, or a call is anchored here): while it is below
        /// ``exactSumMax``, every number the node holds through these ops is a sum of some of them, which
        /// doubles add exactly in any order.
        @exclusivity(unchecked) var numberMagnitude: Double = 0
        /// Highest sequence per origin of the ops anchored here that left the own list (compacted,
        /// or recorded as touches only), and of every op anchored here once ``keepsOwnSequences``: a walk
        /// records an op at its anchor without it (the array of origins is a cache miss on a cold node),
        /// and the few own ops of such a node are read instead (``ownSequencesCovered(by:)``).
        @exclusivity(unchecked) var latestOwn = OriginSequences()
        @exclusivity(unchecked) private var subtreeTransactionMaxSlot = StampSlot()
        /// Highest sequence per origin of ops anchored here or below, kept only once ``tracksSubtree``:
        /// read ``subtreeSequences`` instead.
        @exclusivity(unchecked) private var latestSubtree = OriginSequences()
        /// Values of this node's subtree right after the op with each stamp, ascending, kept by re-folds
        /// so that the next re-fold here starts close to its op instead of at the base. Every op that
        /// walks through this node drops those at or after its stamp.
        @exclusivity(unchecked) var snapshots: [(stamp: Stamp, value: Value)] = [] {
            didSet { lastSnapshotSlot = StampSlot(snapshots.last?.stamp) }
        }
        /// Batches with several anchors that are rejected because of their part at this node.
        fileprivate(set) var failingBatches: [Stamp] = []
        /// Number of ``failingBatches`` here and below: a re-fold looks for them only where there are.
        fileprivate(set) var failingBelow = 0
        /// The children whose ``failingBelow`` is positive: a re-fold that looks for failing batches
        /// goes down only through them, not through every child of a wide node.
        fileprivate(set) var failingChildren: [Node] = []
        /// The arrival count when ``snapshots`` were last known valid.
        @exclusivity(unchecked) var snapshotsTakenAt: UInt64 = 0

        init(key: Key) { self.key = key }

        deinit { children.deallocate() }

        /// The last stamp of ``own``, held in the node: every op walking through reads it, and the
        /// array's buffer is another cache miss.
        @inline(__always) var ownMax: Stamp? { ownMaxSlot.stamp }
        /// Greatest stamp anchored here or below.
        @inline(__always) var subtreeMax: Stamp? {
            get { subtreeMaxSlot.stamp }
            set { subtreeMaxSlot = StampSlot(newValue) }
        }
        /// Greatest stamp anchored strictly below.
        @inline(__always) var descendantMax: Stamp? {
            get { descendantMaxSlot.stamp }
            set { descendantMaxSlot = StampSlot(newValue) }
        }
        /// The stamp of the last of ``snapshots``, held in the node: every op walking through asks whether
        /// it must drop some, and the array's buffer is a cache miss.
        @inline(__always) var lastSnapshot: Stamp? { lastSnapshotSlot.stamp }
        /// Greatest stamp of a transaction anchored here or below (its validity depends on what it saw).
        @inline(__always) var subtreeTransactionMax: Stamp? {
            get { subtreeTransactionMaxSlot.stamp }
            set { subtreeTransactionMaxSlot = StampSlot(newValue) }
        }
        /// Greatest stamp of an op anchored here that is not an increment.
        @inline(__always) var ownNonIncrementMax: Stamp? {
            get { ownNonIncrementMaxSlot.stamp }
            set { ownNonIncrementMaxSlot = StampSlot(newValue) }
        }

        /// Drops the snapshots at or after `stamp`.
        @inline(__always) func trimSnapshots(from stamp: Stamp) {
            guard let lastSnapshot, lastSnapshot >= stamp else { return }
            while let last = snapshots.last, last.stamp >= stamp { snapshots.removeLast() }
        }

        /// Records that `origin` reached `sequence` here or below, when the node keeps that summary.
        @inline(__always) func raiseSubtree(origin: ReplicaID, sequence: UInt64) {
            if tracksSubtree { latestSubtree.raise(origin: origin, sequence: sequence) }
        }

        /// Highest sequence per origin of ops anchored here or below. The first call gathers it from the
        /// own sequences of every node of the subtree, and from then on the node keeps it.
        var subtreeSequences: OriginSequences {
            if !tracksSubtree {
                var gathered = OriginSequences()
                var stack: [Node] = [self]
                while let node = stack.popLast() {
                    node.forEachOwnSequence { gathered.raise(origin: $0.origin, sequence: $0.sequence) }
                    stack.append(contentsOf: node.children.values)
                }
                latestSubtree = gathered
                tracksSubtree = true
            }
            return latestSubtree
        }

        func raiseNonIncrement(_ stamp: Stamp) {
            if ownNonIncrementMax.map({ $0 < stamp }) ?? true { ownNonIncrementMax = stamp }
        }

        /// Below this, sums of multiples of 2^-16 are exact in a double (53 bits of mantissa).
        static let exactSumMax: Double = 0x1p36

        /// Takes in a number written here (a non-number adds nothing).
        func addWritten(_ value: Value) {
            if let number = Number(value) { addWritten(number) }
        }

        /// Takes in a number written here, or a step or starting value of an increment anchored here.
        func addWritten(_ number: Number) { numberMagnitude += Self.exactMagnitude(of: number) }

        /// The magnitude of a multiple of 2^-16 held exactly; infinite for any other number.
        static func exactMagnitude(of number: Number) -> Double {
            switch number {
            case .int(let integer):
                return integer.magnitude < 1 << 52 ? Double(integer.magnitude) : .infinity
            case .double(let double):
                let scaled = double * 0x1p16
                return scaled.isFinite && scaled == scaled.rounded() ? double.magnitude : .infinity
            }
        }

        func addIncrement(_ by: Number) {
            let magnitude = by.magnitudeBound
            incrementMagnitude = incrementMagnitude > UInt64.max - magnitude ? .max : incrementMagnitude + magnitude
        }

        /// The first own op stamped after `stamp`.
        func ownFirst(after stamp: Stamp) -> Anchored? { own.first(after: stamp) }

        /// The most own ops a node without ``keepsOwnSequences`` holds: reading them for a transaction
        /// is then cheaper than raising ``latestOwn`` for each.
        static let ownScanMax = 16

        /// Records an op anchored here.
        @inline(__always) func insertOwn(_ anchored: Anchored) {
            own.insert(anchored)
            if ownMax.map({ $0 < anchored.stamp }) ?? true { ownMaxSlot = StampSlot(anchored.stamp) }
            if keepsOwnSequences {
                latestOwn.raise(origin: anchored.stamp.replica, sequence: anchored.sequence)
            } else if own.count > Self.ownScanMax {
                own.forEach(after: nil) { latestOwn.raise(origin: $0.stamp.replica, sequence: $0.sequence) }
                keepsOwnSequences = true
            }
        }

        /// Asks for the lines an append to the own list touches (see ``AnchorList/prefetchAppend()``).
        @inline(__always) func prefetchOwnAppend() { own.prefetchAppend() }

        /// Drops the own ops stamped at or below `frontier` (compacted), keeping their sequences.
        func removeOwn(through frontier: Stamp) {
            if !keepsOwnSequences {
                own.forEach(after: nil) { entry in
                    if entry.stamp <= frontier {
                        latestOwn.raise(origin: entry.stamp.replica, sequence: entry.sequence)
                    }
                }
            }
            own.removeThrough(frontier)
            ownMaxSlot = StampSlot(own.last?.stamp)
        }

        /// Calls `body` with the highest sequence of each origin among the ops anchored here (some
        /// origins more than once, with lower sequences too), in no particular order.
        func forEachOwnSequence(_ body: (OriginSequence) -> Void) {
            latestOwn.forEach(body)
            guard !keepsOwnSequences else { return }
            own.forEach(after: nil) { body(OriginSequence(origin: $0.stamp.replica, sequence: $0.sequence)) }
        }

        /// True when `read` holds the sequence of every op anchored here.
        func ownSequencesCovered(by read: VersionVector) -> Bool {
            guard latestOwn.isCovered(by: read) else { return false }
            return keepsOwnSequences || own.allSatisfy { read[$0.stamp.replica] >= $0.sequence }
        }
    }

    /// An optional stamp in 16 bytes: no replica has id 0, so a zero replica marks an empty slot.
    struct StampSlot {
        private var time: UInt64 = 0
        private var replica: UInt64 = 0

        init() {}

        @inline(__always) init(_ stamp: Stamp?) {
            guard let stamp else { return }
            time = stamp.time
            replica = stamp.replica.rawValue
        }

        @inline(__always) var stamp: Stamp? {
            replica == 0 ? nil : Stamp(time: time, replica: ReplicaID(nonZero: replica))
        }
    }

    struct OriginSequence {
        var origin: ReplicaID
        var sequence: UInt64
    }

    /// An op anchored at a node: its stamp, and its sequence, which finds it in its origin's log
    /// without a search.
    struct Anchored: Hashable {
        var stamp: Stamp
        var sequence: UInt64
    }

    /// The highest sequence per origin of the ops a node summarizes. The origin raised last is held
    /// inline: most nodes see one or two origins, ops come in runs of one origin, and an inline entry
    /// spares a heap object, and a cache miss, on every level an op walks through.
    struct OriginSequences {
        /// The origin raised last, as raw bits (0 when none: no replica has id 0, and an optional entry
        /// would take 8 bytes more in every node).
        private var firstOrigin: UInt64 = 0
        private var firstSequence: UInt64 = 0
        private var rest: [OriginSequence] = []

        /// No origin was raised.
        var isEmpty: Bool { firstOrigin == 0 }

        private var first: OriginSequence? {
            firstOrigin == 0
                ? nil : OriginSequence(origin: ReplicaID(nonZero: firstOrigin), sequence: firstSequence)
        }

        private mutating func setFirst(_ origin: ReplicaID, _ sequence: UInt64) {
            firstOrigin = origin.rawValue
            firstSequence = sequence
        }

        /// Records that `origin` reached `sequence` here.
        @inline(__always) mutating func raise(origin: ReplicaID, sequence: UInt64) {
            guard let head = first else {
                setFirst(origin, sequence)
                return
            }
            if head.origin == origin {
                if head.sequence < sequence { firstSequence = sequence }
                return
            }
            // The origin found moves to the inline place: ops come in runs of one origin (sync sends
            // an origin's ops in sequence order), and the rest of a run then stays off the heap.
            for i in rest.indices where rest[i].origin == origin {
                setFirst(origin, max(rest[i].sequence, sequence))
                rest[i] = head
                return
            }
            setFirst(origin, sequence)
            rest.append(head)
        }

        /// Calls `body` with each origin and its sequence, in no particular order.
        func forEach(_ body: (OriginSequence) -> Void) {
            guard let first else { return }
            body(first)
            for entry in rest { body(entry) }
        }

        /// True when `read` holds every origin's sequence.
        func isCovered(by read: VersionVector) -> Bool {
            guard let first else { return true }
            return read[first.origin] >= first.sequence && rest.allSatisfy { read[$0.origin] >= $0.sequence }
        }
    }

    let root = Node(key: "")
    /// Nothing was recorded.
    var isEmpty: Bool { root.children.values.isEmpty && root.latestOwn.isEmpty && root.own.isEmpty }
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

    /// Records that the batch stamped `stamp` is rejected because of its part at `keys` (`failing`), or
    /// no longer is; the node exists, as the batch is recorded there.
    func setFailing(_ failing: Bool, batch stamp: Stamp, at keys: ArraySlice<Key>) {
        guard let node = node(at: keys) else { return }
        let before = node.failingBatches.count
        if failing {
            node.failingBatches.append(stamp)
        } else {
            node.failingBatches.removeAll { $0 == stamp }
        }
        let delta = node.failingBatches.count - before
        guard delta != 0 else { return }
        var current = root
        current.failingBelow += delta
        for key in keys {
            guard let next = current.children[key] else { return }
            let wasFailing = next.failingBelow > 0
            next.failingBelow += delta
            if !wasFailing, next.failingBelow > 0 {
                current.failingChildren.append(next)
            } else if wasFailing, next.failingBelow == 0 {
                current.failingChildren.removeAll { $0 === next }
            }
            current = next
        }
    }

    /// Calls `body` with the node at `keys` and every node below it that has failing batches there or
    /// below (``Node/failingBelow``), parents before children; nothing when there are none.
    func forEachFailing(at keys: ArraySlice<Key>, _ body: (Node) -> Void) {
        var current = root
        for key in keys {
            guard current.failingBelow > 0, let next = current.children[key] else { return }
            current = next
        }
        guard current.failingBelow > 0 else { return }
        var stack = [current]
        while let node = stack.popLast() {
            body(node)
            stack.append(contentsOf: node.failingChildren)
        }
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
                case .merge, .batch:
                    break
                }
            }
        case .merge(let children):
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
        case .batch(let writes):
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
            var nodes: [Unmanaged<Node>] = []
            nodes.reserveCapacity(anchors.count)
            if anchors.count > 1 { probe.parts.reserveCapacity(anchors.count) }
            for anchor in anchors {
                nodes.append(recordPart(op, at: anchor, [], listed: anchors.count > 1, probe: &probe))
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
        if probe.laterAbove { probe.conflicts = true }
        return probe
    }

    /// Records one anchor of a merge or a batch (a blind or whole write there, never an increment of its
    /// own kind), folding what its walk said into `probe`, and listing it in `probe.parts` when `listed`.
    private func recordPart(_ op: Op, at head: [Key], _ tail: [Key], listed: Bool, probe: inout Probe)
        -> Unmanaged<Node>
    {
        var part = Probe()
        let node = record(op, at: head, tail, stamp: op.stamp, reads: false, read: nil, probe: &part)
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
