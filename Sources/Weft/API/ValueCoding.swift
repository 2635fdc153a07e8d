import Foundation
import WeftCore

/// Encoding of `Encodable` values into tree values and decoding of tree values into `Decodable` ones,
/// through the replica's `JSONEncoder` and `JSONDecoder`.
struct ValueCoding: Sendable {
    let encoder: JSONEncoder
    let decoder: JSONDecoder

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
    /// - Throws: `WeftError` with code `decodingFailed`, saying at which path and why.
    func decode<T: Decodable>(_ type: T.Type, from value: Value, path: String) throws -> T {
        if let direct = value as? T { return direct }
        let shape = DecodingShape()
        for _ in 0..<WeftLimits.decodingAttemptsMax {
            do {
                return try decoder.decode(T.self, from: Data(DecodingJSON.text(of: value, shape: shape).utf8))
            } catch {
                guard shape.markArray(wantedBy: error, in: value) else {
                    throw Self.decodingFailed(T.self, error, path: path)
                }
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
    /// The object here is wanted as an array.
    private(set) var isArray = false
    private var children: [String: DecodingShape] = [:]

    /// The shape of the children of an object at this node (nil: no array below).
    func child(_ key: String) -> DecodingShape? { children[isArray ? "*" : key] }

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
        append(value, shape: shape, to: &out)
        return out
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
