import WeftCore

/// The row form of the materialized tree: one row per scalar leaf, keyed by the leaf's path text
/// (`/a/b`, the root is `/`), holding the scalar's ``OpCodec`` encoding.
///
/// Keys never contain `/`, so the rows of the subtree at `/a` are the row `/a` and the range
/// `['/a/', '/a0')` (`'0'` is `'/' + 1`): one index range, which siblings such as `/a-b`, `/a0` or `/ab`
/// never enter.
enum TreeRows {
    /// The text key of `path`.
    static func text(_ path: Path) -> String { path.description }

    /// The keys that bound the rows of the subtree at `path`: the row `exact` (nil at the root) and
    /// the half-open range `[lower, upper)`.
    static func bounds(_ path: Path) -> (exact: String?, lower: String, upper: String) {
        guard !path.isRoot else { return (nil, "/", "0") }
        let text = path.description
        return (text, text + "/", text + "0")
    }

    /// The text keys of the proper ancestors of `path`, root first: `/`, `/a`, `/a/b` for `/a/b/c`.
    static func ancestorTexts(_ path: Path) -> [String] {
        var chain = chainTexts(path)
        chain.removeLast()
        return chain
    }

    /// The text keys of the ancestors of `path` and of `path` itself, root first: `/`, `/a`, `/a/b` for
    /// `/a/b`.
    static func chainTexts(_ path: Path) -> [String] {
        var result = ["/"]
        result.reserveCapacity(path.depth + 1)
        var text = ""
        for key in path.keys {
            text += "/" + key.text
            result.append(text)
        }
        return result
    }

    /// Calls `body` with the text key and encoded scalar of every leaf of `value` placed at `path`.
    static func forEachLeaf(
        of value: Value, at path: Path, _ body: (_ text: String, _ scalar: [UInt8]) throws -> Void
    ) rethrows {
        try forEachLeaf(of: value, prefix: path.isRoot ? "" : path.description, body)
    }

    private static func forEachLeaf(
        of value: Value, prefix: String, _ body: (String, [UInt8]) throws -> Void
    ) rethrows {
        switch value {
        case .null: return
        case .object(let children):
            for (key, child) in children { try forEachLeaf(of: child, prefix: prefix + "/" + key.text, body) }
        default:
            try body(prefix.isEmpty ? "/" : prefix, OpCodec.encode(value))
        }
    }

    /// Length of the text key of `path` as a prefix of its descendants' keys (0 at the root).
    static func textBytes(_ path: Path) -> Int {
        path.keys.reduce(0) { $0 + 1 + $1.text.utf8.count }
    }

    /// Bytes the rows of `value` at a path whose text is `textBytes` long would hold (keys and values):
    /// the size model of ``MemoryStore``.
    static func bytes(of value: Value, textBytes: Int) -> Int {
        switch value {
        case .null: return 0
        case .object(let children):
            return children.reduce(0) { $0 + bytes(of: $1.value, textBytes: textBytes + 1 + $1.key.text.utf8.count) }
        default:
            return max(textBytes, 1) + OpCodec.byteCount(of: value)
        }
    }
}

/// Rebuilds a subtree from its leaf rows, read in key order.
///
/// Rows in key order visit each object's subtree contiguously, so a stack of open objects suffices.
/// Keys are split on the UTF-8 bytes of each row's text, and a key becomes a `String` only when it opens
/// an object or names a leaf. Rows that cannot come from a valid tree (a bad key, a leaf below a scalar,
/// a duplicate, rows out of order) throw ``StoreError/corrupt(path:reason:)``.
struct TreeBuilder {
    /// The database path, for errors.
    let location: String
    /// The UTF-8 text of the subtree's root (empty for the tree's root).
    private let prefix: [UInt8]
    /// Keys of the open objects below the subtree's root.
    private var openKeys: [Key] = []
    /// Children of the subtree's root, then of each open object.
    private var frames: [[Key: Value]] = [[:]]
    /// The subtree's root, when it is a scalar.
    private var rootScalar: Value?
    /// Byte ranges of the keys of the row being added (kept to reuse its storage).
    private var keyRanges: [Range<Int>] = []

