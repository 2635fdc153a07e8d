import WeftCore

// MARK: - Codable

/// `Value` encodes as the JSON it stands for and decodes from any JSON, so it can be used wherever an
/// `Encodable` or `Decodable` is expected:
///
/// ```swift
/// try await node.set(Value.object(["name": "alice"]))
/// let raw: Value = try await node.decodedValue()
/// ```
extension Value: Codable {
    /// Encodes the JSON the value stands for: an object as a keyed container, a scalar as a single value.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .object(let children):
            var container = encoder.container(keyedBy: DynamicKey.self)
            for (key, child) in children { try container.encode(child, forKey: DynamicKey(key.text)) }
        default:
            var container = encoder.singleValueContainer()
            switch self {
            case .null: try container.encodeNil()
            case .bool(let b): try container.encode(b)
            case .int(let i): try container.encode(i)
            case .double(let d): try container.encode(d)
            case .string(let s): try container.encode(s)
            case .object: break
            }
        }
    }

    /// Decodes any JSON. Arrays become objects keyed `"0"`, `"1"`, …; null members vanish. Keys are not
    /// checked here: writes check them.
    public init(from decoder: any Decoder) throws {
        if let keyed = try? decoder.container(keyedBy: DynamicKey.self) {
            var children: [WeftCore.Key: Value] = [:]
            for key in keyed.allKeys {
                children[WeftCore.Key(unchecked: key.stringValue)] = try keyed.decode(Value.self, forKey: key)
            }
            self = .object(normalizing: children)
            return
        }
        if var unkeyed = try? decoder.unkeyedContainer() {
            var children: [WeftCore.Key: Value] = [:]
            while !unkeyed.isAtEnd {
                children[WeftCore.Key(unchecked: String(unkeyed.currentIndex))] = try unkeyed.decode(Value.self)
            }
            self = .object(normalizing: children)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let b = try? single.decode(Bool.self) {
            self = .bool(b)
        } else if let i = try? single.decode(Int64.self) {
            self = .int(i)
        } else if let d = try? single.decode(Double.self) {
            self = .double(d)
        } else {
            self = .string(try single.decode(String.self))
        }
    }
}

/// A coding key for any string.
struct DynamicKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(_ string: String) {
        stringValue = string
        intValue = nil
    }

    init?(stringValue: String) { self.init(stringValue) }

    init?(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }
}

// MARK: - Literals

/// Values can be written as literals: `let v: Value = ["name": "alice", "score": 3, "tags": ["a", "b"]]`.
extension Value: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByDictionaryLiteral,
    ExpressibleByArrayLiteral
{
    /// `nil` is `.null`.
    public init(nilLiteral: ()) { self = .null }
    /// `true` is `.bool(true)`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// `42` is `.int(42)`.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// `0.5` is `.double(0.5)`.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// `"text"` is `.string("text")`.
    public init(stringLiteral value: String) { self = .string(value) }

    /// An object; null members vanish and an empty object is null.
    public init(dictionaryLiteral elements: (String, Value)...) {
        var children: [WeftCore.Key: Value] = [:]
        for (key, value) in elements { children[WeftCore.Key(unchecked: key)] = value.normalized }
        self = .object(normalizing: children)
    }

    /// An array, stored as an object keyed `"0"`, `"1"`, … (null elements vanish).
    public init(arrayLiteral elements: Value...) {
        var children: [WeftCore.Key: Value] = [:]
        for (index, value) in elements.enumerated() {
            children[WeftCore.Key(unchecked: String(index))] = value.normalized
        }
        self = .object(normalizing: children)
    }
}

/// Numbers can be written as literals: `try await counter.increment(by: 5)`.
extension Number: ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral {
    /// `5` is `.int(5)`.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// `0.5` is `.double(0.5)`.
    public init(floatLiteral value: Double) { self = .double(value) }
}
