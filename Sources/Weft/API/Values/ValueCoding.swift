import Foundation
import WeftCore

/// Encoding of `Encodable` values into tree values and decoding of tree values into `Decodable` ones,
/// through the replica's `JSONEncoder` and `JSONDecoder`.
struct ValueCoding: Sendable {
    let encoder: JSONEncoder
    let decoder: JSONDecoder
    /// Whether a key the decoder misses (and an absent node) may be offered as an empty collection: the
    /// tree keeps no empty array or object, so `tags: []` is stored as nothing.
    var missingCollectionsAsEmpty = true

    /// The checked, normalized value of `value`, to be written at `path` (`nil` is null).
    ///
    /// A `Value` is taken as is (no round trip through JSON text).
    /// - Throws: `WeftError` with code `encodingFailed`, `invalidValue` (non-finite number), `invalidKey`,
    ///   `invalidPath` or `valueTooLarge`.
    func encode<T: Encodable>(_ value: T?, at path: Path) throws -> Value {
        try ValueCheck.validated(encodeUnchecked(value, at: path), at: path)
    }

    /// The value of `value` before the checks of ``ValueCheck`` (for writes that check several parts
    /// together).
    func encodeUnchecked<T: Encodable>(_ value: T?, at path: Path) throws -> Value {
        guard let value else { return .null }
        if let direct = value as? Value { return direct }
        let data: Data
        do {
            data = try encoder.encode(value)
        } catch let EncodingError.invalidValue(culprit, context) {
            let location = Self.describe(context.codingPath)
            if let number = culprit as? Double, !number.isFinite {
                throw WeftError(.invalidValue, "numbers must be finite; got \(number) at \(location)", path: "\(path)")
            }
            if let number = culprit as? Float, !number.isFinite {
                throw WeftError(.invalidValue, "numbers must be finite; got \(number) at \(location)", path: "\(path)")
            }
            throw WeftError(
                .encodingFailed, "cannot encode \(T.self) at \(location): \(context.debugDescription)",
                path: "\(path)")
        } catch {
            throw WeftError(.encodingFailed, "cannot encode \(T.self): \(error)", path: "\(path)")
        }
        return try WeftError.mapping(path: path.description) { try Value(jsonBytes: data) }
    }

    /// The value at a node decoded as `T`.
    ///
    /// The tree has no arrays: an array is stored as an object keyed `"0"`, `"1"`, …. Such objects are
    /// offered to the decoder as objects, and each one the type wants as an array (the decoder says so
    /// by failing there) is offered again as an array, with Firebase's rule (every key a non-negative
    /// integer, the largest below twice the count; missing indexes are null). The elements of an array
    /// share one shape, so a type needs one more attempt per array field, not per element; a field of
    /// dictionary type keyed by numbers stays an object.
    ///
    /// With ``missingCollectionsAsEmpty``, a key the decoder misses is offered again as an empty array,
    /// then as an empty object if the decoder wants a keyed container there (a dictionary, or a struct
    /// whose fields are all empty collections: it was stored as nothing too); an absent node likewise.
    /// A key whose type is not a collection stays missing, and the error says so.
    /// - Throws: `WeftError` with code `decodingFailed`, saying at which path and why.
    func decode<T: Decodable>(_ type: T.Type, from value: Value, path: String) throws -> T {
        if let direct = value as? T { return direct }
        let shape = DecodingShape()
        for _ in 0..<WeftLimits.decodingAttemptsMax {
            do {
                return try decoder.decode(T.self, from: Data(DecodingJSON.text(of: value, shape: shape).utf8))
            } catch {
                if shape.markArray(wantedBy: error, in: value) { continue }
                if missingCollectionsAsEmpty, shape.fillEmpty(wantedBy: error, in: value) { continue }
                throw Self.decodingFailed(T.self, shape.unfilled(error), path: path)
            }
        }
        throw WeftError(
            .decodingFailed,
            "cannot decode \(T.self): more than \(WeftLimits.decodingAttemptsMax) arrays to find in its shape",
            path: path)
    }

