import WeftCore

/// The share of the tree a peer may read under its credential: where both its permissions (prefixes)
/// and its grants (patterns from a rules file) allow reading. A hub sends a peer limited to a share
/// each op projected into it (``OpProjection``).
///
/// ```swift
/// let share = CredentialShare(credential)       // peer leaf1 readwrite /stores/$name/**
/// share.relation(to: try Path("/stores"))         // .above
/// share.relation(to: try Path("/stores/leaf1/x")) // .inside
/// ```
public struct CredentialShare: ReadShare {
    let permissions: PathPermissions
    let grants: PathGrants?

    /// The read share of `credential`.
    public init(_ credential: PeerCredential) {
        permissions = credential.permissions
        grants = credential.grants
    }

    /// True when the share holds nothing.
    public var isEmpty: Bool { relation(to: .root) == .outside }

    public func relation(to path: Path) -> ShareRelation {
        let byPermissions = Self.relation(of: permissions, to: path)
        guard byPermissions != .outside, let grants else { return byPermissions }
        let byGrants = grants.relation(reading: path)
        switch (byPermissions, byGrants) {
        case (.inside, .inside): return .inside
        case (_, .outside): return .outside
        // Both reach below the path; what both reach there may still be nothing, which the restriction
        // of a value finds out key by key.
        default: return .above
        }
    }

    static func relation(of permissions: PathPermissions, to path: Path) -> ShareRelation {
        if permissions.allows(.read, subtree: path) { return .inside }
        if permissions.grant(at: path).contains(.read) { return .above }
        for (prefix, grant) in permissions.grants
        where grant.contains(.read) && prefix.depth > path.depth && path.isAncestorOrSelf(of: prefix) {
            return .above
        }
        return .outside
    }
}

extension PathGrants {
    /// Where `path` stands to what these rules let read: inside when a read rule reaches it, above when
    /// one names a path below it, else outside.
    public func relation(reading path: Path) -> ShareRelation {
        var result = ShareRelation.outside
        for (grant, pattern) in resolved where grant.contains(.read) {
            switch pattern.relation(to: path) {
            case .inside: return .inside
            case .above: result = .above
            case .outside: break
            }
        }
        return result
    }
}
