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
    /// Objects keyed `"0"`, `"1"`, … are first offered as objects; when that fails they are offered as
    /// arrays, with Firebase's rule (every key a non-negative integer, the largest below twice the count;
    /// missing indexes are null), so that `[String]` and other arrays read back what was written.
    /// - Throws: `WeftError` with code `decodingFailed`, saying at which path and why.
    func decode<T: Decodable>(_ type: T.Type, from value: Value, path: String) throws -> T {
        if let direct = value as? T { return direct }
        let objectText = DecodingJSON.text(of: value, arraysFromObjects: false)
        do {
            return try decoder.decode(T.self, from: Data(objectText.utf8))
        } catch let first {
            let arrayText = DecodingJSON.text(of: value, arraysFromObjects: true)
            guard arrayText != objectText else { throw Self.decodingFailed(T.self, first, path: path) }
            do {
                return try decoder.decode(T.self, from: Data(arrayText.utf8))
            } catch {
                throw Self.decodingFailed(T.self, error, path: path)
            }
        }
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
        codingPath.isEmpty
            ? "." : codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: "/")
    }
}

/// JSON text of a value for decoders, optionally turning array-like objects back into arrays.
enum DecodingJSON {
    static func text(of value: Value, arraysFromObjects: Bool) -> String {
        var out = ""
        append(value, arrays: arraysFromObjects, to: &out)
        return out
    }

    private static func append(_ value: Value, arrays: Bool, to out: inout String) {
        guard case .object(let children) = value else {
            out += value.jsonString()
            return
        }
        if arrays, let count = arrayCount(children) {
            out += "["
            for index in 0..<count {
                if index > 0 { out += "," }
                append(children[Key(unchecked: String(index))] ?? .null, arrays: arrays, to: &out)
            }
            out += "]"
            return
        }
        out += "{"
        for (offset, key) in children.keys.sorted().enumerated() {
            if offset > 0 { out += "," }
            out += Value.string(key.text).jsonString()
            out += ":"
            append(children[key] ?? .null, arrays: arrays, to: &out)
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
