#if canImport(Combine)
    import Combine
#else
    import OpenCombine
#endif
import Dispatch
import WeftCore

extension DataNode {
    /// The same node with a Combine API: futures for reads and writes, publishers for events.
    ///
    /// ```swift
    /// node.forCombine.set(User(name: "Alice"))
    ///     .flatMap { _ in node.forCombine.decodedValue(as: User.self) }
    ///     .sink(receiveCompletion: { _ in }, receiveValue: { print($0) })
    ///     .store(in: &cancellables)
    /// ```
    public var forCombine: CombineWrapper { CombineWrapper(dataNode: self) }

    /// A node reference with a Combine API (the seed's `DataNode.CombineWrapper`).
    ///
    /// Write futures start at once, like the callback forms: the write is applied whether or not the
    /// future is subscribed, and the future completes once the write reaches the awaited status.
    public struct CombineWrapper: Sendable, Hashable, CustomStringConvertible {
        /// The plain node reference.
        public let dataNode: DataNode

        /// The parent, nil only for the root.
        public var parent: CombineWrapper? { dataNode.parent?.forCombine }

        /// The node reached by a relative path, nil when the path is ill-formed; see
        /// ``DataNode/relativeNode(for:)``.
        ///
        /// ```swift
        /// let city = node.forCombine.relativeNode(for: "address/city")
        /// ```
        public func relativeNode(for path: String) -> CombineWrapper? { dataNode.relativeNode(for: path)?.forCombine }

        /// `node.relativeNode(for: path)`.
        public static func / (node: CombineWrapper, path: String) -> CombineWrapper? { node.relativeNode(for: path) }

        /// A reference to a new child under a fresh push id; see ``DataNode/createChild()``.
        ///
        /// ```swift
        /// let message = try chat.forCombine.createChild()
        /// ```
        /// - Throws: `WeftError` with code `shutDown`, `clockRefused` or `invalidPath`.
        public func createChild() throws -> CombineWrapper { try dataNode.createChild().forCombine }

        /// The node's path.
        public var description: String { dataNode.description }

        // MARK: Reads

        /// A future of the node's value; see ``DataNode/value()``.
        ///
        /// ```swift
        /// node.forCombine.value().sink(receiveCompletion: { _ in }, receiveValue: { print($0) })
        /// ```
        public func value() -> Future<Value, WeftError> { Self.now { try dataNode.currentValue() } }

        /// A future of the node's value decoded as `T`; see ``DataNode/decodedValue(as:)``.
        ///
        /// ```swift
        /// alice.forCombine.decodedValue(as: User.self)
        /// ```
        public func decodedValue<T: Decodable>(as type: T.Type = T.self) -> Future<T, WeftError> {
            Self.now { try dataNode.currentDecodedValue(as: type) }
        }

        /// A future of the children's keys in key order; see ``DataNode/childrenKeys()``.
        ///
        /// ```swift
        /// users.forCombine.childrenKeys()
        /// ```
        public func childrenKeys() -> Future<[String], WeftError> { Self.now { try dataNode.currentChildrenKeys() } }

        // MARK: Writes

        /// Sets an `Encodable` value; see ``DataNode/set(_:at:waitingFor:)``.
        ///
        /// ```swift
        /// alice.forCombine.set(User(name: "Alice", age: 31))
        /// ```
        @discardableResult
        public func set(_ value: (some Encodable)?, at time: WeftTime = .now, waitingFor target: WriteStatus = .durable)
            -> Future<WriteReceipt, WeftError>
        {
            Self.later { dataNode.set(value, at: time, waitingFor: target, then: $0) }
        }

        /// Sets a JSON object graph; see ``DataNode/set(_:_:at:waitingFor:)``.
        ///
        /// ```swift
        /// alice.forCombine.set(.raw, ["name": "Alice"])
        /// ```
        @discardableResult
        public func set(
            _ raw: RawMarker, _ json: Any?, at time: WeftTime = .now, waitingFor target: WriteStatus = .durable
        )
            -> Future<WriteReceipt, WeftError>
        {
            Self.later { dataNode.set(raw, json, at: time, waitingFor: target, then: $0) }
        }

