import Foundation
import WeftCore

/// A request body with Firebase's server values taken out: timestamps are replaced by the time of the
/// request, increments are listed by where they stand, to become Weft increment ops.
struct ServerValueBody {
    /// The body's value, with each increment removed (null in its place).
    var value: Value
    /// Each increment: the keys below the body's node where it stands, and its step.
    var increments: [(keys: [Key], step: Number)]
}

/// Reads `{".sv": "timestamp"}` and `{".sv": {"increment": N}}` out of a JSON body.
///
/// `.sv` is not a valid key of the data model, so the body is rewritten before it is parsed: each server
/// value object becomes the time (a number) or a marker string unique to this request, found again in the
/// parsed value and removed.
enum ServerValues {
    /// The bytes of `".sv"`.
    private static let svKey = Array("\".sv\"".utf8)

    /// Parses `bytes` as JSON with server values resolved at `nowMillis`.
    static func parse(_ bytes: [UInt8], nowMillis: Int64) throws(HTTPFailure) -> ServerValueBody {
        let (rewritten, markers) = try rewrite(bytes, nowMillis: nowMillis)
        let value: Value
        do {
            value = try Value(jsonBytes: rewritten)
        } catch {
            throw HTTPFailure.badRequest("Invalid data; couldn't parse JSON object, array, or value: \(error)")
        }
        return extract(value, markers: markers)
    }

    /// Parses the members of a PATCH body (names are relative paths) with server values resolved.
    static func members(_ bytes: [UInt8], nowMillis: Int64) throws(HTTPFailure) -> (
        members: [(name: String, value: Value)], markers: [String: Number]
    ) {
        let (rewritten, markers) = try rewrite(bytes, nowMillis: nowMillis)
        do {
            return (try Value.jsonMembers(String(decoding: rewritten, as: UTF8.self)), markers)
        } catch {
            throw HTTPFailure.badRequest("Invalid data; a PATCH body is a JSON object of paths to values: \(error)")
        }
    }

    /// Splits a parsed value into the value without increment markers and the increments.
    static func extract(_ value: Value, markers: [String: Number]) -> ServerValueBody {
        guard !markers.isEmpty else { return ServerValueBody(value: value, increments: []) }
        var increments: [(keys: [Key], step: Number)] = []
        func visit(_ node: Value, _ keys: [Key]) {
            switch node {
            case .string(let text):
                if let step = markers[text] { increments.append((keys, step)) }
            case .object(let children):
                for (key, child) in children { visit(child, keys + [key]) }
            default: break
            }
        }
        visit(value, [])
        var stripped = value
        for (keys, _) in increments {
            if keys.isEmpty {
                stripped = .null
            } else {
                stripped.write(.null, at: keys[...])
            }
        }
        return ServerValueBody(value: stripped, increments: increments)
    }

    private static func rewrite(_ bytes: [UInt8], nowMillis: Int64) throws(HTTPFailure) -> ([UInt8], [String: Number]) {
        guard contains(bytes, svKey) else { return (bytes, [:]) }
        let nonce = UUID().uuidString
        var markers: [String: Number] = [:]
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let end = try endOfString(bytes, index)
                out += bytes[index..<end]
                index = end
                continue
            }
            if byte == UInt8(ascii: "{") {
                var cursor = skipSpace(bytes, index + 1)
                if cursor + svKey.count <= bytes.count, Array(bytes[cursor..<cursor + svKey.count]) == svKey {
                    cursor = skipSpace(bytes, cursor + svKey.count)
                    guard cursor < bytes.count, bytes[cursor] == UInt8(ascii: ":") else {
                        throw HTTPFailure.badRequest("Invalid data; a server value is {\".sv\": …}")
                    }
                    let start = skipSpace(bytes, cursor + 1)
                    let end = try endOfValue(bytes, start)
                    let close = skipSpace(bytes, end)
                    guard close < bytes.count, bytes[close] == UInt8(ascii: "}") else {
                        throw HTTPFailure.badRequest("Invalid data; a server value object holds \".sv\" alone")
                    }
                    let inner = try? Value(jsonBytes: bytes[start..<end])
                    if inner == .string("timestamp") {
                        out += Array(String(nowMillis).utf8)
                    } else if let inner, inner.children.count == 1, let step = Number(inner["increment"]) {
                        let marker = "weft-sv-increment-\(nonce)-\(markers.count)"
                        markers[marker] = step
                        out += Array("\"\(marker)\"".utf8)
                    } else {
                        throw HTTPFailure.badRequest(
                            "Invalid data; the server values are {\".sv\": \"timestamp\"} and "
                                + "{\".sv\": {\"increment\": NUMBER}}")
                    }
                    index = close + 1
                    continue
                }
            }
            out.append(byte)
            index += 1
        }
        return (out, markers)
    }

    private static func contains(_ bytes: [UInt8], _ needle: [UInt8]) -> Bool {
        guard bytes.count >= needle.count else { return false }
        for start in 0...(bytes.count - needle.count) where bytes[start] == needle[0] {
            if Array(bytes[start..<start + needle.count]) == needle { return true }
        }
        return false
    }

    private static func skipSpace(_ bytes: [UInt8], _ start: Int) -> Int {
        var index = start
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        return index
    }

    /// The index just after the string starting at `start` (a quote).
    private static func endOfString(_ bytes: [UInt8], _ start: Int) throws(HTTPFailure) -> Int {
        var index = start + 1
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "\\") {
                index += 2
                continue
            }
            if bytes[index] == UInt8(ascii: "\"") { return index + 1 }
            index += 1
        }
        throw HTTPFailure.badRequest("Invalid data; couldn't parse JSON: a string is not closed")
    }

    /// The index just after the JSON value starting at `start`.
    private static func endOfValue(_ bytes: [UInt8], _ start: Int) throws(HTTPFailure) -> Int {
        guard start < bytes.count else { throw HTTPFailure.badRequest("Invalid data; a value is missing") }
        if bytes[start] == UInt8(ascii: "\"") { return try endOfString(bytes, start) }
        if bytes[start] == UInt8(ascii: "{") || bytes[start] == UInt8(ascii: "[") {
            var depth = 0
            var index = start
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    index = try endOfString(bytes, index)
                    continue
                }
                if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") { depth += 1 }
                if byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") {
                    depth -= 1
                    if depth == 0 { return index + 1 }
                }
                index += 1
            }
            throw HTTPFailure.badRequest("Invalid data; couldn't parse JSON: an object is not closed")
        }
        var index = start
        while index < bytes.count, !",}] \t\r\n".utf8.contains(bytes[index]) { index += 1 }
        return index
    }
}
