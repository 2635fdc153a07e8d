import WeftCore

/// A path pattern of a rule: `/`-separated segments, each a key, `*` (any one key), `**` (any number of
/// keys, none included) or a key holding the `$name` placeholder, replaced by the client's own name.
///
/// A pattern names paths; a grant on a pattern reaches every path it names and everything below them,
/// since reading or writing a node reads or writes its whole subtree. So `/users/$name` and
/// `/users/$name/**` grant the same; `**` earns its keep inside a pattern (`/rooms/**/public`).
///
/// ```swift
/// let pattern = try PathPattern("/users/$name/**")
/// pattern.resolved(name: "alice")?.reaches(try Path("/users/alice/score"))   // true
/// pattern.resolved(name: "alice")?.reaches(try Path("/users/bob"))           // false
/// ```
public struct PathPattern: Sendable, Hashable, CustomStringConvertible {
    enum Segment: Sendable, Hashable {
        /// Exactly this key.
        case key(Key)
        /// A key holding `$name` (at least once), as written.
        case placeholder(String)
        /// Any one key.
        case one
        /// Any number of keys, none included.
        case any
    }

    /// The placeholder replaced by the client's name.
    public static let namePlaceholder = "$name"

    /// The pattern as written.
    public let description: String
    let segments: [Segment]

    /// Parses a pattern: it starts with `/`; `/` alone names the root (so the whole tree).
    ///
    /// - Throws: ``SyncError`` with code ``SyncErrorCode/invalidConfiguration`` for a pattern that does
    ///   not start with `/`, an empty, `.` or `..` segment (a pattern is never resolved: it says exactly
    ///   where), a `*` inside a key, a `$` other than `$name`, an invalid key, or more segments than
    ///   ``SyncLimits/pathPatternSegmentsMax``.
    public init(_ text: String) throws(SyncError) {
        func invalid(_ reason: String) -> SyncError {
            SyncError(.invalidConfiguration, "invalid path pattern \(text): \(reason)")
        }
        guard text.hasPrefix("/") else { throw invalid("it must start with /") }
        var segments: [Segment] = []
        let parts = text == "/" ? [] : text.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= SyncLimits.pathPatternSegmentsMax else {
            throw invalid("more than \(SyncLimits.pathPatternSegmentsMax) segments")
        }
        for part in parts.map(String.init) {
            switch part {
            case "": throw invalid("an empty segment (// or a trailing /)")
            case ".", "..": throw invalid("\(part) is not allowed in a pattern; write the path it means")
            case "*": segments.append(.one)
            case "**":
                // Two in a row say no more than one.
                if segments.last != .any { segments.append(.any) }
            default:
                guard !part.contains("*") else { throw invalid("* and ** stand alone between slashes") }
                if part.contains("$") {
                    let rest = part.replacingOccurrences(of: Self.namePlaceholder, with: "")
                    guard !rest.contains("$") else { throw invalid("$ only starts the placeholder $name") }
                    // What surrounds the placeholder must be valid key text, whatever the name.
                    if !rest.isEmpty {
                        do { _ = try Key(validating: rest) } catch { throw invalid("\(error)") }
                    }
                    segments.append(.placeholder(part))
                } else {
                    do { segments.append(.key(try Key(validating: part))) } catch { throw invalid("\(error)") }
                }
            }
        }
        description = text
        self.segments = segments
    }

    /// True when the pattern holds `$name`.
    public var hasPlaceholder: Bool {
        segments.contains { if case .placeholder = $0 { true } else { false } }
    }

    /// The pattern for the client `name`: `$name` replaced by it; nil when that makes an invalid key (a
    /// name holding `/`, `.` or `$`), so that the rule grants that client nothing.
    public func resolved(name: String) -> ResolvedPathPattern? {
        var resolved: [ResolvedPathPattern.Segment] = []
        resolved.reserveCapacity(segments.count)
        for segment in segments {
            switch segment {
            case .key(let key): resolved.append(.key(key))
            case .one: resolved.append(.one)
            case .any: resolved.append(.any)
            case .placeholder(let text):
                let replaced = text.replacingOccurrences(of: Self.namePlaceholder, with: name)
                guard let key = try? Key(validating: replaced) else { return nil }
                resolved.append(.key(key))
            }
        }
        return ResolvedPathPattern(segments: resolved)
    }
}

/// A ``PathPattern`` with its `$name` placeholder replaced: what a rule grants one client.
public struct ResolvedPathPattern: Sendable, Hashable {
    enum Segment: Sendable, Hashable {
        case key(Key)
        case one
        case any
    }

    let segments: [Segment]

    /// True when the pattern names `path` or one of its ancestors: a grant on the pattern reaches `path`.
    ///
    /// A table over (segments matched, keys consumed): at most 33 × 33 cells, whatever the `**`s.
    public func reaches(_ path: Path) -> Bool {
        let matched = table(for: path)
        // Any prefix of the path (the path itself or an ancestor) named by the whole pattern.
        return matched[segments.count].contains(true)
    }

    /// Where `path` stands to what the pattern reaches: inside it (the pattern names the path or an
    /// ancestor), above it (the pattern names some path below), or outside.
    public func relation(to path: Path) -> ShareRelation {
        let matched = table(for: path)
        if matched[segments.count].contains(true) { return .inside }
        // Some first segments name the whole path: the rest name keys below it (a `**` may name none,
        // but then the whole pattern would name the path, found above).
        for i in 0..<segments.count where matched[i][path.keys.count] { return .above }
        return .outside
    }

    /// `matched[i][j]`: the first i segments name exactly the first j keys of `path`.
    private func table(for path: Path) -> [[Bool]] {
        let keys = path.keys
        let patternCount = segments.count
        let keyCount = keys.count
        // matched[i][j]: the first i segments name exactly the first j keys.
        var matched = [[Bool]](repeating: [Bool](repeating: false, count: keyCount + 1), count: patternCount + 1)
        matched[0][0] = true
        for i in 0..<patternCount {
            for j in 0...keyCount where matched[i][j] {
                switch segments[i] {
                case .any:
                    // Zero keys, or one more key at each step to the right.
                    for k in j...keyCount { matched[i + 1][k] = true }
                case .one:
                    if j < keyCount { matched[i + 1][j + 1] = true }
                case .key(let key):
                    if j < keyCount, keys[j] == key { matched[i + 1][j + 1] = true }
                }
            }
        }
        return matched
    }
}