        /// Sets the value of JSON text; see ``DataNode/set(json:at:waitingFor:)``.
        ///
        /// ```swift
        /// alice.forCombine.set(json: #"{"name":"Alice"}"#)
        /// ```
        @discardableResult
        public func set(json: String, at time: WeftTime = .now, waitingFor target: WriteStatus = .durable)
            -> Future<WriteReceipt, WeftError>
        {
            Self.later { dataNode.set(json: json, at: time, waitingFor: target, then: $0) }
        }

        /// Deletes the node; see ``DataNode/clear(at:waitingFor:)``.
        ///
        /// ```swift
        /// drafts.forCombine.clear()
        /// ```
        @discardableResult
        public func clear(at time: WeftTime = .now, waitingFor target: WriteStatus = .durable)
            -> Future<WriteReceipt, WeftError>
        {
            Self.later { dataNode.clear(at: time, waitingFor: target, then: $0) }
        }

        /// Merges an `Encodable` object; see ``DataNode/merge(with:at:waitingFor:)``.
        ///
        /// ```swift
        /// alice.forCombine.merge(with: ["age": 32])
        /// ```
        @discardableResult
        public func merge(
            with value: some Encodable, at time: WeftTime = .now, waitingFor target: WriteStatus = .durable
        )
            -> Future<WriteReceipt, WeftError>
        {
            Self.later { dataNode.merge(with: value, at: time, waitingFor: target, then: $0) }
        }

        /// Merges a raw dictionary whose keys may be deeper paths; see ``DataNode/merge(_:with:at:waitingFor:)``.
        ///
        /// ```swift
        /// alice.forCombine.merge(.raw, with: ["address/city": "Lyon"])
        /// ```
        @discardableResult
        public func merge(
            _ raw: RawMarker, with json: [String: Any], at time: WeftTime = .now,
            waitingFor target: WriteStatus = .durable
        ) -> Future<WriteReceipt, WeftError> {
            Self.later { dataNode.merge(raw, with: json, at: time, waitingFor: target, then: $0) }
        }

        /// Adds a child under a new push id; see ``DataNode/push(_:at:waitingFor:)``.
        ///
        /// ```swift
        /// chat.forCombine.push(Message(author: "alice", text: "hi"))
        /// ```
        @discardableResult
        public func push(
            _ value: (some Encodable)?, at time: WeftTime = .now, waitingFor target: WriteStatus = .durable
        )
            -> Future<CombineWrapper, WeftError>
        {
            Self.later { completion in
                dataNode.push(value, at: time, waitingFor: target) { completion($0.map(\.forCombine)) }
            }
        }

        /// Adds a child with a JSON object graph; see ``DataNode/push(_:_:at:waitingFor:)``.
        ///
        /// ```swift
        /// chat.forCombine.push(.raw, ["text": "hi"])
        /// ```
        @discardableResult
        public func push(
            _ raw: RawMarker, _ json: Any?, at time: WeftTime = .now, waitingFor target: WriteStatus = .durable
        )
            -> Future<CombineWrapper, WeftError>
        {
            Self.later { completion in
                dataNode.push(raw, json, at: time, waitingFor: target) { completion($0.map(\.forCombine)) }
            }
        }

        /// Increments the number at the node; see ``DataNode/increment(from:by:at:waitingFor:)``.
        ///
        /// ```swift
        /// likes.forCombine.increment(by: 1)
        /// ```
        @discardableResult
        public func increment(
            from start: Number = 0, by step: Number = 1, at time: WeftTime = .now,
            waitingFor target: WriteStatus = .durable
        ) -> Future<IncrementResult, WeftError> {
            Self.later { dataNode.increment(from: start, by: step, at: time, waitingFor: target, then: $0) }
        }

        /// Runs a transaction; see ``DataNode/runTransaction(at:waitingFor:timeout:_:)``.
        ///
        /// ```swift
        /// seats.forCombine.runTransaction { .set(.int(($0.intValue ?? 1) - 1)) }
        /// ```
        @discardableResult
        public func runTransaction(
            at time: WeftTime = .now, waitingFor target: WriteStatus? = nil,
            timeout: Duration = .seconds(WeftLimits.transactionWaitSecondsDefault),
            _ function: @escaping @Sendable (Value) -> TransactionOperation
        ) -> Future<TransactionResult, WeftError> {
            Self.later {
                dataNode.runTransaction(at: time, waitingFor: target, timeout: timeout, function, then: $0)
            }
        }

