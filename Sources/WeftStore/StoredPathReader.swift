import WeftCore

/// Reads back the canonical path texts a store writes (`/a/b`, and `/` for the root), row after row.
/// Rows read in key order share their leading keys with the row before: those are taken from it, so
/// that only the keys that differ are checked and made again.
struct StoredPathReader {
    private static let slash = UInt8(ascii: "/")

    /// The text of the last path read, and where each of its keys ends in it.
    private var lastText: [UInt8] = []
    private var lastEnds: [Int] = []
    private var lastPath = Path.root

    /// The path whose canonical text is `text`; nil when `text` is not one (no leading slash, an empty
    /// key, a trailing slash, a key that is not valid, or too deep).
    mutating func path(_ text: UnsafeBufferPointer<UInt8>) -> Path? {
        guard text.first == Self.slash else { return nil }
        if text.elementsEqual(lastText) { return lastPath }
        var common = 0
        let limit = min(text.count, lastText.count)
        while common < limit, text[common] == lastText[common] { common += 1 }
        // A key of the last path is shared when the text reaches past it alike and parts there too.
        var shared = 0
        while shared < lastEnds.count, lastEnds[shared] <= common,
            lastEnds[shared] == text.count || text[lastEnds[shared]] == Self.slash
        {
            shared += 1
        }
        var keys = Array(lastPath.keys[..<shared])
        lastEnds.removeLast(lastEnds.count - shared)
        var start = (lastEnds.last ?? 0) + 1
        // `/` alone is the root (no key can end before the second byte, so none is shared).
        if text.count > 1 {
            while start <= text.count {
                var end = start
                while end < text.count, text[end] != Self.slash { end += 1 }
                guard end > start, let key = Self.key(text, start..<end) else { return invalid() }
                keys.append(key)
                lastEnds.append(end)
                start = end + 1
            }
        }
        guard let path = try? Path(keys: keys) else { return invalid() }
        lastText.replaceSubrange(common..., with: text[common...])
        lastPath = path
        return path
    }

    /// Forgets the last path (its ends were cut short) and answers that the text is not a path.
    private mutating func invalid() -> Path? {
        lastText = []
        lastEnds = []
        lastPath = .root
        return nil
    }

    /// The valid key at `range` of `text`, or nil.
    static func key(_ text: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Key? {
        guard let key = String(validating: UnsafeBufferPointer(rebasing: text[range]), as: UTF8.self), Key.isValid(key)
        else { return nil }
        return Key(unchecked: key)
    }
}
