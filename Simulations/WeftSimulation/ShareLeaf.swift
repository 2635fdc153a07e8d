import WeftCore
import WeftSync

/// A replica of the hub topology that the hub files under path rules letting it read and write one
/// subtree only (a *leaf* limited to its *share*, see `Docs/SECURITY.md`): the hub sends it every op
/// projected into the share, carries the decisions the share cannot make, revises them when they change,
/// and sends it the share of its base when it compacts. Its own writes are the workload's, moved into the
/// share (a write outside it would close the session with `permissionDenied`).
///
/// ```swift
/// let leaf = ShareLeaf(replica: 1, root: "/items/i0")
/// leaf.pattern   // "/items/i0/**", the hub's rule for it
/// ```
public struct ShareLeaf: Codable, Sendable, Hashable {
    /// Its index (never the hub, never the late joiner).
    public var replica: Int
    /// The root of its share, as path text.
    public var root: String

    public init(replica: Int, root: String) {
        self.replica = replica
        self.root = root
    }

    /// The share every drawn leaf gets: a hot item of the workload, so that its ops straddle it (sets and
    /// merges in it, writes of other items and counters outside it, batches above it whose increments
    /// outside it the leaf cannot decide).
    public static let drawnRoot = "/items/i0"

    /// The root, parsed.
    var rootPath: Path? { try? Path(root) }

    /// The hub's rule for it: read and write the share's whole subtree.
    var pattern: String { root == "/" ? "/**" : root + "/**" }

    /// Checks what a schedule file says about the leaf.
    func validate(in scenario: Scenario) throws {
        func require(_ condition: Bool, _ reason: String) throws {
            guard condition else { throw SimulationError.invalidScenario(reason: reason) }
        }
        try require(scenario.topology == .hub, "a share leaf needs the hub topology")
        try require(
            (0..<scenario.replicaCount).contains(replica) && replica != Scenario.hubIndex,
            "the share leaf must be a replica other than the hub")
        try require(scenario.lateJoiner?.replica != replica, "the share leaf is not the late joiner")
        try require(scenario.sabotage == nil, "a share leaf runs the real engine only")
        try require(rootPath.map { $0 != .root } ?? false, "the share leaf's root must be a path below the root")
        try require((try? PathRule(grant: .readWrite, pattern: pattern)) != nil, "the share leaf's root is no rule")
        try require(
            !scenario.episodes.contains { if case .crash(replica, _) = $0.fault { true } else { false } },
            "a share leaf does not crash (the checker's disk model holds whole ops)")
    }

    /// Files the leaf in the hub's token book: its credential reads and writes the share only.
    func restrict(_ tokens: inout TokenBook, leafID: ReplicaID) throws {
        var rules = tokens.rules
        try rules.setKind(.peer, for: leafID.description)
        try rules.add(try PathRule(grant: .readWrite, pattern: pattern), for: leafID.description)
        tokens.rules = rules
    }

    // MARK: - The leaf's writes

    /// `write` moved into the share: an item's path takes the share's item in its place, any other path
    /// goes below the share's root; a relation change becomes its fallback there.
    func remap(_ write: WritePlan.Write) -> WritePlan.Write {
        guard let root = rootPath else { return write }
        let kind = Self.remap(write.kind, into: root)
        var path = Self.remap(write.path, into: root)
        // A batch sits at the common ancestor of what it writes (and reads): moved writes have another.
        switch kind {
        case .batch(let writes):
            path = writes.map(\.path).reduce(writes.first?.path ?? root) { $0.commonAncestor(with: $1) }
        case .guardedBatch(_, let reads, let writes):
            path = (reads + writes.map(\.path)).reduce(writes.first?.path ?? root) { $0.commonAncestor(with: $1) }
        default: break
        }
        return WritePlan.Write(index: write.index, tick: write.tick, writer: write.writer, path: path, kind: kind)
    }

    /// `path` moved below `root`: `/items/<any>/rest` becomes `root/rest`, any other `p` becomes `root/p`.
    static func remap(_ path: Path, into root: Path) -> Path {
        let keys = path.keys
        let moved = keys.count >= 2 && keys[0] == "items" ? root.keys + keys.dropFirst(2) : root.keys + keys
        // The workload's paths are a few keys deep: the depth limit is never near.
        return (try? Path(keys: moved)) ?? root
    }

    static func remap(_ kind: OpKind, into root: Path) -> OpKind {
        func move(_ write: Write) -> Write {
            switch write {
            case .set(let path, let value): return .set(remap(path, into: root), value)
            case .merge(let path, let children): return .merge(remap(path, into: root), children)
            case .increment(let path, let by, let from): return .increment(remap(path, into: root), by: by, from: from)
            }
        }
        switch kind {
        case .batch(let writes): return .batch(writes.map(move))
        case .guardedBatch(let read, let reads, let writes):
            return .guardedBatch(read: read, reads: reads.map { remap($0, into: root) }, writes: writes.map(move))
        default: return kind
        }
    }
}
