import WeftCore

/// The regions of the tree whose compacted base the store keeps as overrides, or will keep once the
/// commits already queued are done. An op above the stable frontier may change the tree only inside
/// such a region, so the store can always rebuild the base (see "Compaction and the base" in
/// `Docs/STORAGE.md`).
///
/// A change outside every region claims one: the shallowest ancestor-or-self of the changed path whose
/// base holds at most ``WeftLimits/preservedRegionNodesMax`` nodes. A new database (empty base) is then
/// one region at the root, preserved once; a large base is split into small regions, each saved by one
/// cheap read when an op first touches it. Later changes inside a region cost a walk of this trie and
/// nothing in the store.
///
/// ```swift
/// let regions = PreservedRegions()
/// regions.claim(try Path("/users/alice/score"), base: engine.base)   // "/": the base is empty
/// regions.claim(try Path("/users/bob"), base: engine.base)           // nil: covered by "/"
/// ```
///
/// Not thread-safe: the replica's lock guards it.
final class PreservedRegions {
    private final class Node {
        var children: [Key: Node] = [:]
        var isRegion = false
    }

    private var root = Node()

    /// True when a region is at or above `path`.
    func covers(_ path: Path) -> Bool {
        var node = root
        if node.isRegion { return true }
        for key in path.keys {
            guard let next = node.children[key] else { return false }
            if next.isRegion { return true }
            node = next
        }
        return false
    }

    /// The region to preserve before a change at `path` is written, now claimed; nil when a region
    /// already covers `path`.
    func claim(_ path: Path, base: Value) -> Path? {
        guard !covers(path) else { return nil }
        var current = base
        var depth = 0
        while depth < path.depth,
            current.nodeCount(atMost: WeftLimits.preservedRegionNodesMax)
                > WeftLimits.preservedRegionNodesMax
        {
            current = current[path.keys[depth]]
            depth += 1
        }
        let region = depth == path.depth ? path : ((try? Path(keys: Array(path.keys[..<depth]))) ?? path)
        insert(region)
        return region
    }

    /// Marks `path` as a region; the regions below it are merged into it (as the store merges their
    /// overrides).
    func insert(_ path: Path) {
        var node = root
        for key in path.keys {
            if node.isRegion { return }
            if let next = node.children[key] {
                node = next
            } else {
                let next = Node()
                node.children[key] = next
                node = next
            }
        }
        node.isRegion = true
        node.children = [:]
    }

    /// Forgets every region (the store dropped every override).
    func removeAll() { root = Node() }
}

extension Value {
    /// The number of nodes of this value, counted up to `limit + 1` at most (so a large value costs no
    /// more than a small one).
    func nodeCount(atMost limit: Int) -> Int {
        var budget = limit + 1
        countNodes(budget: &budget)
        return limit + 1 - budget
    }

    private func countNodes(budget: inout Int) {
        switch self {
        case .null: return
        case .object(let children):
            budget -= 1
            for child in children.values where budget > 0 { child.countNodes(budget: &budget) }
        default:
            budget -= 1
        }
    }
}