    /// A builder for the subtree at `path`.
    init(path: Path, location: String) {
        self.location = location
        self.prefix = path.isRoot ? [] : Array(path.description.utf8)
    }

    /// Adds the leaf row with key `text` and encoded scalar `encoded`.
    mutating func add(text: String, encoded: [UInt8]) throws {
        var text = text
        try text.withUTF8 { try add(text: $0, encoded: encoded) }
    }

    /// Adds the leaf row whose key has the UTF-8 bytes `text`.
    mutating func add(text: UnsafeBufferPointer<UInt8>, encoded: [UInt8]) throws {
        let leaf: Value
        do {
            leaf = try OpCodec.decodeValue(encoded)
        } catch {
            throw corrupt(text, "holds a bad value: \(error)")
        }
        guard !leaf.isNull, !leaf.isObject else {
            throw corrupt(text, "is not a scalar")
        }
        guard rootScalar == nil, text.count >= prefix.count, text[..<prefix.count].elementsEqual(prefix) else {
            throw misplaced(text)
        }
        let rest = prefix.count
        if text.count == rest || (prefix.isEmpty && text.count == 1 && text[0] == UInt8(ascii: "/")) {
            guard openKeys.isEmpty, frames[0].isEmpty else { throw misplaced(text) }
            rootScalar = leaf
            return
        }
        guard text[rest] == UInt8(ascii: "/") else { throw misplaced(text) }
        keyRanges.removeAll(keepingCapacity: true)
        var start = rest + 1
        for index in start..<text.count where text[index] == UInt8(ascii: "/") {
            keyRanges.append(start..<index)
            start = index + 1
        }
        keyRanges.append(start..<text.count)
        try insert(leaf, text: text)
    }

    private mutating func insert(_ leaf: Value, text: UnsafeBufferPointer<UInt8>) throws {
        let parents = keyRanges.count - 1
        var shared = 0
        while shared < openKeys.count, shared < parents,
            openKeys[shared].text.utf8.elementsEqual(UnsafeBufferPointer(rebasing: text[keyRanges[shared]]))
        {
            shared += 1
        }
        while openKeys.count > shared { closeObject() }
        for range in keyRanges[shared..<parents] {
            let key = try self.key(text, range)
            guard frames[frames.count - 1][key] == nil else { throw misplaced(text) }
            openKeys.append(key)
            frames.append([:])
        }
        let last = try key(text, keyRanges[parents])
        guard frames[frames.count - 1].updateValue(leaf, forKey: last) == nil else { throw misplaced(text) }
    }

    /// The valid key at `range` of `text`.
    private func key(_ text: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) throws -> Key {
        guard let key = StoredPathReader.key(text, range) else { throw misplaced(text) }
        return key
    }

    private mutating func closeObject() {
        let children = frames.removeLast()
        let key = openKeys.removeLast()
        precondition(!children.isEmpty, "an open object holds at least one leaf")
        frames[frames.count - 1][key] = .object(children)
    }

    private func misplaced(_ text: UnsafeBufferPointer<UInt8>) -> StoreError {
        corrupt(text, "does not fit the tree (bad key, duplicate or below a scalar)")
    }

    private func corrupt(_ text: UnsafeBufferPointer<UInt8>, _ problem: String) -> StoreError {
        .corrupt(path: location, reason: "tree leaf \(String(decoding: text, as: UTF8.self)) \(problem)")
    }

    /// The subtree built from the rows added.
    mutating func finish() -> Value {
        if let rootScalar { return rootScalar }
        while !openKeys.isEmpty { closeObject() }
        return frames[0].isEmpty ? .null : .object(frames[0])
    }
}
