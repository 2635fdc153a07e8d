import Foundation
import WeftCore

/// Encoding and decoding of field values: plain scalars and `Data` directly, everything else through the
/// replica's coders (so a field reads exactly as `decodedValue(as:)` would read its node).
enum FieldCoding {
    /// The value of a field to store. `Data` is stored as a base64 string (whatever the encoder's
    /// strategy), so that it syncs and compacts as any string does.
    ///
    /// - Throws: `WeftError` with code `valueTooLarge` for `Data` over ``WeftLimits/modelDataBytesMax``,
    ///   or as `ValueCoding.encode`.
    static func encode<T: Encodable>(_ value: T, coding: ValueCoding, path: Path) throws -> Value {
        switch value {
        case let text as String: return .string(text)
        case let flag as Bool: return .bool(flag)
        case let number as Int: return .int(Int64(number))
        case let number as Int64: return .int(number)
        case let data as Data:
            guard data.count <= WeftLimits.modelDataBytesMax else {
                throw WeftError(
                    .valueTooLarge,
                    "a Data field holds at most \(WeftLimits.modelDataBytesMax) bytes; got \(data.count)",
                    path: path.description)
            }
            return .string(data.base64EncodedString())
        // An optional field left nil (a fresh object's), without a trip through the JSON encoder.
        case let optional as any OptionalField where optional.isNone: return .null
        default: return try coding.encode(value, at: path)
        }
    }

    /// The value a field stores when its object is inserted: the value `assigned`, else the declared
    /// default, else `T`'s zero; nil when there is none of them.
    static func inserted<T: Codable>(_ assigned: T?, default defaultValue: T?, coding: ValueCoding, path: Path) throws
        -> Value?
    {
        guard let value = assigned ?? defaultValue ?? FieldRead.zero(T.self) else { return nil }
        return try encode(value, coding: coding, path: path)
    }

    /// A stored value decoded as `T`.
    ///
    /// - Throws: `WeftError` with code `decodingFailed`.
    static func decode<T: Decodable>(_ type: T.Type, from value: Value, coding: ValueCoding, path: String) throws -> T {
        switch value {
        case .string(let text):
            if let typed = text as? T { return typed }
            if T.self == Data.self || T.self == Data?.self {
                guard let data = Data(base64Encoded: text), let typed = data as? T else {
                    throw WeftError(.decodingFailed, "cannot decode Data: the string is not base64", path: path)
                }
                return typed
            }
        case .bool(let flag): if let typed = flag as? T { return typed }
        case .int(let number):
            if let typed = Int(number) as? T { return typed }
            if let typed = number as? T { return typed }
            if let typed = Double(number) as? T { return typed }
        case .double(let number): if let typed = number as? T { return typed }
        case .null, .object: break
        }
        return try coding.decode(type, from: value, path: path)
    }

    /// The value a field of type `T` reads as when it holds nothing and declares no default: nil for an
    /// optional, 0, false, "", an empty collection, a struct of those; nil for a type that has none (an
    /// enum), which then needs a declared default.
    static func zero<T: Decodable>(_ type: T.Type) -> T? {
        try? T(from: ZeroDecoder())
    }
}

/// An optional, whatever it wraps (for ``FieldCoding/encode(_:coding:path:)``).
protocol OptionalField {
    /// True when it holds nothing.
    var isNone: Bool { get }
}

extension Optional: OptionalField {
    var isNone: Bool { self == nil }
}

/// A decoder that offers the zero of every type it is asked for (see ``FieldCoding/zero(_:)``).
struct ZeroDecoder: Decoder {
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Keyed<Key>(codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { Unkeyed(codingPath: codingPath) }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { Single(codingPath: codingPath) }

    /// Required keys hold zeros; optional ones are absent.
    struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        var codingPath: [any CodingKey]
        var allKeys: [Key] { [] }
        func contains(_ key: Key) -> Bool { false }
        func decodeNil(forKey key: Key) throws -> Bool { true }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try T(from: ZeroDecoder(codingPath: codingPath + [key]))
        }
        func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type, forKey key: Key
        ) throws -> KeyedDecodingContainer<NestedKey> {
            KeyedDecodingContainer(Keyed<NestedKey>(codingPath: codingPath + [key]))
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            Unkeyed(codingPath: codingPath + [key])
        }
        func superDecoder() throws -> any Decoder { ZeroDecoder(codingPath: codingPath) }
        func superDecoder(forKey key: Key) throws -> any Decoder { ZeroDecoder(codingPath: codingPath + [key]) }
    }

    /// An empty sequence.
    struct Unkeyed: UnkeyedDecodingContainer {
        var codingPath: [any CodingKey]
        var count: Int? { 0 }
        var isAtEnd: Bool { true }
        var currentIndex: Int { 0 }
        mutating func decodeNil() throws -> Bool { true }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { throw end(type) }
        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type
        ) throws -> KeyedDecodingContainer<NestedKey> { throw end(type) }
        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { throw end(Self.self) }
        mutating func superDecoder() throws -> any Decoder { throw end(Self.self) }

        private func end(_ type: Any.Type) -> DecodingError {
            .valueNotFound(type, .init(codingPath: codingPath, debugDescription: "an empty sequence"))
        }
    }

    /// 0, false or "".
    struct Single: SingleValueDecodingContainer {
        var codingPath: [any CodingKey]
        func decodeNil() -> Bool { true }
        func decode(_ type: Bool.Type) throws -> Bool { false }
        func decode(_ type: String.Type) throws -> String { "" }
        func decode(_ type: Double.Type) throws -> Double { 0 }
        func decode(_ type: Float.Type) throws -> Float { 0 }
        func decode(_ type: Int.Type) throws -> Int { 0 }
        func decode(_ type: Int8.Type) throws -> Int8 { 0 }
        func decode(_ type: Int16.Type) throws -> Int16 { 0 }
        func decode(_ type: Int32.Type) throws -> Int32 { 0 }
        func decode(_ type: Int64.Type) throws -> Int64 { 0 }
        func decode(_ type: UInt.Type) throws -> UInt { 0 }
        func decode(_ type: UInt8.Type) throws -> UInt8 { 0 }
        func decode(_ type: UInt16.Type) throws -> UInt16 { 0 }
        func decode(_ type: UInt32.Type) throws -> UInt32 { 0 }
        func decode(_ type: UInt64.Type) throws -> UInt64 { 0 }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try T(from: ZeroDecoder(codingPath: codingPath)) }
    }
}
