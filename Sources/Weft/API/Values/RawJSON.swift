import Foundation
import WeftCore

/// The marker that selects the raw-JSON overloads, as in the seed API: `node.set(.raw, ["a": 1])`.
public enum RawMarker: Sendable {
    /// Selects the overload that takes a JSON object graph (`[String: Any]`, `[Any]`, `String`, numbers,
    /// `Bool`, `NSNull` or `nil`) instead of an `Encodable` value.
    case raw
}

/// Converts JSON object graphs (what `JSONSerialization` produces, or literals typed as `Any`) into
/// values, checking every rule of the data model on the way.
enum RawJSON {
    /// The value of a JSON object graph.
    ///
    /// Arrays become objects keyed `"0"`, `"1"`, …; `nil`, `NSNull` and null members vanish; integers stay
    /// exact Int64; a `UInt64` beyond `Int64.max` is refused, as JSON text refuses such an integer.
    /// - Throws: `WeftError` with code `invalidJSON` (a type JSON cannot hold), `invalidKey`, `invalidValue`
    ///   (non-finite number, or an unsigned integer beyond `Int64.max`) or `invalidPath` (nesting too deep).
    static func value(of json: Any?, at path: Path) throws -> Value {
        guard let json else { return .null }
        return try convert(json, keys: path.keys)
    }

    private static func convert(_ any: Any, keys: [Key]) throws -> Value {
        if let native = try nativeScalar(any, keys: keys) { return native }
        if let number = any as? NSNumber { return try convert(number, keys: keys) }
        if let string = any as? String { return .string(string) }
        if any is NSNull { return .null }
        if let dictionary = any as? [String: Any] {
            return try object(dictionary.lazy.map { ($0.key, $0.value) }, keys)
        }
        if let array = any as? [Any] {
            return try object(array.enumerated().lazy.map { (String($0.offset), $0.element) }, keys)
        }
        let mirror = Mirror(reflecting: any)
        if mirror.displayStyle == .optional {
            guard let wrapped = mirror.children.first?.value else { return .null }
            return try convert(wrapped, keys: keys)
        }
        throw WeftError(
            .invalidJSON, "a value of type \(type(of: any)) is not JSON; use the Encodable overload for it",
            path: Path.text(keys))
    }

    /// Swift scalars, matched on their exact type so that Foundation bridging does not turn `1` into `true`.
    private static func nativeScalar(_ any: Any, keys: [Key]) throws -> Value? {
        switch any {
        case let value as Bool where type(of: any) == Bool.self: return .bool(value)
        case let value as Int where type(of: any) == Int.self: return .int(Int64(value))
        case let value as Int64 where type(of: any) == Int64.self: return .int(value)
        case let value as Int32 where type(of: any) == Int32.self: return .int(Int64(value))
        case let value as Int16 where type(of: any) == Int16.self: return .int(Int64(value))
        case let value as Int8 where type(of: any) == Int8.self: return .int(Int64(value))
        case let value as UInt where type(of: any) == UInt.self: return try unsigned(UInt64(value), keys)
        case let value as UInt64 where type(of: any) == UInt64.self: return try unsigned(value, keys)
        case let value as UInt32 where type(of: any) == UInt32.self: return .int(Int64(value))
        case let value as UInt16 where type(of: any) == UInt16.self: return .int(Int64(value))
        case let value as UInt8 where type(of: any) == UInt8.self: return .int(Int64(value))
        case let value as Double where type(of: any) == Double.self: return try finite(value, keys)
        case let value as Float where type(of: any) == Float.self:
            // Through the shortest text form, so that 0.1 as Float stays 0.1 and not 0.100000001490116.
            return try finite(Double(value.description) ?? Double(value), keys)
        case let value as String where type(of: any) == String.self: return .string(value)
        default: return nil
        }
    }

    private static func convert(_ number: NSNumber, keys: [Key]) throws -> Value {
        if type(of: number) == type(of: NSNumber(value: true)) { return .bool(number.boolValue) }
        switch String(cString: number.objCType) {
        case "c", "s", "i", "l", "q": return .int(number.int64Value)
        case "C", "S", "I", "L", "Q": return try unsigned(number.uint64Value, keys)
        default: return try finite(number.doubleValue, keys)
        }
    }

    /// An unsigned integer, exact or refused: rounded to a double it would be another number.
    private static func unsigned(_ value: UInt64, _ keys: [Key]) throws -> Value {
        guard let exact = Int64(exactly: value) else {
            throw WeftError(
                .invalidValue,
                "integer \(value) is beyond the largest integer a value holds (\(Int64.max)); "
                    + "store it as a string to keep its digits, or as a Double",
                path: Path.text(keys))
        }
        return .int(exact)
    }

    private static func finite(_ value: Double, _ keys: [Key]) throws -> Value {
        guard value.isFinite else {
            throw WeftError(.invalidValue, "numbers must be finite; got \(value)", path: Path.text(keys))
        }
        return .double(value)
    }

    private static func object(_ members: some Sequence<(String, Any)>, _ keys: [Key]) throws -> Value {
        var children: [Key: Value] = [:]
        for (name, member) in members {
            let key = try WeftError.mapping(path: Path.text(keys)) { try Key(validating: name) }
            guard keys.count < CoreLimits.pathDepthMax else {
                throw WeftError(
                    .invalidPath, "the value reaches deeper than \(CoreLimits.pathDepthMax) levels",
                    path: Path.text(keys + [key]))
            }
            let child = try convert(member, keys: keys + [key])
            if !child.isNull { children[key] = child }
        }
        return .object(normalizing: children)
    }
}
