import PropertyBased
import Testing

@testable import WeftCore

/// Random WeftCore values for property tests, drawn from a ``SeededGenerator`` so that a failing case
/// can be rebuilt from the seed that PropertyBased prints.
struct RandomCore {
    var rng: SeededGenerator

    init(seed: UInt64) { rng = SeededGenerator(seed: seed) }

    /// Keys from a small pool (so paths collide) plus, now and then, an odd but valid one.
    static let keyPool: [Key] = ["a", "b", "c", "x", "y", "0", "1", "10", "Z", "é", "€uro", "😀", "a-b", "_", "~"]

    mutating func key() -> Key {
        if rng.chance(0.9) { return RandomCore.keyPool[Int(rng.below(UInt64(RandomCore.keyPool.count)))] }
        let length = rng.int(in: 1...12)
        var scalars = String.UnicodeScalarView()
        while scalars.count < length {
            // Printable ASCII and some BMP and astral scalars, skipping the forbidden ones.
            let pick = rng.below(4)
            let code: UInt32
            switch pick {
            case 0, 1: code = UInt32(rng.int(in: 0x20...0x7E))
            case 2: code = UInt32(rng.int(in: 0xA0...0xD7FF))
            default: code = UInt32(rng.int(in: 0x1_0000...0x1_FFFF))
            }
            guard let scalar = Unicode.Scalar(code), !".$#[]/".unicodeScalars.contains(scalar) else { continue }
            scalars.append(scalar)
        }
        return Key(unchecked: String(scalars))
    }

    mutating func path(depthMax: Int = 4) -> Path {
        let depth = rng.int(in: 0...depthMax)
        return Path(uncheckedKeys: (0..<depth).map { _ in key() })
    }

    mutating func string() -> String {
        let pieces = [
            "", "hello", "é", "\"quoted\"", "back\\slash", "tab\t", "nl\n", "\u{0}", "\u{1F}", "\u{7F}",
            "😀", "\u{FFFD}", "日本語", "a/b.c$d",
        ]
        return pieces[Int(rng.below(UInt64(pieces.count)))] + (rng.chance(0.3) ? String(rng.next()) : "")
    }

    mutating func double() -> Double {
        switch rng.below(6) {
        case 0: return Double(rng.int(in: -1000...1000)) / 8
        case 1: return Double(bitPattern: rng.next() & ~(0x7FF << 52))  // subnormal or zero
        case 2:
            return [0.1, -2.5, 1e300, -1e-300, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 1e15, 123456.75][
                Int(rng.below(8))]
        default:
            while true {
                let d = Double(bitPattern: rng.next())
                if d.isFinite { return d }
            }
        }
    }

    mutating func int() -> Int64 {
        switch rng.below(4) {
        case 0: return Int64(rng.int(in: -100...100))
        case 1: return [Int64.min, .max, .min + 1, .max - 1, 0, -1][Int(rng.below(6))]
        default: return Int64(bitPattern: rng.next())
        }
    }

    mutating func scalar() -> Value {
        switch rng.below(5) {
        case 0: return .bool(rng.chance(0.5))
        case 1: return .int(int())
        case 2: return .double(double())
        default: return .string(string())
        }
    }

    /// A normalized value: objects are never empty and never hold null.
    mutating func value(depthMax: Int = 3, allowNull: Bool = true) -> Value {
        if allowNull, rng.chance(0.1) { return .null }
        guard depthMax > 0, rng.chance(0.4) else { return scalar() }
        var children: [Key: Value] = [:]
        for _ in 0..<rng.int(in: 1...4) { children[key()] = value(depthMax: depthMax - 1, allowNull: false) }
        return .object(children)
    }

    mutating func number() -> Number { rng.chance(0.6) ? .int(int()) : .double(double()) }

    mutating func replica() -> ReplicaID { ReplicaID.random(using: &rng) }

    mutating func stamp() -> Stamp {
        // Small ranges now and then, so that equal millis and counters are common.
        let millis = rng.chance(0.5) ? UInt64(rng.int(in: 0...3)) : rng.below(CoreLimits.stampMillisMax + 1)
        let counter = rng.chance(0.5) ? UInt16(rng.int(in: 0...3)) : UInt16(truncatingIfNeeded: rng.next())
        let replica = rng.chance(0.5) ? ReplicaID(rawValue: UInt64(rng.int(in: 1...3)))! : replica()
        return Stamp(millis: millis, counter: counter, replica: replica)
    }

    mutating func mergeChildren(below base: Path) -> [MergeChild] {
        var children: [MergeChild] = []
        for _ in 0..<rng.int(in: 0...4) {
            let relative = path(depthMax: 2)
            guard !relative.isRoot, !children.contains(where: { $0.relative.isRelated(to: relative) }) else { continue }
            children.append(MergeChild(relative: relative, value: value(depthMax: 2)))
        }
        return try! MergeChild.validated(children)
    }

    mutating func write() -> Write {
        let target = path(depthMax: 3)
        switch rng.below(3) {
        case 0: return .set(target, value())
        case 1: return .merge(target, mergeChildren(below: target))
        default: return .increment(target, by: number(), from: number())
        }
    }

    mutating func versionVector() -> VersionVector {
        var entries: [ReplicaID: UInt64] = [:]
        for _ in 0..<rng.int(in: 0...4) { entries[replica()] = rng.chance(0.5) ? rng.below(10) : rng.next() }
        return VersionVector(entries)
    }

    mutating func kind() -> OpKind {
        switch rng.below(6) {
        case 0: return .set(value())
        case 1: return .merge(mergeChildren(below: .root))
        case 2: return .increment(by: number(), from: number())
        case 3: return .batch((0..<rng.int(in: 1...4)).map { _ in write() })
        case 4: return .transaction(read: versionVector(), result: value())
        default:
            let name = ["transfer", "add", "é", ""][Int(rng.below(4))]
            return .call(FunctionCall(name: name, version: UInt32(truncatingIfNeeded: rng.next()), arguments: value()))
        }
    }

    mutating func op() -> Op {
        let sequence = rng.chance(0.5) ? UInt64(rng.int(in: 1...10)) : max(1, rng.next())
        return Op(stamp: stamp(), sequence: sequence, path: path(), kind: kind())
    }

    mutating func bytes(countMax: Int) -> [UInt8] {
        (0..<rng.int(in: 0...countMax)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
    }
}

/// A PropertyBased generator of seeds for ``RandomCore``; the printed failing input is the seed.
let seeds = Gen.uint64()

/// The `CoreError` thrown by `body`, recorded as an issue (and nil) when it throws something else or nothing.
func coreError(sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> some Any) -> CoreError? {
    do {
        _ = try body()
        Issue.record("expected a CoreError, nothing was thrown", sourceLocation: sourceLocation)
        return nil
    } catch let error as CoreError {
        return error
    } catch {
        Issue.record("expected a CoreError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// Rebuilds values with every object's keys inserted in a shuffled order (and a different capacity), so
/// that a dictionary's iteration order cannot leak into an encoding.
enum Reinserted {
    static func value(_ value: Value, using rng: inout SeededGenerator) -> Value {
        guard case .object(let children) = value else { return value }
        var keys = Array(children.keys)
        rng.shuffle(&keys)
        var rebuilt: [Key: Value] = [:]
        rebuilt.reserveCapacity(keys.count * Int(1 + rng.below(8)))
        for key in keys { rebuilt[key] = Reinserted.value(children[key]!, using: &rng) }
        return .object(rebuilt)
    }
}
