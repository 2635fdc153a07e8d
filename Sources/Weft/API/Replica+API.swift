import Dispatch
import Foundation
import WeftCore

// The entry points of the public API on a replica: node references, batches, snapshots, settings and the
// completion form of shutdown. Everything else hangs off `DataNode`.

extension Replica {
    /// The API's view of this replica.
    var access: ReplicaAccess { ReplicaAccess(backend: self, state: api) }

    /// The root node, `/`.
    ///
    /// ```swift
    /// let users = replica.root / "users"
    /// ```
    public var root: DataNode { access.root }

    /// The node at a path resolved from the root with the seed path grammar, or nil when the path is
    /// ill-formed (a segment that is not a valid key, or deeper than 32 levels).
    ///
    /// ```swift
    /// let alice = replica.node(for: "/users/alice")
    /// ```
    public func node(for path: String) -> DataNode? { access.node(for: path) }

    /// Where completion callbacks, subscriptions and observations run when no queue is given: a serial
    /// queue of this replica (not the main queue, so programs without a run loop work).
    ///
    /// ```swift
    /// replica.callbackQueue = .main
    /// ```
    public var callbackQueue: DispatchQueue {
        get { api.callbackQueue }
        set { api.callbackQueue = newValue }
    }

    /// The encoder of `Encodable` values written through the API (initially ``ReplicaOptions/encoder``).
    ///
    /// ```swift
    /// replica.jsonEncoder.dateEncodingStrategy = .iso8601
    /// ```
    public var jsonEncoder: JSONEncoder {
        get { api.jsonEncoder }
        set { api.jsonEncoder = newValue }
    }

    /// The decoder of `decodedValue` and `decodedValuePublisher` (initially ``ReplicaOptions/decoder``).
    ///
    /// ```swift
    /// replica.jsonDecoder.dateDecodingStrategy = .iso8601
    /// ```
    public var jsonDecoder: JSONDecoder {
        get { api.jsonDecoder }
        set { api.jsonDecoder = newValue }
    }

    /// Whether decoding reads a missing key of a collection type (and an absent node) as an empty
    /// collection; initially ``ReplicaOptions/decodesMissingCollectionsAsEmpty`` (true).
    ///
    /// ```swift
    /// replica.decodesMissingCollectionsAsEmpty = false   // a missing `tags` fails to decode
    /// ```
    public var decodesMissingCollectionsAsEmpty: Bool {
        get { api.missingCollectionsAsEmpty }
        set { api.missingCollectionsAsEmpty = newValue }
    }

    /// Applies several writes to several nodes as one op: all or nothing, and seen all at once by every
    /// observer (Dflat's `performChanges`).
    ///
    /// The closure runs at once, on the calling task, and records writes on the batch; each write checks
    /// its input and throws when it is invalid. When the closure returns, the writes are submitted under
    /// one stamp. If any part is rejected at merge (an increment of a string), the whole batch is.
    ///
    /// ```swift
    /// try await replica.performChanges { batch in
    ///     try batch.increment(by: -500, at: alice.child("balance"))
    ///     try batch.increment(by: 500, at: bob.child("balance"))
    ///     try batch.push(Transfer(cents: 500), under: transfers)
    /// }
    /// ```
    /// - Parameters:
    ///   - time: when the batch happens.
    ///   - target: the status to wait for (default `.durable`).
    ///   - changes: records the writes; throwing (or calling `batch.abort()`) writes nothing.
    /// - Returns: the batch's receipt, or nil when the closure recorded no write.
    /// - Throws: what `changes` throws; `WeftError` with code `transactionAborted` after `abort()`,
    ///   `rejected` when a part was rejected, `valueTooLarge`, `clockRefused` or `shutDown`.
    @discardableResult
    nonisolated(nonsending) public func performChanges(
        at time: WeftTime = .now, waitingFor target: WriteStatus = .durable, _ changes: (WriteBatch) throws -> Void
    ) async throws -> WriteReceipt? {
        try await access.performChanges(at: time, waitingFor: target, changes)
    }

    /// The completion form of ``performChanges(at:waitingFor:_:)``: `changes` runs before this returns,
    /// and `completion` reports the outcome.
    ///
    /// ```swift
    /// replica.performChanges({ batch in try batch.clear(at: cart) }) { result in print(result) }
    /// ```
    /// - Parameters:
    ///   - time: when the batch happens.
    ///   - target: the status to wait for before calling `completion` (default `.durable`).
    ///   - queue: where `completion` runs; nil for ``callbackQueue``.
    ///   - changes: records the writes.
    ///   - completion: called once with the receipt (nil when nothing was written) or a `WeftError`.
    public func performChanges(
        at time: WeftTime = .now, waitingFor target: WriteStatus = .durable, queue: DispatchQueue? = nil,
        _ changes: (WriteBatch) throws -> Void,
        completion: @escaping @Sendable (Result<WriteReceipt?, WeftError>) -> Void
    ) {
        access.performChanges(at: time, waitingFor: target, queue: queue, changes, completion: completion)
    }

    /// Runs `body` with a reader of one consistent state: writes that happen meanwhile do not show in it
    /// (Dflat's `fetchWithinASnapshot`).
    ///
    /// ```swift
    /// let (a, b) = try replica.readSnapshot { reader in
    ///     (try reader.value(of: aliceBalance), try reader.value(of: bobBalance))
    /// }
    /// ```
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws.
    public func readSnapshot<T>(_ body: (SnapshotReader) throws -> T) rethrows -> T {
        try access.readSnapshot(body)
    }

    /// The completion form of ``shutdown()``.
    ///
    /// ```swift
    /// replica.shutdown { print("closed") }
    /// ```
    /// - Parameters:
    ///   - queue: where `completion` runs; nil for ``callbackQueue``.
    ///   - completion: called once the replica shut down.
    public func shutdown(queue: DispatchQueue? = nil, completion: @escaping @Sendable () -> Void) {
        access.shutdown(queue: queue, completion: completion)
    }
}

// MARK: - FunctionCatalog

extension Replica: FunctionCatalog {
    func isRegistered(name: String, version: UInt32) -> Bool {
        if options.functions.contains(name: name, version: version) { return true }
        return condition.withLock { registrations.contains { $0.name == name && $0.version == version } }
    }
}
