import WeftCore

/// A request from a client to a daemon, answered by exactly one ``ClientReply`` with the same id.
///
/// ```swift
/// let request = ClientRequest(id: 1, command: .set(try Path("/users/alice"), .string("Alice")))
/// ```
public struct ClientRequest: Sendable, Hashable {
    /// Chosen by the client, echoed in the reply; a watch keeps its request's id as its watch id.
    public var id: UInt64
    /// What the client asks.
    public var command: ClientCommand

    /// A request from its id and command.
    public init(id: UInt64, command: ClientCommand) {
        self.id = id
        self.command = command
    }
}

/// The commands a client can send. Writes become ops stamped by the daemon.
public enum ClientCommand: Sendable, Hashable {
    /// Read the value at a path. Replied with `.ok(value)`.
    case get(Path)
    /// Replace the subtree at a path (null deletes). Replied with `.ok(.null)` once merged.
    case set(Path, Value)
    /// Set the listed children, keeping the others. Replied with `.ok(.null)`.
    case merge(Path, [MergeChild])
    /// Add a child under a new push id. Replied with `.ok(.string(key))`, the new child's key.
    case push(Path, Value)
    /// Add `by` to a number (a null node counts as `from`). Replied with `.ok(.null)`.
    case increment(Path, by: Number, from: Number)
    /// Send a ``ClientEvent`` with the current value now and on every change. Replied with `.ok(.null)`.
    case watch(Path)
    /// Stop the watch opened by request `watchID`. Replied with `.ok(.null)`.
    case unwatch(watchID: UInt64)
    /// How the daemon stands: its peers (connected or not, ops behind, bytes) and its log. Needs read access
    /// to the root. Replied with `.ok(object)`; see `Docs/PROTOCOL.md` for the fields.
    case status
    /// Read the children of `query.path` that the query selects, in its order. Replied with
    /// `.rows(result)`. Needs read access to `query.path`, as `get` does.
    case query(Query)
    /// A live query: replied with `.rows(result)` (the result now), then one ``ClientQueryEvent`` per
    /// change of the result. Needs read access to `query.path`, as `watch` does; closed by `unwatch`.
    case watchQuery(Query)
    /// Add, replace or remove a webhook or notification subscription of this client (see
    /// ``SubscriptionRequest``). Needs read access to the path. Replied with `.ok(id)`, the subscription's id.
    case subscribe(SubscriptionRequest)
    /// This client's subscriptions and how their deliveries stand. Replied with `.ok(object)` keyed by id.
    case subscriptions
}

/// The daemon's answer to one ``ClientRequest``.
public struct ClientReply: Sendable, Hashable {
    /// The id of the request answered.
    public var id: UInt64
    /// The outcome.
    public var result: ClientResult

    /// A reply from the id of the request it answers and its outcome.
    public init(id: UInt64, result: ClientResult) {
        self.id = id
        self.result = result
    }
}

/// The outcome of a client request.
public enum ClientResult: Sendable, Hashable {
    /// Done; the value depends on the command (see ``ClientCommand``).
    case ok(Value)
    /// Done: the ordered result of a `query` or `watchQuery` request.
    case rows(QueryResult)
    /// Refused or failed; the error's code is usually ``SyncErrorCode/requestFailed``.
    case failed(SyncError)
}

/// A change under a watched path: the whole new value at the path (null when it vanished).
public struct ClientEvent: Sendable, Hashable {
    /// The id of the watch request.
    public var watchID: UInt64
    /// The watched path.
    public var path: Path
    /// The value now at the path.
    public var value: Value

    /// An event from its watch id, the watched path and the value now there.
    public init(watchID: UInt64, path: Path, value: Value) {
        self.watchID = watchID
        self.path = path
        self.value = value
    }
}
