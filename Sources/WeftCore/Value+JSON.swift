// JSON in and out for `Value`. A hand-written parser so that integers stay exact Int64 and every
// limit of the data model (keys, depth, string size) is checked while parsing.

extension Value {
    /// Parses JSON text into a normalized value.
    ///
    /// Arrays become objects keyed `"0"`, `"1"`, …; null members vanish; integers stay exact Int64 (an
    /// integer outside the Int64 range is refused, not rounded); numbers with a fraction or an exponent
    /// become doubles. Keys are validated with ``Key/validate(_:)``.
    ///
    /// ```swift
    /// let v = try Value(json: #"{"tags":["a","b"]}"#)   // {"tags":{"0":"a","1":"b"}}
    /// ```
    /// - Throws: ``CoreError/invalidJSON(offset:reason:)``, ``CoreError/invalidKey(key:reason:)`` or
    ///   ``CoreError/invalidValue(path:reason:)``.
    public init(json: String) throws {
        var text = json
        self = try text.withUTF8 { buffer in
            var parser = JSONParser(bytes: buffer)
            return try parser.parseDocument()
        }
    }

    /// Parses JSON bytes; see ``init(json:)``.
    public init(jsonBytes: some Collection<UInt8>) throws {
        let bytes = Array(jsonBytes)
        self = try bytes.withUnsafeBufferPointer { buffer in
            var parser = JSONParser(bytes: buffer)
            return try parser.parseDocument()
        }
    }

    /// Parses a JSON object whose member names are not keys but anything else a caller reads them as
    /// (relative paths such as `"a/b"` for a merge): the names come back as written, in order, with
    /// their values parsed as ``init(json:)`` does; null values are kept (a merge deletes there).
    ///
    /// ```swift
    /// try Value.jsonMembers(#"{"a/b": 1, "c": null}"#)   // [("a/b", 1), ("c", null)]
    /// ```
    /// - Throws: what ``init(json:)`` throws, and ``CoreError/invalidJSON(offset:reason:)`` when the text
    ///   is not an object.
    public static func jsonMembers(_ json: String) throws -> [(name: String, value: Value)] {
        var text = json
        return try text.withUTF8 { buffer in
            var parser = JSONParser(bytes: buffer)
            return try parser.parseMembers()
        }
    }

    /// Canonical JSON text: object keys sorted by their UTF-8 bytes, no white space.
    ///
    /// The same value always gives the same text, on every machine.
    public func jsonString() -> String {
        var out = ""
        appendJSON(to: &out)
        return out
    }

    func appendJSON(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d):
            if d == d.rounded(), abs(d) < 1e15 {
                // Whole doubles print with a fraction so they read back as doubles.
                out += String(Int64(d)) + ".0"
            } else {
                out += "\(d)"
            }
        case .string(let s): Value.appendQuoted(s, to: &out)
        case .object(let children):
            out += "{"
            var first = true
            for key in children.keys.sorted() {
                if !first { out += "," }
                first = false
                Value.appendQuoted(key.text, to: &out)
                out += ":"
                children[key]!.appendJSON(to: &out)
            }
            out += "}"
        }
    }

    /// Byte-wise order of UTF-8 strings: the same on every platform, unlike locale or Unicode order.
    public static func utf8Less(_ a: String, _ b: String) -> Bool {
        a.utf8.lexicographicallyPrecedes(b.utf8)
    }

    static func appendQuoted(_ s: String, to out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}

