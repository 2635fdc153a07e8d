/// Named limits of the public API.
public enum WeftLimits {
    /// Most key paths one observation (`DataNode.observe(keyPaths:on:_:)`) may name.
    public static let observedKeyPathsMax = 1_000
    /// Most attempts of a transaction closure before it reports `retriesExhausted` (Firebase's 25).
    public static let transactionRetriesMax = 25
    /// Most events buffered for one subscriber before the oldest are coalesced.
    public static let subscriberEventsBufferedMax = 10_000
}
