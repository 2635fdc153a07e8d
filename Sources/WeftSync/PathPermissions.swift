import WeftCore

/// What a grant allows at a path and below.
public struct Grant: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8

    /// A grant from its bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Reading values (get, watch, the value an increment replies with; receiving the ops of a
    /// replicating peer).
    public static let read = Grant(rawValue: 1)
    /// Writing values (set, merge, push, increment; sending ops to a replicating peer).
    public static let write = Grant(rawValue: 2)
    /// Both.
    public static let readWrite: Grant = [.read, .write]
}

/// Per path prefix permissions of one peer or client: the grant of the longest prefix that
/// contains a path decides; a path under no prefix is denied.
///
/// Reading or writing a subtree needs the grant at its path and at every more specific prefix
/// inside it, so a denied branch cannot be read or overwritten through an ancestor.
///
/// ```swift
/// let permissions = PathPermissions([.root: .read, try Path("/users/alice"): .readWrite])
/// permissions.allows(.write, subtree: try Path("/users/alice/score"))   // true
/// permissions.allows(.write, subtree: try Path("/users"))               // false
/// ```
public struct PathPermissions: Sendable, Hashable {
    /// The grant of each prefix.
    public private(set) var grants: [Path: Grant]

    /// Permissions from the grant of each prefix.
    public init(_ grants: [Path: Grant] = [:]) { self.grants = grants }

    /// Reading and writing everywhere.
    public static let all = PathPermissions([.root: .readWrite])

    /// Reading everywhere, writing nowhere.
    public static let readOnly = PathPermissions([.root: .read])

    /// The grant at `path`: the grant of the longest prefix containing it, or none.
    public func grant(at path: Path) -> Grant {
        var current: Path? = path
        while let candidate = current {
            if let grant = grants[candidate] { return grant }
            current = candidate.parent
        }
        return []
    }

    /// True when `access` is granted at `path` and at every more specific prefix below it.
    public func allows(_ access: Grant, subtree path: Path) -> Bool {
        guard grant(at: path).isSuperset(of: access) else { return false }
        for (prefix, grant) in grants where prefix.depth > path.depth && path.isAncestorOrSelf(of: prefix) {
            guard grant.isSuperset(of: access) else { return false }
        }
        return true
    }

    /// True when `access` is granted over the whole tree.
    public func allowsEverywhere(_ access: Grant) -> Bool { allows(access, subtree: .root) }
}
