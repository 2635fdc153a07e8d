import Foundation

/// Firebase's order of values of mixed types, which queries sort and filter by: null, then false, then
/// true, then numbers (by numeric value, integers and doubles compared exactly), then strings (by UTF-8
/// bytes), then objects (all alike: their ties fall to the key).
///
/// ```swift
/// ValueOrder.compare(.bool(true), .int(-5))          // -1: booleans sort before numbers
/// ValueOrder.compare(.int(2), .double(2.0))          //  0: the same number
/// ValueOrder.compare(.string("10"), .string("9"))    // -1: strings by bytes
/// ```
public enum ValueOrder {
    /// The rank of a value's type: null 0, false 1, true 2, numbers 3, strings 4, objects 5.
    @inlinable public static func rank(_ value: Value) -> Int {
        switch value {
        case .null: return 0
        case .bool(let flag): return flag ? 2 : 1
        case .int, .double: return 3
        case .string: return 4
        case .object: return 5
        }
    }

    /// -1, 0 or 1 as `lhs` sorts before, alike with, or after `rhs`.
    public static func compare(_ lhs: Value, _ rhs: Value) -> Int {
        switch (lhs, rhs) {
        case (.int(let a), .int(let b)): return a < b ? -1 : (a == b ? 0 : 1)
        case (.double(let a), .double(let b)): return a < b ? -1 : (a == b ? 0 : 1)
        case (.int(let a), .double(let b)): return compare(a, b)
        case (.double(let a), .int(let b)): return -compare(b, a)
        case (.string(let a), .string(let b)): return compareBytes(a, b)
        default:
            let left = rank(lhs)
            let right = rank(rhs)
            return left < right ? -1 : (left == right ? 0 : 1)
        }
    }

    /// True when `lhs` sorts before `rhs`.
    @inlinable public static func precedes(_ lhs: Value, _ rhs: Value) -> Bool { compare(lhs, rhs) < 0 }

    /// An integer against a double, exactly: `Double(integer)` rounds above 2^53, so a double holding an
    /// integer in `Int64`'s range is compared as that integer.
    static func compare(_ integer: Int64, _ double: Double) -> Int {
        // 2^63 is the first double above every Int64; -2^63 is Int64.min itself.
        if double >= 9_223_372_036_854_775_808.0 { return -1 }
        if double < -9_223_372_036_854_775_808.0 { return 1 }
        if double.rounded(.towardZero) == double {
            let exact = Int64(double)
            return integer < exact ? -1 : (integer == exact ? 0 : 1)
        }
        // A double with a fraction is below 2^52 in magnitude, where every integer converts exactly.
        let converted = Double(integer)
        return converted < double ? -1 : 1
    }

    /// Two strings by their UTF-8 bytes (not by Swift's canonical equivalence, so that the order is total
    /// and agrees with byte equality).
    static func compareBytes(_ lhs: String, _ rhs: String) -> Int {
        var left = lhs
        var right = rhs
        return left.withUTF8 { a in
            right.withUTF8 { b in
                let common = min(a.count, b.count)
                if common > 0, let first = a.baseAddress, let second = b.baseAddress {
                    let order = memcmp(first, second, common)
                    if order != 0 { return order < 0 ? -1 : 1 }
                }
                return a.count < b.count ? -1 : (a.count == b.count ? 0 : 1)
            }
        }
    }
}