    static func decodingFailed(_ type: Any.Type, _ error: any Error, path: String) -> WeftError {
        let reason: String
        switch error {
        case DecodingError.typeMismatch(let expected, let context):
            reason = "expected \(expected) at \(describe(context.codingPath)): \(context.debugDescription)"
        case DecodingError.valueNotFound(let expected, let context):
            reason = "missing \(expected) at \(describe(context.codingPath)): \(context.debugDescription)"
        case DecodingError.keyNotFound(let key, let context):
            reason = "no key \"\(key.stringValue)\" at \(describe(context.codingPath))"
        case DecodingError.dataCorrupted(let context):
            reason = "invalid data at \(describe(context.codingPath)): \(context.debugDescription)"
        default:
            reason = "\(error)"
        }
        return WeftError(.decodingFailed, "cannot decode \(type): \(reason)", path: path)
    }

    /// A coding path as a relative node path (`.` for the node itself).
    static func describe(_ codingPath: [any CodingKey]) -> String {
        codingPath.isEmpty ? "." : codingPath.map(nodeKey).joined(separator: "/")
    }

    /// The key of the node a coding key names (an array element's index as its key).
    static func nodeKey(_ codingKey: any CodingKey) -> String {
        codingKey.intValue.map(String.init) ?? codingKey.stringValue
    }
}

/// Which objects of a tree a decoder wants as arrays: a trie over node paths where the elements of an
/// array share the child `*`.
final class DecodingShape {
    /// An empty collection offered for a missing key.
    enum Fill: Equatable {
        case array
        case object
    }

    /// The object here is wanted as an array.
    private(set) var isArray = false
    private var children: [String: DecodingShape] = [:]
    /// Empty collections offered for keys missing in the object here.
    private(set) var fills: [String: Fill] = [:]
    /// The empty collection offered for the node itself when it is absent (the root shape only).
    private(set) var selfFill: Fill?

    /// The shape of the children of an object at this node (nil: no array below).
    func child(_ key: String) -> DecodingShape? { children[isArray ? "*" : key] }

    /// Offers an empty collection where `error` says a key (or the absent node itself) is missing, or
    /// turns an empty array offered there into an empty object when the decoder wanted a keyed
    /// container. Returns false when there is nothing more to offer (the error is then the answer).
    func fillEmpty(wantedBy error: any Error, in value: Value) -> Bool {
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            let node = descend(context.codingPath)
            guard node.fills[key.stringValue] == nil else { return false }
            node.fills[key.stringValue] = .array
            return true
        case DecodingError.valueNotFound(_, let context) where context.codingPath.isEmpty && value == .null:
            guard selfFill == nil else { return false }
            selfFill = .array
            return true
        case DecodingError.typeMismatch(let expected, let context) where expected == [String: Any].self:
            guard let last = context.codingPath.last else {
                guard selfFill == .array else { return false }
                selfFill = .object
                return true
            }
            let parent = descend(context.codingPath.dropLast())
            let key = ValueCoding.nodeKey(last)
            guard parent.fills[key] == .array else { return false }
            parent.fills[key] = .object
            return true
        default:
            return false
        }
    }

    /// The error to report: a mismatch at an empty collection this shape offered is the missing key
    /// (or the absent node) it stood for.
    func unfilled(_ error: any Error) -> any Error {
        let context: DecodingError.Context
        switch error {
        case DecodingError.typeMismatch(_, let found), DecodingError.valueNotFound(_, let found): context = found
        default: return error
        }
        guard let last = context.codingPath.last else {
            guard selfFill != nil else { return error }
            return DecodingError.valueNotFound(
                Any.self, DecodingError.Context(codingPath: [], debugDescription: "the node is absent"))
        }
        let parentPath = Array(context.codingPath.dropLast())
        guard descend(parentPath).fills[ValueCoding.nodeKey(last)] != nil else { return error }
        return DecodingError.keyNotFound(
            last, DecodingError.Context(codingPath: parentPath, debugDescription: "the key is missing"))
    }

    /// The shape at a coding path, made where missing (array elements share `*`).
    private func descend(_ codingPath: some Sequence<any CodingKey>) -> DecodingShape {
        var node = self
        for codingKey in codingPath {
            let slot = node.isArray ? "*" : ValueCoding.nodeKey(codingKey)
            if let existing = node.children[slot] {
                node = existing
            } else {
                let made = DecodingShape()
                node.children[slot] = made
                node = made
            }
        }
        return node
    }

    /// Marks the object the decoder wanted as an array when `error` says so and that object can be one.
    /// Returns false when it cannot, or when it was already marked (the error is then the answer).
    func markArray(wantedBy error: any Error, in value: Value) -> Bool {
        guard case DecodingError.typeMismatch(let expected, let context) = error, expected == [Any].self else {
            return false
        }
        var node = self
        var current = value
        for codingKey in context.codingPath {
            let key = ValueCoding.nodeKey(codingKey)
            guard case .object(let children) = current, let next = children[Key(unchecked: key)] else { return false }
            current = next
            let slot = node.isArray ? "*" : key
            if let existing = node.children[slot] {
                node = existing
            } else {
                let made = DecodingShape()
                node.children[slot] = made
                node = made
            }
        }
        guard !node.isArray, case .object(let children) = current, DecodingJSON.arrayCount(children) != nil else {
            return false
        }
        node.isArray = true
        return true
    }
}

