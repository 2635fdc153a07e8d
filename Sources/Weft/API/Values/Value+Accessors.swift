import WeftCore

/// Typed views of a value, nil when the value is of another kind.
///
/// ```swift
/// let result = try await counter.runTransaction { .set(.int(($0.intValue ?? 0) + 1)) }
/// ```
extension Value {
    /// The integer, nil for anything else (a double is not converted).
    public var intValue: Int64? { if case .int(let i) = self { return i } else { return nil } }

    /// The number as a double (an integer converted), nil for anything else.
    public var doubleValue: Double? { Number(self)?.doubleValue }

    /// The string, nil for anything else.
    public var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }

    /// The boolean, nil for anything else.
    public var boolValue: Bool? { if case .bool(let b) = self { return b } else { return nil } }
}

// MARK: - CustomStringConvertible

/// A value prints as its canonical JSON: `print(try await node.value())` shows `{"name":"Alice"}`.
extension Value: CustomStringConvertible {
    /// The canonical JSON text of the value.
    public var description: String { jsonString() }
}
