/// When a failed webhook delivery is tried again: exponential backoff with jitter, bounded. Pure: the
/// failure count and a jitter draw in 0..<1 are inputs, so tests decide the times.
///
/// ```swift
/// let policy = WebhookRetryPolicy(baseMillis: 500, capMillis: 300_000)
/// policy.delayMillis(afterFailures: 3, jitter: 0.5)   // 1_500: 2_000 scaled into [1_000, 2_000)
/// ```
public struct WebhookRetryPolicy: Sendable, Hashable {
    /// The delay after the first failure, before jitter.
    public var baseMillis: Int64
    /// The longest delay, before jitter.
    public var capMillis: Int64

    public init(baseMillis: Int64 = HTTPLimits.webhookRetryBaseMillis, capMillis: Int64 = HTTPLimits.webhookRetryCapMillis) {
        self.baseMillis = max(1, baseMillis)
        self.capMillis = max(self.baseMillis, capMillis)
    }

    /// The delay after `failures` failures in a row: `base · 2^(failures−1)`, at most `cap`, scaled into
    /// its upper half by `jitter` so that receivers coming back are not hit by every retry at once.
    public func delayMillis(afterFailures failures: Int, jitter: Double) -> Int64 {
        let exponent = min(max(failures - 1, 0), 40)
        let (doubled, overflow) = baseMillis.multipliedReportingOverflow(by: Int64(1) << exponent)
        let raw = overflow ? capMillis : min(doubled, capMillis)
        let fraction = 0.5 + 0.5 * min(max(jitter, 0), 1)
        return max(1, Int64(Double(raw) * fraction))
    }
}
