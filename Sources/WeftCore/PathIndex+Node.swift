import CPrefetch

extension PathIndex {
    /// A node of the trie. Its summaries are read and raised on every level every op walks through, so
    /// they skip the runtime's exclusivity bookkeeping: the index is driven by one owner, and no
    /// access to a summary overlaps another.
    final class Node {
        // Fields are laid out in declaration order: those every op reads or raises on each level it
        // walks through come first, then those it raises at its anchor, then those only transactions,
        // re-folds and failing batches use, so that a walk touches two or three cache lines per node,
        // not five, and the prefetcher's four lines hold every field an op changes at its anchor (one
        // in a fifth line is a wait on each op).
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
        @exclusivity(unchecked) private(set) var latestSubtree = OriginSequences()
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

        /// True when no op stamped after `stamp` is anchored strictly below.
        @inline(__always) func hasNothingBelow(after stamp: Stamp) -> Bool {
            descendantMax.map { $0 <= stamp } ?? true
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
}

// MARK: - Failing batches

extension PathIndex {
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
}