/// JSON text of a value for decoders, with the objects a ``DecodingShape`` marks as arrays.
enum DecodingJSON {
    static func text(of value: Value, shape: DecodingShape?) -> String {
        var out = ""
        if value == .null, let shape, let fill = shape.selfFill {
            appendFill(fill, shape: shape, to: &out)
        } else {
            append(value, shape: shape, to: &out)
        }
        return out
    }

    /// An empty collection offered for a missing key: `[]`, or an object of the fills below it.
    private static func appendFill(_ fill: DecodingShape.Fill, shape: DecodingShape?, to out: inout String) {
        guard fill == .object else {
            out += "[]"
            return
        }
        out += "{"
        appendFills(of: shape, skipping: [:], first: true, to: &out)
        out += "}"
    }

    /// The fills of `shape` whose keys `children` lacks, as members; `first` when no member precedes.
    private static func appendFills(
        of shape: DecodingShape?, skipping children: [Key: Value], first: Bool, to out: inout String
    ) {
        guard let shape else { return }
        var first = first
        for (key, fill) in shape.fills.sorted(by: { $0.key < $1.key }) where children[Key(unchecked: key)] == nil {
            if !first { out += "," }
            first = false
            out += Value.string(key).jsonString()
            out += ":"
            appendFill(fill, shape: shape.child(key), to: &out)
        }
    }

    private static func append(_ value: Value, shape: DecodingShape?, to out: inout String) {
        guard case .object(let children) = value else {
            out += value.jsonString()
            return
        }
        if let shape, shape.isArray, let count = arrayCount(children) {
            out += "["
            let elements = shape.child("*")
            for index in 0..<count {
                if index > 0 { out += "," }
                append(children[Key(unchecked: String(index))] ?? .null, shape: elements, to: &out)
            }
            out += "]"
            return
        }
        out += "{"
        for (offset, key) in children.keys.sorted().enumerated() {
            if offset > 0 { out += "," }
            out += Value.string(key.text).jsonString()
            out += ":"
            append(children[key] ?? .null, shape: shape?.child(key.text), to: &out)
        }
        appendFills(of: shape, skipping: children, first: children.isEmpty, to: &out)
        out += "}"
    }
    /// The array length when every key is a canonical non-negative integer and the largest is below twice
    /// the number of keys (Firebase's rule); nil otherwise.
    static func arrayCount(_ children: [Key: Value]) -> Int? {
        var largest = -1
        for key in children.keys {
            guard let index = Int(key.text), index >= 0, String(index) == key.text else { return nil }
            largest = max(largest, index)
        }
        guard largest >= 0, largest < 2 * children.count else { return nil }
        return largest + 1
    }
}
