/// How links with integrity are stored in the tree, shared by the planner, the integrity check and the
/// typed layer.
///
/// - A one-to-one link (`Relation`) at `S/f` holds the target's path as a string: `"/people/p1"`.
/// - A one-to-many link (`References`) at `S/f` holds one child per target, keyed by the target's
///   escaped path (``escape(_:)``), whose value is the target's path string.
/// - The target keeps a back-link per incoming link under its reserved child `~in`, keyed by the
///   escaped link path: `T/~in/%2Ftasks%2Ft1%2Fassignee = {"link": "/tasks/t1/assignee",
///   "source": "/tasks/t1", "rule": "nullify"}`.
/// - `/~relations` counts the relation changes applied: every one reads it and writes it plus one, which
///   serializes relation changes (see ``RelationPlanner``).
///
/// ```swift
/// RelationLayout.escape(try Path("/people/p1"))   // "%2Fpeople%2Fp1"
/// ```
public enum RelationLayout {
    /// The reserved child of an object that holds its incoming links.
    public static let backLinksKey: Key = "~in"
    /// The relation clock: the number of relation changes applied.
    public static let clockPath = Path(uncheckedKeys: ["~relations"])

    /// What happens to a link when its target is deleted.
    public enum DeleteRule: String, Sendable, Hashable, Codable, CaseIterable {
        /// The link is removed from its source (the field becomes nil, the entry leaves the collection).
        case nullify
        /// The source object is deleted too, with its own incoming links handled by their rules.
        case cascade
    }

    /// A back-link as stored on a target.
    public struct BackLink: Sendable, Hashable {
        /// The path of the link node in the source (`/tasks/t1/assignee`, or a `References` entry).
        public var link: Path
        /// The object that holds the link, deleted when the target is and the rule is `cascade`.
        public var source: Path
        /// What deleting the target does to the link.
        public var rule: DeleteRule
        /// The node a `nullify` removes: the link itself, or the entry holding it (an
        /// `AssociatedValues` entry keeps its link under `key`, beside its value).
        public var clear: Path

        public init(link: Path, source: Path, rule: DeleteRule, clear: Path? = nil) {
            self.link = link
            self.source = source
            self.rule = rule
            self.clear = clear ?? link
        }

        /// The stored value (`clear` only when it is not the link).
        public var value: Value {
            var children: [Key: Value] = [
                "link": .string(link.description), "source": .string(source.description),
                "rule": .string(rule.rawValue),
            ]
            if clear != link { children["clear"] = .string(clear.description) }
            return .object(children)
        }

        /// Reads a stored back-link; nil when the value is not one.
        public init?(_ value: Value) {
            guard case .string(let linkText) = value["link"], case .string(let sourceText) = value["source"],
                case .string(let ruleText) = value["rule"], let rule = DeleteRule(rawValue: ruleText),
                let link = RelationLayout.path(linkText), let source = RelationLayout.path(sourceText)
            else { return nil }
            var clear: Path?
            if case .string(let text) = value["clear"] {
                guard let path = RelationLayout.path(text), path.isAncestorOrSelf(of: link) else { return nil }
                clear = path
            }
            self.init(link: link, source: source, rule: rule, clear: clear)
        }
    }

    /// A path's text made into one key: `%` becomes `%25` and `/` becomes `%2F` (a path's keys hold no
    /// other forbidden character). Reversible, and distinct paths give distinct keys.
    public static func escape(_ path: Path) -> String {
        var result = ""
        result.reserveCapacity(path.description.utf8.count + 8)
        for character in path.description {
            switch character {
            case "%": result += "%25"
            case "/": result += "%2F"
            default: result.append(character)
            }
        }
        return result
    }

    /// The key of `path` escaped, checked against the key rules (at most 768 bytes).
    /// - Throws: ``RelationError/pathTooLong(_:)`` when the escaped path is not a valid key.
    public static func key(for path: Path) throws -> Key {
        do {
            return try Key(validating: escape(path))
        } catch {
            throw RelationError.pathTooLong(path)
        }
    }

    /// The node of the back-link of `link` on `target`.
    public static func backLinkPath(of link: Path, on target: Path) throws -> Path {
        try path(target, [backLinksKey, key(for: link)])
    }

    /// A link's target from the value stored at the link node: a canonical absolute path string.
    public static func target(of value: Value) -> Path? {
        guard case .string(let text) = value else { return nil }
        return path(text)
    }

    /// Parses a canonical absolute path (`/a/b`), nil for anything else.
    public static func path(_ text: String) -> Path? {
        guard text.first == "/", let parsed = try? Path(text), parsed.description == text, !parsed.isRoot else {
            return nil
        }
        return parsed
    }

    /// True when the object's node holds anything, back-links included: the object exists. Only a delete
    /// (a relation change, which removes what links to it) makes a linked object's node null; plain writes
    /// may remove all of its fields, but its back-links stay, and so does the object.
    public static func exists(_ value: Value) -> Bool { !value.isNull }

    /// `base` followed by `keys`, checking the depth.
    static func path(_ base: Path, _ keys: [Key]) throws -> Path {
        do {
            return try Path(keys: base.keys + keys)
        } catch {
            throw RelationError.pathTooLong(base)
        }
    }
}

/// Why a relation change could not be planned. Nothing is written when one is thrown.
public enum RelationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The link's target does not exist (its node is null) in the state the change was planned on.
    case targetMissing(Path)
    /// A path escaped into a key passes the key length limit, or a back-link path the depth limit.
    case pathTooLong(Path)
    /// A source, field or target path that cannot hold a relation (the root, or inside back-links).
    case invalidPath(Path)
    /// The change would write more parts than a batch may hold (``CoreLimits/batchPartsMax``).
    case tooManyWrites(Int)
    /// The change would read more paths than a guarded batch may (``CoreLimits/guardedReadsMax``): a
    /// delete cascading to too many objects, say.
    case tooManyReads(Int)

    public var description: String {
        switch self {
        case .targetMissing(let path): return "the link's target \(path) does not exist"
        case .pathTooLong(let path): return "the path \(path.description.prefix(200)) is too long to name a link"
        case .invalidPath(let path): return "\(path.description.prefix(200)) cannot hold a relation"
        case .tooManyWrites(let count):
            return "the change writes \(count) parts; a batch holds at most \(CoreLimits.batchPartsMax)"
        case .tooManyReads(let count):
            return "the change reads \(count) paths; a guarded batch reads at most \(CoreLimits.guardedReadsMax)"
        }
    }
}
