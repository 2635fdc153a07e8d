import Dispatch
import WeftCore

// Reads of the replica's current state: local writes show at once (they are applied before they are
// durable), merged remote writes as soon as they are merged. Reads keep answering from memory after
// the replica shut down.

extension DataNode {
    /// The node's value: a JSON value, `.null` when the node does not exist.
    ///
    /// ```swift
    /// let profile = try await alice.value()          // .object(["name": "Alice", ...])
    /// print(profile["name"])                          // .string("Alice")
    /// ```
    /// - Throws: the `WeftError` that ended the replica's load, when its file could not be loaded
    ///   (`storage`); otherwise nothing (the replica answers from memory, even after shutdown).
    public func value() async throws -> Value { try currentValue() }

    /// The node's value decoded as `T` with the replica's `jsonDecoder`.
    ///
    /// Objects keyed `"0"`, `"1"`, … decode as arrays when the type asks for one (Firebase's rule). An
    /// absent node decodes as JSON `null`, which only optional types accept.
    ///
    /// ```swift
    /// let user = try await alice.decodedValue(as: User.self)
    /// let age: Int? = try await alice.relativeNode(for: "age")!.decodedValue()
    /// ```
    /// - Parameter type: the type to decode (inferred when omitted).
    /// - Throws: `WeftError` with code `decodingFailed` saying which node and why (the coding path and the
    ///   decoder's reason).
    nonisolated(nonsending) public func decodedValue<T: Decodable>(as type: T.Type = T.self) async throws -> T {
        try currentDecodedValue(as: type)
    }

    /// The keys of the node's children in Firebase key order (integers first, by value; then UTF-8 order);
    /// empty when the node has no child.
    ///
    /// ```swift
    /// let ids = try await (replica.root / "users")!.childrenKeys()   // ["alice", "bob"]
    /// ```
    /// - Throws: the error that ended the replica's load; see ``value()``.
    public func childrenKeys() async throws -> [String] { try currentChildrenKeys() }

    // MARK: - Completion forms

    /// The completion form of ``value()``.
    ///
    /// ```swift
    /// node.value(queue: .main) { result in if case .success(let value) = result { show(value) } }
    /// ```
    /// - Parameters:
    ///   - queue: where `completion` runs; nil for the replica's `callbackQueue`.
    ///   - completion: called once with the value or a `WeftError`.
    public func value(
        queue: DispatchQueue? = nil, then completion: @escaping @Sendable (Result<Value, WeftError>) -> Void
    ) {
        deliver(Result { try currentValue() }, on: queue, to: completion)
    }

    /// The completion form of ``decodedValue(as:)``.
    ///
    /// ```swift
    /// node.decodedValue(as: User.self) { result in … }
    /// ```
    /// - Parameters:
    ///   - type: the type to decode.
    ///   - queue: where `completion` runs; nil for the replica's `callbackQueue`.
    ///   - completion: called once with the decoded value or a `WeftError` (`decodingFailed`).
    public func decodedValue<T: Decodable & Sendable>(
        as type: T.Type = T.self, queue: DispatchQueue? = nil,
        then completion: @escaping @Sendable (Result<T, WeftError>) -> Void
    ) {
        deliver(Result { try currentDecodedValue(as: type) }, on: queue, to: completion)
    }

    /// The completion form of ``childrenKeys()``.
    ///
    /// ```swift
    /// users.childrenKeys { result in … }
    /// ```
    /// - Parameters:
    ///   - queue: where `completion` runs; nil for the replica's `callbackQueue`.
    ///   - completion: called once with the keys or a `WeftError`.
    public func childrenKeys(
        queue: DispatchQueue? = nil, then completion: @escaping @Sendable (Result<[String], WeftError>) -> Void
    ) {
        deliver(Result { try currentChildrenKeys() }, on: queue, to: completion)
    }

    // MARK: - Core

    func currentValue() throws -> Value {
        let value = access.backend.value(at: location)
        // A failed load leaves an empty tree, which would read as data that vanished.
        if let failure = access.backend.loadFailure { throw failure }
        return value
    }

    func currentDecodedValue<T: Decodable>(as type: T.Type) throws -> T {
        try access.state.coding.decode(type, from: currentValue(), path: path)
    }

    func currentChildrenKeys() throws -> [String] {
        try currentValue().children.keys.map(\.text).sorted(by: KeyOrder.precedes)
    }

    func deliver<T>(
        _ result: Result<T, any Error>, on queue: DispatchQueue?,
        to completion: @escaping @Sendable (Result<T, WeftError>) -> Void
    ) where T: Sendable {
        let mapped = result.mapError { WeftError.from($0) }
        (queue ?? access.state.callbackQueue).async { completion(mapped) }
    }
}
