import WeftCore

/// What kind of session a token entry may open.
public enum PeerKind: String, Sendable, Hashable, CaseIterable {
    /// A replica (role peer or hub): it replicates ops.
    case peer
    /// A client (role client): it sends requests.
    case client
    /// Either, as every entry could before kinds existed: the default for a name no rule mentions.
    case any

    /// True when a hello with `role` may authenticate with an entry of this kind.
    public func admits(_ role: SyncRole) -> Bool {
        switch self {
        case .any: return true
        case .peer: return role != .client
        case .client: return role == .client
        }
    }
}

/// One rule: read and/or write on the paths a pattern names, and everything below them.
///
/// ```swift
/// let rule = try PathRule(grant: .write, pattern: "/users/$name/**")
/// ```
public struct PathRule: Sendable, Hashable, CustomStringConvertible {
    /// What the rule allows.
    public var grant: Grant
    /// Where.
    public var pattern: PathPattern

    /// A rule from its grant and pattern text.
    /// - Throws: ``SyncError`` with code ``SyncErrorCode/invalidConfiguration`` for an empty grant or a
    ///   bad pattern (see ``PathPattern/init(_:)``).
    public init(grant: Grant, pattern: String) throws(SyncError) {
        guard !grant.isEmpty else { throw SyncError(.invalidConfiguration, "a rule grants read, write or both") }
        self.grant = grant
        self.pattern = try PathPattern(pattern)
    }

    /// `read /public/**`, `write /users/$name/**` or `readwrite /`, as a rules file spells it.
    public var description: String { "\(Self.word(for: grant)) \(pattern)" }

    /// The word of a grant in a rules file and in messages.
    static func word(for grant: Grant) -> String {
        switch grant {
        case .readWrite: return "readwrite"
        case .read: return "read"
        case .write: return "write"
        default: return "nothing"
        }
    }
}

/// Who may touch what: the kind and path rules of each token name.
///
/// A name with at least one rule is denied every path no rule of it reaches; a name with no rule keeps
/// the whole tree, as every entry had before rules existed. Grants only add up: a path is readable when
/// some read rule reaches it (names it or one of its ancestors), writable when some write rule does.
///
/// ```swift
/// var rules = PathRules()
/// try rules.add(try PathRule(grant: .readWrite, pattern: "/users/$name"), for: "alice")
/// try rules.add(try PathRule(grant: .read, pattern: "/public"), for: "alice")
/// try rules.check(client: "alice", path: try Path("/users/alice/x"), access: .write)   // passes
/// try rules.check(client: "alice", path: try Path("/users/bob"), access: .read)        // throws permissionDenied
/// ```
public struct PathRules: Sendable, Hashable {
    /// The kind and rules of one name.
    public struct Entry: Sendable, Hashable {
        /// The sessions the name may open.
        public var kind: PeerKind = .any
        /// Its rules, in the order written; empty for the whole tree.
        public var rules: [PathRule] = []
    }

    /// The entries by name.
    public private(set) var entries: [String: Entry] = [:]

    /// No rules: every name keeps the whole tree and may open either kind of session.
    public init() {}

    /// True when no name has a kind or a rule.
    public var isEmpty: Bool { entries.isEmpty }

    /// Sets the kind of `name`.
    /// - Throws: ``SyncError`` with code ``SyncErrorCode/invalidConfiguration`` when `name` already has
    ///   another kind (an entry is a peer or a client, not both).
    public mutating func setKind(_ kind: PeerKind, for name: String) throws(SyncError) {
        let current = entries[name]?.kind ?? .any
        guard current == .any || current == kind else {
            throw SyncError(.invalidConfiguration, "\(name) is already a \(current); it cannot also be a \(kind)")
        }
        entries[name, default: Entry()].kind = kind
    }

