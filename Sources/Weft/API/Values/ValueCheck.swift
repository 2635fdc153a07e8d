import WeftCore

/// Checks a value about to be written against the data model before anything is submitted: valid keys,
/// depth (counted from the root, so the node's own depth counts), string sizes, finite numbers, and the
/// size of the op that will carry it. Values parsed from JSON already pass most of these; values built in
/// code (transaction results, `Value` literals, raw dictionaries) may not. The command line checks its
/// writes with it too, before they leave for the daemon (hence `package`).
package enum ValueCheck {
    /// Bytes kept free in an op for its stamp, path, kind and read record, beside the value it carries.
    static let opOverheadBytesMax = 64 * 1024

    /// The largest encoded value one write may carry.
    static var valueBytesMax: Int { CoreLimits.opBytesMax - opOverheadBytesMax }

    /// Returns `value` normalized (null children and empty objects removed) after checking it.
    ///
    /// - Parameter path: the node the value is written at.
    /// - Throws: `WeftError` with code `invalidKey`, `invalidPath` (too deep), `invalidValue` (a string
    ///   too long, a non-finite number) or `valueTooLarge` (the whole value does not fit one op).
    package static func validated(_ value: Value, at path: Path) throws -> Value {
        var bytes = 0
        return try validated(value, at: path, bytes: &bytes)
    }

    /// ``validated(_:at:)`` for one part of a larger write: `bytes` counts every part so far.
    static func validated(_ value: Value, at path: Path, bytes: inout Int) throws -> Value {
        bytes += path.keys.reduce(0) { $0 + $1.text.utf8.count + 5 }
        try check(value, keys: path.keys, depth: path.depth, bytes: &bytes)
        return value.normalized
    }

    /// The children of a merge, each checked at its own path, sorted and checked for overlaps.
    /// - Throws: `WeftError` as ``validated(_:at:)``, or `invalidValue` when there is none or two listed
    ///   paths overlap.
    package static func mergeChildren(_ children: [MergeChild], under path: Path) throws -> [MergeChild] {
        var bytes = 0
        return try mergeChildren(children, under: path, bytes: &bytes)
    }

    /// ``mergeChildren(_:under:)`` for one part of a larger write: `bytes` counts every part so far.
    static func mergeChildren(_ children: [MergeChild], under path: Path, bytes: inout Int) throws -> [MergeChild] {
        guard !children.isEmpty else {
            throw WeftError(.invalidValue, "merge needs at least one member", path: path.description)
        }
        var checked: [MergeChild] = []
        checked.reserveCapacity(children.count)
        for child in children {
            let full = try WeftError.mapping(path: path.description) { try path.appending(child.relative) }
            try check(child.value, keys: full.keys, depth: full.depth, bytes: &bytes)
            bytes += child.relative.keys.reduce(0) { $0 + $1.text.utf8.count + 5 }
            guard bytes <= valueBytesMax else { throw tooLarge(path, bytes) }
            checked.append(MergeChild(relative: child.relative, value: child.value.normalized))
        }
        return try WeftError.mapping(path: path.description) { try MergeChild.validated(checked) }
    }

    private static func check(_ value: Value, keys: [Key], depth: Int, bytes: inout Int) throws {
        if let broken = value.brokenRule(depth: depth) { throw error(for: broken.rule, at: keys, key: broken.key) }
        bytes += 1
        switch value {
        case .null, .bool: return
        case .int: bytes += 10
        case .double: bytes += 8
        case .string(let s): bytes += 5 + s.utf8.count
        case .object(let children):
            bytes += 5
            for (key, child) in children {
                bytes += 5 + key.text.utf8.count
                try check(child, keys: keys + [key], depth: depth + 1, bytes: &bytes)
            }
        }
        guard bytes <= valueBytesMax else { throw tooLarge(Path.text(keys), bytes) }
    }

    /// The public error for a value that breaks a rule of the tree at `keys` (in its child `key`, for
    /// the rules of an object's children).
    private static func error(for rule: BrokenValueRule, at keys: [Key], key: Key?) -> WeftError {
        switch rule {
        case .nonFiniteNumber(let number):
            return WeftError(.invalidValue, "numbers must be finite; got \(number)", path: Path.text(keys))
        case .stringTooLong(let count):
            return WeftError(
                .invalidValue, "a string is \(count) bytes long; at most \(CoreLimits.stringBytesMax) are allowed",
                path: Path.text(keys))
        case .tooDeep:
            return WeftError(
                .invalidPath, "the value reaches deeper than \(CoreLimits.pathDepthMax) levels",
                path: Path.text(keys + (key.map { [$0] } ?? [])))
        case .invalidKey(let error):
            var mapped = WeftError(error)
            if mapped.path == nil { mapped.path = Path.text(keys) }
            return mapped
        }
    }

    private static func tooLarge(_ path: CustomStringConvertible, _ bytes: Int) -> WeftError {
        WeftError(
            .valueTooLarge,
            "the value needs more than \(bytes) bytes; one write carries at most \(valueBytesMax) (split it into "
                + "several writes or children)", path: path.description)
    }
}

extension WeftError {
    /// Runs `body`, turning a `CoreError` into the public error and filling in the path when missing.
    static func mapping<T>(path: String?, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as CoreError {
            var mapped = WeftError(error)
            if mapped.path == nil { mapped.path = path }
            throw mapped
        }
    }
}