/// A recursive-descent JSON parser over UTF-8 bytes that builds normalized values.
struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    var offset = 0
    var depth = 0

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    mutating func parseDocument() throws -> Value { try parseWhole { try $0.parseValue(path: []) } }

    /// A whole document that is an object, member by member, names as written (see ``Value/jsonMembers(_:)``).
    mutating func parseMembers() throws -> [(name: String, value: Value)] {
        try parseWhole { parser in
            guard parser.offset < parser.bytes.count, parser.bytes[parser.offset] == UInt8(ascii: "{") else {
                throw parser.fail("expected an object")
            }
            var members: [(name: String, value: Value)] = []
            try parser.forEachMember(named: { $0 }) { parser, name in
                let value = try parser.parseValue(path: [])
                members.removeAll { $0.name == name }
                members.append((name, value))
            }
            return members
        }
    }

    /// The whole text read by `read`: within the size limit, with nothing but white space around it.
    private mutating func parseWhole<T>(_ read: (inout JSONParser) throws -> T) throws -> T {
        guard bytes.count <= CoreLimits.jsonBytesMax else {
            throw CoreError.invalidJSON(offset: 0, reason: "text is larger than \(CoreLimits.jsonBytesMax) bytes")
        }
        skipSpace()
        let result = try read(&self)
        skipSpace()
        guard offset == bytes.count else { throw fail("unexpected text after the value") }
        return result
    }

    /// Reads an object from its `{` to its `}`: each member's name goes through `name` (which may refuse
    /// it), then `member` reads its value.
    mutating func forEachMember<Name>(
        named name: (String) throws -> Name, _ member: (inout JSONParser, Name) throws -> Void
    ) throws {
        offset += 1
        skipSpace()
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "}") {
            offset += 1
            return
        }
        while true {
            skipSpace()
            guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") else { throw fail("expected a key") }
            let named = try name(parseString())
            skipSpace()
            guard offset < bytes.count, bytes[offset] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            offset += 1
            skipSpace()
            try member(&self, named)
            skipSpace()
            guard offset < bytes.count else { throw fail("unexpected end of text in object") }
            if bytes[offset] == UInt8(ascii: ",") {
                offset += 1
                continue
            }
            guard bytes[offset] == UInt8(ascii: "}") else { throw fail("expected ',' or '}'") }
            offset += 1
            return
        }
    }

    func fail(_ reason: String) -> CoreError { .invalidJSON(offset: offset, reason: reason) }

    mutating func skipSpace() {
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x20, 0x09, 0x0A, 0x0D: offset += 1
            default: return
            }
        }
    }

    mutating func parseValue(path: [Key]) throws -> Value {
        guard offset < bytes.count else { throw fail("unexpected end of text") }
        switch bytes[offset] {
        case UInt8(ascii: "{"): return try parseObject(path: path)
        case UInt8(ascii: "["): return try parseArray(path: path)
        case UInt8(ascii: "\""):
            let s = try parseString()
            guard s.utf8.count <= CoreLimits.stringBytesMax else {
                throw CoreError.invalidValue(
                    path: Path.text(path), reason: "string is longer than \(CoreLimits.stringBytesMax) bytes")
            }
            return .string(s)
        case UInt8(ascii: "t"): try expectWord("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectWord("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectWord("null"); return .null
        default: return try parseNumber()
        }
    }

    mutating func expectWord(_ word: StaticString) throws {
        let count = word.utf8CodeUnitCount
        guard offset + count <= bytes.count else { throw fail("unexpected end of text") }
        for i in 0..<count where bytes[offset + i] != word.utf8Start[i] { throw fail("unknown literal") }
        offset += count
    }

    mutating func enter(path: [Key]) throws {
        depth += 1
        guard depth <= CoreLimits.jsonNestingMax else {
            throw CoreError.invalidValue(
                path: Path.text(path), reason: "nesting is deeper than \(CoreLimits.jsonNestingMax) levels")
        }
    }

    /// Refuses a child that would lie deeper than ``CoreLimits/pathDepthMax``. The nesting limit leaves
    /// one level of slack for empty objects and arrays, which vanish, but never for a node that stays.
    func checkDepth(of path: [Key], key: Key) throws {
        guard path.count < CoreLimits.pathDepthMax else {
            throw CoreError.invalidValue(
                path: Path.text(path + [key]), reason: "value is deeper than \(CoreLimits.pathDepthMax) levels")
        }
    }

    mutating func parseObject(path: [Key]) throws -> Value {
        try enter(path: path)
        defer { depth -= 1 }
        var children: [Key: Value] = [:]
        try forEachMember(named: { try Key(validating: $0) }) { parser, key in
            let child = try parser.parseValue(path: path + [key])
            if child.isNull {
                children.removeValue(forKey: key)
            } else {
                try parser.checkDepth(of: path, key: key)
                children[key] = child
            }
        }
        return children.isEmpty ? .null : .object(children)
    }

    mutating func parseArray(path: [Key]) throws -> Value {
        try enter(path: path)
        defer { depth -= 1 }
        offset += 1
        var children: [Key: Value] = [:]
        var index = 0
        skipSpace()
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "]") {
            offset += 1
            return .null
        }
        while true {
            skipSpace()
            let key = Key(unchecked: String(index))
            let child = try parseValue(path: path + [key])
            if !child.isNull {
                try checkDepth(of: path, key: key)
                children[key] = child
            }
            index += 1
            skipSpace()
            guard offset < bytes.count else { throw fail("unexpected end of text in array") }
            if bytes[offset] == UInt8(ascii: ",") {
                offset += 1
                continue
            }
            guard bytes[offset] == UInt8(ascii: "]") else { throw fail("expected ',' or ']'") }
            offset += 1
            return children.isEmpty ? .null : .object(children)
        }
    }

    mutating func parseNumber() throws -> Value {
        let start = offset
        var isInteger = true
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "-") { offset += 1 }
        let digitsStart = offset
        while offset < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[offset]) { offset += 1 }
        guard offset > digitsStart else { throw fail("expected a value") }
        if bytes[digitsStart] == UInt8(ascii: "0"), offset - digitsStart > 1 { throw fail("leading zero in number") }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
            isInteger = false
            offset += 1
            let fractionStart = offset
            while offset < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[offset]) { offset += 1 }
            guard offset > fractionStart else { throw fail("expected digits after '.'") }
        }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "e") || bytes[offset] == UInt8(ascii: "E") {
            isInteger = false
            offset += 1
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") {
                offset += 1
            }
            let exponentStart = offset
            while offset < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[offset]) { offset += 1 }
            guard offset > exponentStart else { throw fail("expected digits in exponent") }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
        if isInteger {
            // An integer literal is exact or refused: rounding 2^63 or a 30-digit id to a double would
            // store another number than the one written, silently.
            guard let i = Int64(text) else {
                offset = start
                throw fail(
                    "integer \(text.count <= 40 ? text : String(text.prefix(40)) + "…") is outside the 64-bit range "
                        + "\(Int64.min)...\(Int64.max); write it as a string to keep its digits, or with an "
                        + "exponent (1.5e30) for an approximate double")
            }
            return .int(i)
        }
        guard let d = Double(text), d.isFinite else { throw fail("number is out of range") }
        return .double(d == 0 ? 0 : d)  // -0.0 is stored as 0.0: one number, one encoding, one digest
    }

    mutating func parseString() throws -> String {
        offset += 1
        var runStart = offset
        var out = ""
        func flushRun(_ end: Int) throws {
            guard end > runStart else { return }
            guard let run = String(validating: UnsafeBufferPointer(rebasing: bytes[runStart..<end]), as: UTF8.self)
            else { throw CoreError.invalidJSON(offset: runStart, reason: "string is not valid UTF-8") }
            out += run
        }
        while true {
            guard offset < bytes.count else { throw fail("unterminated string") }
            let byte = bytes[offset]
            if byte == UInt8(ascii: "\"") {
                try flushRun(offset)
                offset += 1
                return out
            }
            if byte < 0x20 { throw fail("control character in string") }
            if byte == UInt8(ascii: "\\") {
                try flushRun(offset)
                offset += 1
                guard offset < bytes.count else { throw fail("unterminated escape") }
                let escape = bytes[offset]
                offset += 1
                switch escape {
                case UInt8(ascii: "\""): out += "\""
                case UInt8(ascii: "\\"): out += "\\"
                case UInt8(ascii: "/"): out += "/"
                case UInt8(ascii: "b"): out += "\u{08}"
                case UInt8(ascii: "f"): out += "\u{0C}"
                case UInt8(ascii: "n"): out += "\n"
                case UInt8(ascii: "r"): out += "\r"
                case UInt8(ascii: "t"): out += "\t"
                case UInt8(ascii: "u"):
                    var code = try parseHex4()
                    if (0xD800...0xDBFF).contains(code) {
                        guard offset + 1 < bytes.count, bytes[offset] == UInt8(ascii: "\\"),
                            bytes[offset + 1] == UInt8(ascii: "u")
                        else { throw fail("lone high surrogate") }
                        offset += 2
                        let low = try parseHex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw fail("invalid low surrogate") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw fail("invalid unicode escape") }
                    out.unicodeScalars.append(scalar)
                default: throw fail("unknown escape")
                }
                runStart = offset
                continue
            }
            offset += 1
        }
    }

    mutating func parseHex4() throws -> UInt32 {
        guard offset + 4 <= bytes.count else { throw fail("truncated unicode escape") }
        var code: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[offset]
            let digit: UInt32
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(b - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(b - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(b - UInt8(ascii: "A") + 10)
            default: throw fail("invalid hex digit")
            }
            code = code * 16 + digit
            offset += 1
        }
        return code
    }
}
