import WeftCore

/// What a store offers to keep the compacted base as overrides on top of the materialized tree.
///
/// Overrides never overlap: no override lies at or below another one's path.
/// Its methods throw `Failure`: `Never` for the memory store, so its callers need no `try`.
protocol BaseOverlayHost {
    associatedtype Failure: Error
    /// True when some override exists (the base then may differ from the tree).
    func hasOverrides() throws(Failure) -> Bool
    /// The tree's subtree at `path`.
    func treeSubtree(at path: Path) throws(Failure) -> Value
    /// The override at `path` or at one of its ancestors.
    func override(covering path: Path) throws(Failure) -> BaseOverride?
    /// The proper ancestor of `path` that holds a scalar in the tree, if any (there is at most one).
    func scalarAncestor(of path: Path) throws(Failure) -> Path?
    /// The overrides strictly below `path`.
    func overrides(below path: Path) throws(Failure) -> [BaseOverride]
    /// Stores `value` as the override at `path`, replacing one already there.
    mutating func putOverride(_ value: Value, at path: Path) throws(Failure)
    /// Deletes the overrides at and below `path`.
    mutating func deleteOverrides(atOrBelow path: Path) throws(Failure)
}

/// The base-overlay rules, written once for both stores.
///
/// The base is the tree, except at each override's path, where it is the override's value. An empty
/// override set means base = tree, which is what a log without unstable ops gives, at no cost.
enum BaseOverlay {
    /// The base's subtree at `path`.
    static func read<Host: BaseOverlayHost>(_ host: Host, at path: Path) throws(Host.Failure) -> Value {
        guard try host.hasOverrides() else { return try host.treeSubtree(at: path) }
        if let cover = try host.override(covering: path) {
            return cover.value.value(at: path.keys[cover.path.depth...])
        }
        return try readUncovered(host, at: path)
    }

    /// The base's subtree at `path`, which no override covers: the tree with the overrides below applied.
    private static func readUncovered<Host: BaseOverlayHost>(
        _ host: Host, at path: Path, below: [BaseOverride]? = nil
    ) throws(Host.Failure) -> Value {
        var value = try host.treeSubtree(at: path)
        let overrides: [BaseOverride]
        if let below { overrides = below } else { overrides = try host.overrides(below: path) }
        for override in overrides {
            value.write(override.value, at: override.path.keys[path.depth...])
        }
        return value
    }

    /// Records the current base of the region a write at `path` can change, unless an override already
    /// covers it. The region is the subtree at `path`, or at the scalar above it when there is one: a
    /// write below a scalar replaces that scalar.
    static func preserve<Host: BaseOverlayHost>(_ host: inout Host, at path: Path) throws(Host.Failure) {
        let region = try host.scalarAncestor(of: path) ?? path
        guard try host.hasOverrides() else {
            try host.putOverride(try host.treeSubtree(at: region), at: region)
            return
        }
        if try host.override(covering: region) != nil { return }
        let below = try host.overrides(below: region)
        let base = try readUncovered(host, at: region, below: below)
        if !below.isEmpty { try host.deleteOverrides(atOrBelow: region) }
        try host.putOverride(base, at: region)
    }

    /// Applies one base write.
    static func apply<Host: BaseOverlayHost>(
        _ write: StoreBatch.BaseWrite, to host: inout Host
    ) throws(Host.Failure) {
        switch write {
        case .set(let path, let value):
            if try host.hasOverrides(), let cover = try host.override(covering: path) {
                var merged = cover.value
                merged.write(value, at: path.keys[cover.path.depth...])
                try host.putOverride(merged, at: cover.path)
            } else {
                try host.deleteOverrides(atOrBelow: path)
                try host.putOverride(value, at: path)
            }
        case .release(let path):
            guard try host.hasOverrides() else { return }
            try host.deleteOverrides(atOrBelow: path)
            if let cover = try host.override(covering: path) {
                precondition(cover.path.depth < path.depth, "overrides at and below the path were deleted")
                var merged = cover.value
                merged.write(try host.treeSubtree(at: path), at: path.keys[cover.path.depth...])
                try host.putOverride(merged, at: cover.path)
            }
        case .releaseAll:
            try host.deleteOverrides(atOrBelow: .root)
        }
    }
}