        /// Copies the node's value to another node; see ``DataNode/copyValue(to:at:waitingFor:)-(DataNode,_,_)``.
        ///
        /// ```swift
        /// draft.forCombine.copyValue(to: published.forCombine)
        /// ```
        @discardableResult
        public func copyValue(
            to destination: CombineWrapper, at time: WeftTime = .now, waitingFor target: WriteStatus = .durable
        )
            -> Future<Value, WeftError>
        {
            Self.later { dataNode.copyValue(to: destination.dataNode, at: time, waitingFor: target, then: $0) }
        }

        /// Copies the node's value to the node at an absolute path; see
        /// ``DataNode/copyValue(to:at:waitingFor:)-(String,_,_)``.
        ///
        /// ```swift
        /// draft.forCombine.copyValue(to: "/posts/42")
        /// ```
        @discardableResult
        public func copyValue(
            to destinationPath: String, at time: WeftTime = .now, waitingFor target: WriteStatus = .durable
        )
            -> Future<Value, WeftError>
        {
            Self.later { dataNode.copyValue(to: destinationPath, at: time, waitingFor: target, then: $0) }
        }

        // MARK: Events

        /// A publisher of events; see ``DataNode/eventPublisher(for:childrenConstraint:queue:)``.
        ///
        /// ```swift
        /// chat.forCombine.eventPublisher(for: .childAddition, queue: .main)
        /// ```
        public func eventPublisher(
            for type: DataEventType = .valueChange, childrenConstraint: ChildrenConstraint = .all,
            queue: DispatchQueue? = nil
        )
            -> AnyPublisher<DataEvent, WeftError>
        {
            dataNode.eventPublisher(for: type, childrenConstraint: childrenConstraint, queue: queue)
        }

        /// A publisher of decoded values, skipping undecodable ones; see
        /// ``DataNode/decodedValuePublisher(for:childrenConstraint:as:queue:)``.
        ///
        /// ```swift
        /// alice.forCombine.decodedValuePublisher(as: User.self)
        /// ```
        public func decodedValuePublisher<T: Decodable>(
            for type: DataEventType = .valueChange, childrenConstraint: ChildrenConstraint = .all,
            as valueType: T.Type = T.self, queue: DispatchQueue? = nil
        ) -> AnyPublisher<T, WeftError> {
            dataNode.decodedValuePublisher(
                for: type, childrenConstraint: childrenConstraint, as: valueType, queue: queue)
        }

        /// A publisher of events that cannot fail; see ``DataNode/publisher(for:childrenConstraint:queue:)``.
        ///
        /// ```swift
        /// let cancellable = score.forCombine.publisher(queue: .main).sink { print($0.value) }
        /// ```
        public func publisher(
            for type: DataEventType = .valueChange, childrenConstraint: ChildrenConstraint = .all,
            queue: DispatchQueue? = nil
        ) -> AnyPublisher<DataEvent, Never> {
            dataNode.publisher(for: type, childrenConstraint: childrenConstraint, queue: queue)
        }

        // MARK: Helpers

        /// A future fulfilled at once with the result of `body`.
        private static func now<T>(_ body: () throws -> T) -> Future<T, WeftError> {
            let result = Result { try body() }.mapError { WeftError.from($0) }
            return Future { promise in promise(result) }
        }

        /// A future fulfilled by a completion callback that `start` hands to a callback form.
        private static func later<T>(
            _ start: @escaping (@escaping @Sendable (Result<T, WeftError>) -> Void) -> Void
        ) -> Future<T, WeftError> {
            Future { promise in
                let box = PromiseBox(promise)
                start { box.fulfill($0) }
            }
        }
    }
}

/// Carries a Combine promise into a `@Sendable` callback. Combine's `Future` (and OpenCombine's) guards
/// its promise with a lock, and the callback forms call their completion exactly once.
final class PromiseBox<Output>: @unchecked Sendable {
    private let promise: (Result<Output, WeftError>) -> Void

    init(_ promise: @escaping (Result<Output, WeftError>) -> Void) { self.promise = promise }

    func fulfill(_ result: Result<Output, WeftError>) { promise(result) }
}
