extension MergeEngine {
    /// The regions whose re-folds wait for the end of an ``MergeEngine/apply(_:)``, with a filter that
    /// tells most ops at once that they are related to none of them.
    ///
    /// A batch of a thousand ops from a few origins leaves tens of regions pending, and every later op of
    /// the batch asks whether it reaches one. The filter holds one bit per root and one per proper
    /// ancestor of a root, at a hash of their keys: a path none of whose ancestors-or-self has its root
    /// bit set, and whose own ancestor bit is clear, is related to no root, read in a few bit tests
    /// instead of a comparison with every root. A set bit says "maybe", and the roots are compared then.
    /// Bits are never cleared until the regions are taken (a widened region leaves its old root's bit
    /// behind): the filter only ever answers "maybe" too often, never "no" wrongly.
    struct PendingRegions {
        /// The regions, disjoint: none is related to another.
        private(set) var regions: [PendingRefold] = []
        /// The filter's words (``filterWords``, made with the first region): root bits in the first
        /// half, ancestor bits in the second.
        private var filter: [UInt64] = []

        static let filterWords = 64
        private static let halfBits = UInt64(filterWords * 32)

        var isEmpty: Bool { regions.isEmpty }
        var count: Int { regions.count }
        var indices: Range<Int> { regions.indices }
        subscript(position: Int) -> PendingRefold { regions[position] }

        /// The hash of the prefix of `head` then `tail` of `depth` keys, after the one of `depth - 1`.
        @inline(__always) private static func extend(_ state: UInt64, with key: Key) -> UInt64 {
            FastHash.finalize(state ^ key.hashBits)
        }

        @inline(__always) private func isSet(_ bit: UInt64) -> Bool {
            filter[Int(bit >> 6)] & (1 << (bit & 63)) != 0
        }

        @inline(__always) private mutating func set(_ bit: UInt64) {
            filter[Int(bit >> 6)] |= 1 << (bit & 63)
        }

        /// Sets the bits of a root: its own, and an ancestor bit for each proper ancestor.
        private mutating func mark(_ root: Path) {
            if filter.isEmpty { filter = Array(repeating: 0, count: Self.filterWords) }
            var state: UInt64 = 0
            for key in root.keys {
                set(Self.halfBits + state % Self.halfBits)
                state = Self.extend(state, with: key)
            }
            set(state % Self.halfBits)
        }

        /// False when the path whose keys are `head` then `tail` is surely related to no region's root;
        /// true when it may be (compare the roots then).
        func mayBeRelated(_ head: [Key], _ tail: [Key]) -> Bool {
            guard !regions.isEmpty else { return false }
            var state: UInt64 = 0
            if isSet(state % Self.halfBits) { return true }
            for key in head {
                state = Self.extend(state, with: key)
                if isSet(state % Self.halfBits) { return true }
            }
            for key in tail {
                state = Self.extend(state, with: key)
                if isSet(state % Self.halfBits) { return true }
            }
            return isSet(Self.halfBits + state % Self.halfBits)
        }

        /// False when no region's root is surely a descendant-or-self of `root`.
        private func mayContainRoot(_ root: Path) -> Bool {
            var state: UInt64 = 0
            for key in root.keys { state = Self.extend(state, with: key) }
            return isSet(state % Self.halfBits) || isSet(Self.halfBits + state % Self.halfBits)
        }

        /// True when `path` is related to a region's root (one is an ancestor-or-self of the other).
        func isRelated(to path: Path) -> Bool {
            mayBeRelated(path.keys, []) && regions.contains { $0.root.isRelated(to: path) }
        }

        /// The position of the region whose root is an ancestor-or-self of `path`, if any.
        func holder(of path: Path) -> Int? {
            guard mayBeRelated(path.keys, []) else { return nil }
            return regions.firstIndex { $0.root.isAncestorOrSelf(of: path) }
        }

        /// Adds `op` to the region at `position`, which must decide from its stamp on; `once` skips an op
        /// the region holds already (two anchors of one op may lie in one region).
        mutating func add(_ op: Op, to position: Int, once: Bool = false) {
            if !once || !regions[position].arriving.contains(where: { $0.stamp == op.stamp }) {
                regions[position].arriving.append(op)
            }
            regions[position].stamp = min(regions[position].stamp, op.stamp)
        }

        /// Adds a new region, then takes in the regions inside its root.
        mutating func append(_ region: PendingRefold) {
            regions.append(region)
            widen(at: regions.count - 1, to: region.root)
        }

        /// Makes `root` the root of the region at `position`, taking in the regions it contains.
        mutating func widen(at position: Int, to root: Path) {
            regions[position].root = root
            // The filter holds the other roots: a root none of which lies inside `root` needs no scan.
            let mayContain = filter.isEmpty || mayContainRoot(root)
            mark(root)
            guard mayContain,
                regions.indices.contains(where: { $0 != position && root.isAncestorOrSelf(of: regions[$0].root) })
            else { return }
            var merged = regions[position]
            // An op with several anchors may be in several of the regions.
            var known = Set(merged.arriving.map(\.stamp))
            var kept: [PendingRefold] = []
            for (other, region) in regions.enumerated() where other != position {
                if root.isAncestorOrSelf(of: region.root) {
                    merged.stamp = min(merged.stamp, region.stamp)
                    for op in region.arriving where known.insert(op.stamp).inserted { merged.arriving.append(op) }
                } else {
                    kept.append(region)
                }
            }
            regions = kept + [merged]
        }

        /// Takes every region out, leaving none pending.
        mutating func removeAll() -> [PendingRefold] {
            let taken = regions
            regions = []
            if !filter.isEmpty {
                for word in filter.indices { filter[word] = 0 }
            }
            return taken
        }
    }
}
