/// One changed node: its path and its value before and after.
public struct Change: Sendable, Hashable {
    public var path: Path
    public var old: Value
    public var new: Value
    /// The engine checked that, before the change, no ancestor of ``path`` held a scalar, and neither
    /// ``old`` nor ``new`` is an object: a store changes one row for it. False when not checked. It is
    /// a hint, not part of what changed: equality ignores it.
    public var isOneRow: Bool

    public init(path: Path, old: Value, new: Value, isOneRow: Bool = false) {
        self.path = path
        self.old = old
        self.new = new
        self.isOneRow = isOneRow
    }

    public static func == (lhs: Change, rhs: Change) -> Bool {
        lhs.path == rhs.path && lhs.old == rhs.old && lhs.new == rhs.new
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(path)
        hasher.combine(old)
        hasher.combine(new)
    }
}