    /// Adds a rule for `name`.
    /// - Throws: ``SyncError`` with code ``SyncErrorCode/invalidConfiguration`` beyond
    ///   ``SyncLimits/pathRulesPerNameMax`` rules.
    public mutating func add(_ rule: PathRule, for name: String) throws(SyncError) {
        guard (entries[name]?.rules.count ?? 0) < SyncLimits.pathRulesPerNameMax else {
            throw SyncError(
                .invalidConfiguration, "\(name) has more than \(SyncLimits.pathRulesPerNameMax) rules")
        }
        entries[name, default: Entry()].rules.append(rule)
    }

    /// The kind of `name` (``PeerKind/any`` when no rule mentions it).
    public func kind(of name: String) -> PeerKind { entries[name]?.kind ?? .any }

    /// The grants of `name`, its placeholders replaced; nil when it has no rule (the whole tree).
    public func grants(for name: String) -> PathGrants? {
        guard let rules = entries[name]?.rules, !rules.isEmpty else { return nil }
        return PathGrants(name: name, rules: rules)
    }

    /// Checks that `client` may `access` the subtree at `path`: the one function every way in (sessions,
    /// queries, HTTP) calls before it reads or writes for a client.
    ///
    /// - Throws: ``SyncError`` with code ``SyncErrorCode/permissionDenied`` naming the path and the rule
    ///   the client lacks.
    public func check(client: String, path: Path, access: Grant) throws(SyncError) {
        try grants(for: client)?.check(access, at: path)
    }
}

/// The rules of one name with `$name` replaced by it: what one session may read and write.
///
/// ```swift
/// let grants = rules.grants(for: "alice")
/// try grants?.check(.read, at: try Path("/public/news"))
/// ```
public struct PathGrants: Sendable, Hashable {
    /// The name the rules were resolved for.
    public let name: String
    /// The rules as written.
    public let rules: [PathRule]
    /// Each rule's grant and resolved pattern (rules whose `$name` made no valid key are left out).
    let resolved: [(grant: Grant, pattern: ResolvedPathPattern)]

    /// The rules of `name`, resolved.
    public init(name: String, rules: [PathRule]) {
        self.name = name
        self.rules = rules
        resolved = rules.compactMap { rule in rule.pattern.resolved(name: name).map { (rule.grant, $0) } }
    }

    /// Equal when resolved for the same name from the same rules.
    public static func == (lhs: PathGrants, rhs: PathGrants) -> Bool {
        lhs.name == rhs.name && lhs.rules == rhs.rules
    }

    /// Hashes the name and the rules (the resolved patterns follow from them).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(rules)
    }

    /// True when every bit of `access` is granted at `path` by some rule (grants add up, and reach down).
    public func allows(_ access: Grant, at path: Path) -> Bool {
        var missing = access
        for (grant, pattern) in resolved where !missing.isDisjoint(with: grant) && pattern.reaches(path) {
            missing.subtract(grant)
            if missing.isEmpty { return true }
        }
        return missing.isEmpty
    }

    /// True when `access` is granted over the whole tree.
    public func allowsEverywhere(_ access: Grant) -> Bool { allows(access, at: .root) }

    /// Throws unless `access` is granted at `path`.
    /// - Throws: ``SyncError`` with code ``SyncErrorCode/permissionDenied`` naming the path and the rule
    ///   lacking.
    public func check(_ access: Grant, at path: Path) throws(SyncError) {
        if let denial = denial(access, at: path) { throw denial }
    }

    /// The refusal of `access` at `path`, or nil when granted.
    public func denial(_ access: Grant, at path: Path) -> SyncError? {
        guard !allows(access, at: path) else { return nil }
        // Name the bit lacking: an increment needs both, and may lack only one.
        let lacking: Grant = allows(.write, at: path) ? .read : allows(.read, at: path) ? .write : access
        let word = PathRule.word(for: lacking)
        let shown = rules.prefix(8).map(\.description).joined(separator: ", ")
        let more = rules.count > 8 ? ", …" : ""
        return SyncError(
            .permissionDenied,
            "no \(word) access to \(path) for \(name): it lacks a rule granting \(word) on \(path) or above it "
                + "(its rules: \(shown)\(more))")
    }
}
