/// Jittered exponential backoff between reconnect attempts: deterministic given the random source.
///
/// The n-th delay since the last ``reset()`` (n from 0) is drawn uniformly from
/// `[max(min, ceiling / 2), ceiling]` where `ceiling = min(max, min × 2ⁿ⁺¹)`. Until the ceiling reaches
/// ``delayMillisecondsMax`` each band starts where the previous one ended, so delays never shrink; from then
/// on they stay jittered in `[max / 2, max]`. The jitter keeps many replicas that lost the same hub from reconnecting
/// in lockstep.
///
/// ```swift
/// var backoff = BackoffPolicy()
/// var random = SystemRandomNumberGenerator()
/// let wait = backoff.nextDelay(using: &random) // 50...100 ms, then 100...200, 200...400, … up to 5_000...10_000
/// backoff.reset() // after a connection proved healthy
/// ```
public struct BackoffPolicy: Equatable, Sendable {
    /// The shortest delay, in milliseconds.
    public let delayMillisecondsMin: Int
    /// The longest delay, in milliseconds.
    public let delayMillisecondsMax: Int
    /// Delays drawn since the last reset, counted until the ceiling reaches ``delayMillisecondsMax``.
    public private(set) var attempt = 0

    /// A policy between ``NetLimits/reconnectDelayMillisecondsMin`` and ``NetLimits/reconnectDelayMillisecondsMax``.
    public init() {
        delayMillisecondsMin = NetLimits.reconnectDelayMillisecondsMin
        delayMillisecondsMax = NetLimits.reconnectDelayMillisecondsMax
    }

    /// A policy with its own bounds, for example from a daemon's configuration.
    ///
    /// ```swift
    /// let backoff = try BackoffPolicy(delayMillisecondsMin: 100, delayMillisecondsMax: 30_000)
    /// ```
    ///
    /// - Parameters:
    ///   - delayMillisecondsMin: the first and shortest delay; more than zero.
    ///   - delayMillisecondsMax: the longest delay; at least `delayMillisecondsMin`.
    /// - Throws: ``NetError/Code/invalidArgument`` when the bounds break those rules.
    public init(delayMillisecondsMin: Int, delayMillisecondsMax: Int) throws(NetError) {
        guard delayMillisecondsMin > 0 else {
            throw NetError(.invalidArgument, context: "backoff", reason: "shortest delay must be positive")
        }
        guard delayMillisecondsMax >= delayMillisecondsMin else {
            let reason = "longest delay \(delayMillisecondsMax) ms is below the shortest \(delayMillisecondsMin) ms"
            throw NetError(.invalidArgument, context: "backoff", reason: reason)
        }
        self.delayMillisecondsMin = delayMillisecondsMin
        self.delayMillisecondsMax = delayMillisecondsMax
    }

    /// Draws the next delay and moves one step up the backoff.
    ///
    /// - Parameter generator: the random source; the same generator state gives the same delay.
    /// - Returns: milliseconds to wait, within ``delayMillisecondsMin``...``delayMillisecondsMax``.
    public mutating func nextDelay(using generator: inout some RandomNumberGenerator) -> Int {
        let ceiling = ceilingMilliseconds
        let floor = Swift.max(delayMillisecondsMin, ceiling / 2)
        precondition(floor <= ceiling, "backoff band is empty: \(floor)...\(ceiling)")
        // Multiply-high maps 64 random bits onto the band with a fixed algorithm (the standard library's
        // `random(in:using:)` may change between releases, which would break replaying a seed).
        let span = UInt64(ceiling - floor) + 1
        let offset = Int(generator.next().multipliedFullWidth(by: span).high)
        let delay = floor + offset
        precondition(delay >= delayMillisecondsMin && delay <= delayMillisecondsMax, "delay \(delay) out of bounds")
        if ceiling < delayMillisecondsMax {
            attempt += 1
        }
        return delay
    }

    /// Starts over from the shortest delay, after a connection proved healthy.
    public mutating func reset() {
        attempt = 0
    }

    /// The top of the current band: `min(max, min × 2^(attempt + 1))`, computed without overflow.
    private var ceilingMilliseconds: Int {
        let shift = attempt + 1
        guard shift < Int.bitWidth - 1, delayMillisecondsMin <= delayMillisecondsMax >> shift else {
            return delayMillisecondsMax
        }
        return delayMillisecondsMin << shift
    }
}
