/// The roots of a re-fold (none inside another), asked which one holds a path. A re-fold asks it for
/// every write of every op it replays, and closing a re-fold's regions asks it for every anchor of
/// every failing batch: with hundreds of roots, comparing against each one cost more than the replay.
///
/// A few roots are compared one by one. More are filed under a hash of their keys; a question hashes
/// the path's prefixes as it walks down and looks one up only at the depths some root has, so it costs
/// about the path's depth, however many roots there are.
///
/// ```swift
/// let roots = RootSet([Path(uncheckedKeys: ["items", "i1"]), Path(uncheckedKeys: ["counters"])])
/// roots.position(holding: Path(uncheckedKeys: ["counters", "c3"]))   // 1
/// ```
struct RootSet {
    let roots: [Path]
    /// Roots this many or fewer are compared one by one.
    static let linearMax = 8
    /// A root's position under the hash of its keys; nil when roots are compared one by one (few of
    /// them, or two whose hashes collide).
    private let positions: [UInt64: Int32]?
    /// Bit `d` is set when a root has depth `d`.
    private let depths: UInt64
    /// The roots are in ascending order (a re-fold's are): those under a path are found by bisection.
    private let ascending: Bool

    init(_ roots: [Path]) {
        self.roots = roots
        ascending = zip(roots, roots.dropFirst()).allSatisfy { $0 < $1 }
        var depths: UInt64 = 0
        for root in roots { depths |= 1 << UInt64(root.depth) }
        self.depths = depths
        guard roots.count > Self.linearMax else {
            positions = nil
            return
        }
        var positions: [UInt64: Int32] = [:]
        positions.reserveCapacity(roots.count)
        for (position, root) in roots.enumerated() {
            var hash = Self.seed
            for key in root.keys { hash = Self.step(hash, key) }
            guard positions.updateValue(Int32(position), forKey: hash) == nil else {
                // Two roots share a hash (never seen in practice): compare one by one.
                self.positions = nil
                return
            }
        }
        self.positions = positions
    }

    private static let seed: UInt64 = 0x5EED_2007
    @inline(__always) private static func step(_ hash: UInt64, _ key: Key) -> UInt64 {
        FastHash.finalize(hash ^ key.hashBits)
    }

    /// The position of the root that is an ancestor-or-self of `path`, or nil.
    func position(holding path: Path) -> Int? { position(holdingJoined: path.keys, []) }

    /// The position of the root that is an ancestor-or-self of the path whose keys are `head` then
    /// `tail` (a merge child's node), or nil.
    func position(holdingJoined head: [Key], _ tail: [Key]) -> Int? {
        guard let positions else { return roots.firstIndex { $0.isAncestorOrSelf(ofJoined: head, tail) } }
        var hash = Self.seed
        if depths & 1 != 0, let found = match(positions, hash, head, tail) { return found }
        var depth: UInt64 = 1
        for key in head {
            guard depths >> depth != 0 else { return nil }
            hash = Self.step(hash, key)
            if depths & (1 << depth) != 0, let found = match(positions, hash, head, tail) { return found }
            depth += 1
        }
        for key in tail {
            guard depths >> depth != 0 else { return nil }
            hash = Self.step(hash, key)
            if depths & (1 << depth) != 0, let found = match(positions, hash, head, tail) { return found }
            depth += 1
        }
        return nil
    }

    @inline(__always) private func match(_ positions: [UInt64: Int32], _ hash: UInt64, _ head: [Key], _ tail: [Key])
        -> Int?
    {
        guard let position = positions[hash] else { return nil }
        let found = Int(position)
        return roots[found].isAncestorOrSelf(ofJoined: head, tail) ? found : nil
    }

    /// The positions of the roots inside the subtree of `path` (itself included): a range of the
    /// roots when they are ascending, as a path's descendants follow it in that order; else every
    /// position whose root it holds.
    func positions(under path: Path) -> [Int] {
        guard ascending else { return roots.indices.filter { path.isAncestorOrSelf(of: roots[$0]) } }
        var low = 0
        var high = roots.count
        while low < high {
            let middle = (low + high) / 2
            if roots[middle] < path { low = middle + 1 } else { high = middle }
        }
        var end = low
        while end < roots.count, path.isAncestorOrSelf(of: roots[end]) { end += 1 }
        return Array(low..<end)
    }

    /// True when a root is an ancestor-or-self of the path whose keys are `head` then `tail`.
    func holds(joined head: [Key], _ tail: [Key]) -> Bool { position(holdingJoined: head, tail) != nil }
}
