/// A JSON number as Weft keeps it: an exact 64-bit integer, or a finite double.
public enum Number: Sendable, Hashable, CustomStringConvertible {
    case int(Int64)
    case double(Double)

    /// The number as a ``Value``.
    @inlinable public var value: Value {
        switch self {
        case .int(let i): return .int(i)
        case .double(let d): return .double(d)
        }
    }

    /// The number held by `value`, or nil when it is not a number.
    @inlinable public init?(_ value: Value) {
        switch value {
        case .int(let i): self = .int(i)
        case .double(let d): self = .double(d)
        default: return nil
        }
    }

    /// The number as a double (possibly rounded).
    @inlinable public var doubleValue: Double {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        }
    }

    /// Adds two numbers as Firebase does: integers stay exact; an overflow or a double operand gives a
    /// double. Returns nil when the result is not finite.
    @inlinable public func adding(_ other: Number) -> Number? {
        if case .int(let a) = self, case .int(let b) = other {
            let (sum, overflow) = a.addingReportingOverflow(b)
            if !overflow { return .int(sum) }
        }
        let sum = doubleValue + other.doubleValue
        return sum.isFinite ? .double(sum == 0 ? 0 : sum) : nil
    }

    /// An upper bound of the magnitude, saturating; `.max` for doubles (they never take the exact path).
    @inlinable public var magnitudeBound: UInt64 {
        if case .int(let i) = self { return i.magnitude }
        return .max
    }

    public var description: String {
        switch self {
        case .int(let i): return String(i)
        case .double(let d): return Value.double(d).jsonString()
        }
    }
}
