/// Why a callback subscription ended without the app invalidating its token (an invalidated token ends
/// silently, as a cancelled Combine subscription does).
public enum SubscriptionEnd: Sendable, Hashable, CustomStringConvertible {
    /// The replica shut down; every event before it was delivered.
    case shutDown
    /// The replica was already shut down when the subscription was made: no event came.
    case shutDownBeforeStart

    /// `shutDown` or `shutDownBeforeStart`.
    public var description: String {
        switch self {
        case .shutDown: return "shutDown"
        case .shutDownBeforeStart: return "shutDownBeforeStart"
        }
    }
}
