/// A rule of the tree that a value breaks: every value a write or a registered function puts in the
/// tree keeps them, or one replica's tree (and file) would hold what no other write can make and no
/// store can read back. ``Value/brokenRule(depth:)`` finds the first one a node breaks.
public enum BrokenValueRule: Error, Sendable, Equatable, CustomStringConvertible {
    /// A number that is not finite.
    case nonFiniteNumber(Double)
    /// A string longer than ``CoreLimits/stringBytesMax`` bytes.
    case stringTooLong(bytes: Int)
    /// An object whose children would lie deeper than ``CoreLimits/pathDepthMax`` levels from the root.
    case tooDeep
    /// A child key that the key rules refuse.
    case invalidKey(CoreError)

    public var description: String {
        switch self {
        case .nonFiniteNumber(let number): return "the number \(number) is not finite"
        case .stringTooLong(let bytes):
            return "a string of \(bytes) bytes (at most \(CoreLimits.stringBytesMax))"
        case .tooDeep: return "it nests deeper than \(CoreLimits.pathDepthMax) levels from the root"
        case .invalidKey(let error): return "\(error)"
        }
    }
}

extension Value {
    /// The rule this node breaks by itself, at `depth` levels below the root, with the child key it
    /// concerns when there is one; nil when it keeps every rule. Its children's values are not looked
    /// at: a caller that walks the value asks each of them in turn.
    ///
    /// ```swift
    /// Value.double(.infinity).brokenRule(depth: 1)   // (.nonFiniteNumber(inf), nil)
    /// ```
    public func brokenRule(depth: Int) -> (rule: BrokenValueRule, key: Key?)? {
        switch self {
        case .null, .bool, .int: return nil
        case .double(let number): return number.isFinite ? nil : (.nonFiniteNumber(number), nil)
        case .string(let text):
            let bytes = text.utf8.count
            return bytes <= CoreLimits.stringBytesMax ? nil : (.stringTooLong(bytes: bytes), nil)
        case .object(let children):
            for key in children.keys {
                guard depth < CoreLimits.pathDepthMax else { return (.tooDeep, key) }
                do {
                    try Key.validate(key.text)
                } catch let error as CoreError {
                    return (.invalidKey(error), key)
                } catch {
                    preconditionFailure("Key.validate throws CoreError only, not \(error)")
                }
            }
            return nil
        }
    }
}
