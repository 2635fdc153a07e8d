/// An absolute path in the tree: the keys from the root down to a node.
///
/// Paths print as `/users/alice/score`; the root is `/`. Relative paths follow the seed API grammar:
/// `.` is a no-op, `..` goes up (a no-op at the root), empty segments are no-ops.
///
/// ```swift
/// let base = try Path("/foo/bar")
/// try base.resolving("../geek//noob/.")   // /foo/geek/noob
/// ```
public struct Path: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The keys from the root, each valid.
    public private(set) var keys: [Key]

    /// The root path `/`.
    public static let root = Path(uncheckedKeys: [])

    /// A path from keys already validated. Callers inside WeftCore only.
    @usableFromInline init(uncheckedKeys: [Key]) { self.keys = uncheckedKeys }

    /// A path from keys, each validated.
    /// - Throws: ``CoreError/invalidKey(key:reason:)`` or ``CoreError/pathTooDeep(path:depth:)``.
    public init(keys: [String]) throws {
        try self.init(keys: keys.map { try Key(validating: $0) })
    }

    /// A path from keys, checking the depth (keys made with ``Key/init(_:)`` are valid; literal ones are
    /// trusted).
    public init(keys: [Key]) throws {
        guard keys.count <= CoreLimits.pathDepthMax else {
            throw CoreError.pathTooDeep(path: Path.text(keys), depth: keys.count)
        }
        self.keys = keys
    }

    /// Parses a path string, resolved against the root (so `a/b`, `/a/b/` and `/x/../a/b` all give `/a/b`).
    /// - Throws: ``CoreError/invalidKey(key:reason:)`` or ``CoreError/pathTooDeep(path:depth:)``.
    public init(_ text: String) throws {
        self = try Path.root.resolving(text)
    }

    /// The path reached from this one by a relative path in the seed grammar.
    /// - Throws: ``CoreError/invalidKey(key:reason:)`` or ``CoreError/pathTooDeep(path:depth:)``.
    public func resolving(_ relative: String) throws -> Path {
        var result = keys
        for segment in relative.split(separator: "/", omittingEmptySubsequences: true) {
            switch segment {
            case ".": continue
            case "..": if !result.isEmpty { result.removeLast() }
            default:
                result.append(try Key(validating: String(segment)))
            }
        }
        guard result.count <= CoreLimits.pathDepthMax else {
            throw CoreError.pathTooDeep(path: Path.text(result), depth: result.count)
        }
        return Path(uncheckedKeys: result)
    }

    /// The path of a child of this node.
    /// - Throws: ``CoreError/invalidKey(key:reason:)`` or ``CoreError/pathTooDeep(path:depth:)``.
    public func child(_ key: String) throws -> Path {
        let checked = try Key(validating: key)
        guard keys.count < CoreLimits.pathDepthMax else {
            throw CoreError.pathTooDeep(path: Path.text(keys + [checked]), depth: keys.count + 1)
        }
        return Path(uncheckedKeys: keys + [checked])
    }

    /// This path with one more key, a ``Key`` already validated (read from a stored or decoded value).
    ///
    /// - Throws: ``CoreError/pathTooDeep(path:depth:)`` when the path would be too deep.
    public func child(_ key: Key) throws -> Path {
        guard keys.count < CoreLimits.pathDepthMax else {
            throw CoreError.pathTooDeep(path: Path.text(keys + [key]), depth: keys.count + 1)
        }
        return Path(uncheckedKeys: keys + [key])
    }

    /// This path followed by the keys of `relative` (already a valid path).
    /// - Throws: ``CoreError/pathTooDeep(path:depth:)``.
    public func appending(_ relative: Path) throws -> Path {
        let joined = keys + relative.keys
        guard joined.count <= CoreLimits.pathDepthMax else {
            throw CoreError.pathTooDeep(path: Path.text(joined), depth: joined.count)
        }
        return Path(uncheckedKeys: joined)
    }

    /// The parent path, nil at the root.
    public var parent: Path? { keys.isEmpty ? nil : Path(uncheckedKeys: Array(keys.dropLast())) }

    /// The last key, nil at the root.
    public var key: String? { keys.last?.text }

    /// True at the root.
    public var isRoot: Bool { keys.isEmpty }

    /// Number of keys.
    public var depth: Int { keys.count }

    /// True when `self` is `other` or one of its ancestors.
    public func isAncestorOrSelf(of other: Path) -> Bool { isAncestorOrSelf(ofJoined: other.keys, []) }

    /// True when this path is an ancestor-or-self of the path whose keys are `head` then `tail` (a merge
    /// child's node: its merge's path, then the child's relative path), without joining them.
    public func isAncestorOrSelf(ofJoined head: [Key], _ tail: [Key]) -> Bool {
        guard keys.count <= head.count + tail.count else { return false }
        return Self.startsAlike(keys, count: keys.count, head, tail)
    }

    /// True when the first `count` keys of `keys` are those of `head` then `tail`. Keys are compared in
    /// place, in one loop per part: picking a key from either part made a copy of it, and a key whose
    /// text lives on the heap (a push id) took and dropped a reference for it (re-folds ask this for
    /// every write of every op they replay, against every root).
    @inline(__always) private static func startsAlike(_ keys: [Key], count: Int, _ head: [Key], _ tail: [Key]) -> Bool {
        let inHead = min(count, head.count)
        for depth in 0..<inHead where keys[depth] != head[depth] { return false }
        for depth in inHead..<count where keys[depth] != tail[depth - head.count] { return false }
        return true
    }

    /// True when one path is an ancestor-or-self of the other: their subtrees overlap.
    public func isRelated(to other: Path) -> Bool { isAncestorOrSelf(of: other) || other.isAncestorOrSelf(of: self) }

    /// True when this path and the path whose keys are `head` then `tail` are related (one is an
    /// ancestor-or-self of the other), without joining them.
    public func isRelated(toJoined head: [Key], _ tail: [Key]) -> Bool {
        Self.startsAlike(keys, count: min(keys.count, head.count + tail.count), head, tail)
    }

    /// The keys of `other` below this path; nil when `other` is not inside this path's subtree.
    public func relativeKeys(of other: Path) -> ArraySlice<Key>? {
        guard isAncestorOrSelf(of: other) else { return nil }
        return other.keys[keys.count...]
    }

    /// The longest common ancestor-or-self of two paths.
    public func commonAncestor(with other: Path) -> Path {
        var count = 0
        while count < keys.count, count < other.keys.count, keys[count] == other.keys[count] { count += 1 }
        return Path(uncheckedKeys: Array(keys[..<count]))
    }

    public var description: String { Path.text(keys) }

    /// Orders paths key by key, comparing keys by UTF-8 bytes: a parent sorts before its children.
    public static func < (lhs: Path, rhs: Path) -> Bool {
        for (a, b) in zip(lhs.keys, rhs.keys) where a != b { return a < b }
        return lhs.keys.count < rhs.keys.count
    }

    /// The text form of a list of keys, which need not form a valid path (for error messages).
    public static func text(_ keys: some Collection<Key>) -> String {
        guard !keys.isEmpty else { return "/" }
        // Built by hand: a lazy map joined is generic code that looks its metadata up on every call, and
        // stores build a path's text for every row they write.
        var text = ""
        text.reserveCapacity(keys.reduce(0) { $0 + 1 + $1.text.utf8.count })
        for key in keys {
            text += "/"
            text += key.text
        }
        return text
    }
}
