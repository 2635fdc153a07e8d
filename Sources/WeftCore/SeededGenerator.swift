/// A deterministic random number generator (xoshiro256**, seeded through SplitMix64).
///
/// The same seed gives the same sequence on every platform. WeftCore never draws randomness itself;
/// callers such as the simulator, tests and benchmarks pass a generator in.
///
/// ```swift
/// var rng = SeededGenerator(seed: 42)
/// let n = Int.random(in: 0..<10, using: &rng)
/// ```
public struct SeededGenerator: RandomNumberGenerator, Sendable, Hashable {
    private var s0: UInt64, s1: UInt64, s2: UInt64, s3: UInt64

    /// A generator whose whole sequence is fixed by `seed`.
    public init(seed: UInt64) {
        var x = seed
        func splitMix() -> UInt64 {
            x &+= 0x9E37_79B9_7F4A_7C15
            var z = x
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        s0 = splitMix()
        s1 = splitMix()
        s2 = splitMix()
        s3 = splitMix()
    }

    public mutating func next() -> UInt64 {
        let result = ((s1 &* 5) << 7 | (s1 &* 5) >> 57) &* 9
        let t = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = s3 << 45 | s3 >> 19
        return result
    }

    /// A uniform integer in `0..<bound`, drawn with a fixed algorithm (unlike the standard library's,
    /// which may change between releases).
    public mutating func below(_ bound: UInt64) -> UInt64 {
        precondition(bound > 0, "bound must be positive")
        let (high, _) = next().multipliedFullWidth(by: bound)
        return high
    }

    /// A uniform integer in `range`, with a fixed algorithm.
    public mutating func int(in range: ClosedRange<Int>) -> Int {
        // The span is computed in wrapping arithmetic: `upperBound - lowerBound` overflows Int for ranges
        // wider than Int.max, and the span of Int.min...Int.max does not fit below()'s bound at all.
        let span = UInt64(truncatingIfNeeded: range.upperBound &- range.lowerBound)
        let offset = span == .max ? next() : below(span + 1)
        return range.lowerBound &+ Int(truncatingIfNeeded: offset)
    }

    /// True with probability `probability`.
    public mutating func chance(_ probability: Double) -> Bool {
        Double(next() >> 11) / Double(1 << 53) < probability
    }

    /// A stable shuffle (Fisher–Yates with this generator's fixed algorithm).
    public mutating func shuffle<T>(_ array: inout [T]) {
        guard array.count > 1 else { return }
        for i in stride(from: array.count - 1, to: 0, by: -1) {
            let j = Int(below(UInt64(i + 1)))
            array.swapAt(i, j)
        }
    }
}
