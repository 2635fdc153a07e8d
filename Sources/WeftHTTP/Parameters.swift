import Foundation
import WeftCore

/// The query string of a REST request, read as Firebase reads it (each query value is JSON-encoded).
struct Parameters {
    private var values: [String: String] = [:]

    /// The parameters of a query string (`a=1&b=%22x%22`), percent-decoded; a `+` stays a `+`.
    init(query: String?) {
        for pair in (query ?? "").split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
            let value = parts.count > 1 ? String(parts[1]) : ""
            values[name] = value.removingPercentEncoding ?? value
        }
    }

    subscript(name: String) -> String? { values[name] }

    /// `pretty`, `silent` or nil.
    func printMode() throws(HTTPFailure) -> String? {
        guard let mode = values["print"] else { return nil }
        guard mode == "pretty" || mode == "silent" else {
            throw HTTPFailure.badRequest("print must be 'pretty' or 'silent', not '\(mode)'")
        }
        return mode
    }

    static let constraints = ["startAt", "endAt", "equalTo", "limitToFirst", "limitToLast"]

    /// The query the parameters ask for at `path`, or nil for a plain read.
    func query(at path: Path) throws(HTTPFailure) -> Query? {
        guard let orderBy = values["orderBy"] else {
            if Self.constraints.contains(where: { values[$0] != nil }) {
                throw HTTPFailure.badRequest("orderBy must be defined when other query parameters are defined")
            }
            return nil
        }
        do {
            guard orderBy.utf8.count <= HTTPLimits.queryParameterBytesMax,
                case .string(let field) = try Value(json: orderBy)
            else {
                throw HTTPFailure.badRequest("orderBy must be a valid JSON encoded path")
            }
            var query = Query(path: path)
            switch field {
            case "$key": query = try query.orderedByKey()
            case "$value": query = try query.orderedByValue()
            case "$priority": throw HTTPFailure.badRequest("orderBy \"$priority\" is not supported: Weft has no priorities")
            default: query = try query.orderedByChild(QueryField(field))
            }
            if let bound = try bound("startAt") { query = try query.starting(at: bound) }
            if let bound = try bound("endAt") { query = try query.ending(at: bound) }
            if let bound = try bound("equalTo") { query = try query.equal(to: bound) }
            if let count = try count("limitToFirst") { query = try query.limit(toFirst: count) }
            if let count = try count("limitToLast") { query = try query.limit(toLast: count) }
            return query
        } catch let failure as HTTPFailure {
            throw failure
        } catch {
            throw HTTPFailure.badRequest("Invalid query: \(error)")
        }
    }

    private func bound(_ name: String) throws(HTTPFailure) -> Value? {
        guard let text = values[name] else { return nil }
        guard text.utf8.count <= HTTPLimits.queryParameterBytesMax, let value = try? Value(json: text),
            !value.isObject
        else {
            throw HTTPFailure.badRequest("\(name) must be a JSON primitive (a quoted string, a number, true, false or null)")
        }
        return value
    }

    private func count(_ name: String) throws(HTTPFailure) -> Int? {
        guard let text = values[name] else { return nil }
        guard let count = Int(text), count > 0 else {
            throw HTTPFailure.badRequest("\(name) must be a positive integer")
        }
        return count
    }
}

/// Indented JSON for `print=pretty`, keys in the canonical order.
enum PrettyJSON {
    static func text(_ value: Value) -> String {
        var out = ""
        append(value, indent: 0, to: &out)
        return out
    }

    static func members(_ members: [(name: String, value: Value)]) -> String {
        guard !members.isEmpty else { return "{}" }
        var out = "{\n"
        for (index, (name, value)) in members.enumerated() {
            out += "  " + Value.string(name).jsonString() + ": "
            append(value, indent: 1, to: &out)
            out += index == members.count - 1 ? "\n" : ",\n"
        }
        return out + "}"
    }

    private static func append(_ value: Value, indent: Int, to out: inout String) {
        guard case .object(let children) = value else {
            out += value.jsonString()
            return
        }
        let pad = String(repeating: "  ", count: indent + 1)
        let keys = children.keys.sorted { Value.utf8Less($0.text, $1.text) }
        out += "{\n"
        for (index, key) in keys.enumerated() {
            out += pad + Value.string(key.text).jsonString() + ": "
            append(children[key] ?? .null, indent: indent + 1, to: &out)
            out += index == keys.count - 1 ? "\n" : ",\n"
        }
        out += String(repeating: "  ", count: indent) + "}"
    }
}
