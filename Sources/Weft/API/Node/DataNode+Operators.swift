import Logging
import WeftCore

/// Sets the value of a node: `node <- value`.
infix operator <- : AssignmentPrecedence

extension DataNode {
    static let logger = Logger.weft(label: "weft.api")

    /// Sets the value of a node without waiting: `node.set(value) { _ in }`, for synchronous code.
    ///
    /// The write is applied before the operator returns. A write that fails (an invalid value, a replica
    /// shut down) is logged at `error` level, since there is no caller to tell; use ``set(_:at:waitingFor:)``
    /// to handle errors. Unavailable in async code, where `try await node <- value` is meant (top-level
    /// code would otherwise pick this form silently).
    ///
    /// ```swift
    /// score <- 42
    /// ```
    /// - Parameters:
    ///   - node: the node to set.
    ///   - value: the new value, or nil to delete the node.
    @available(*, noasync, message: "in async code (top-level code too) use try await node.set(value)")
    public static func <- (node: DataNode, value: (some Encodable)?) {
        node.set(value, waitingFor: .pending) { result in
            if case .failure(let error) = result { logger.error("\(node.path) <- value failed: \(error)") }
        }
    }

    /// Sets the value of a node and waits until the write is durable: `try await node <- value`.
    ///
    /// ```swift
    /// try await score <- 42
    /// ```
    /// - Parameters:
    ///   - node: the node to set.
    ///   - value: the new value, or nil to delete the node.
    /// - Throws: the errors of ``set(_:at:waitingFor:)``.
    nonisolated(nonsending) public static func <- (node: DataNode, value: (some Encodable)?) async throws {
        try await node.set(value)
    }

    /// Adds a child under a new push id without waiting: `node.push(value) { _ in }`, for synchronous code.
    ///
    /// A push that fails is logged at `error` level; use ``push(_:at:waitingFor:)`` to handle errors.
    ///
    /// ```swift
    /// chat += Message(author: "alice", text: "hi")
    /// ```
    /// - Parameters:
    ///   - node: the parent of the new child.
    ///   - value: the child's value.
    @available(*, noasync, message: "in async code (top-level code too) use try await node.push(value)")
    public static func += (node: DataNode, value: (some Encodable)?) {
        node.push(value, waitingFor: .pending) { result in
            if case .failure(let error) = result { logger.error("\(node.path) += value failed: \(error)") }
        }
    }

    /// Adds a child under a new push id and waits until the write is durable: `try await node += value`.
    ///
    /// ```swift
    /// try await chat += Message(author: "alice", text: "hi")
    /// ```
    /// - Parameters:
    ///   - node: the parent of the new child.
    ///   - value: the child's value.
    /// - Throws: the errors of ``push(_:at:waitingFor:)``.
    nonisolated(nonsending) public static func += (node: DataNode, value: (some Encodable)?) async throws {
        try await node.push(value)
    }
}
