/// The one error type of WeftNet: what went wrong, what the transport was doing, and why.
///
/// Match on ``code``; show ``description`` to people. Raw libuv codes never leave the module: they are
/// mapped to a ``Code`` and their `uv_strerror` text is kept in ``reason``.
///
/// ```swift
/// do {
///     let listener = try loop.listen(host: "127.0.0.1", port: 7700) { connection in … }
/// } catch let error where error.code == .addressInUse {
///     print(error) // "bind 127.0.0.1:7700: address already in use"
/// }
/// ```
public struct NetError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public enum Code: Equatable, Sendable {
        /// The local address is already bound by another socket.
        case addressInUse
        /// The local address does not belong to this machine.
        case addressUnavailable
        /// The operating system refused the operation (for example, binding a privileged port).
        case permissionDenied
        /// A host or port could not be parsed.
        case invalidAddress
        /// A setting or argument is out of its allowed range.
        case invalidArgument
        /// A host name did not resolve to any address.
        case hostNotFound
        /// Nobody listens at the remote address.
        case connectionRefused
        /// The peer reset the connection, or it broke while writing.
        case connectionReset
        /// The remote host or network cannot be reached.
        case unreachable
        /// An operation took longer than its limit (see ``NetLimits``).
        case timedOut
        /// One write held more than ``NetLimits/writeBytesMax`` bytes.
        case writeTooLarge
        /// A write would take the connection's buffer past ``NetLimits/writeBufferBytesCeiling``.
        case writeBufferFull
        /// The connection or listener is closing or closed.
        case notOpen
        /// The event loop is shutting down or has stopped.
        case loopStopped
        /// The event loop's cross-thread queue holds ``NetLimits/executeQueueClosuresMax`` closures.
        case queueFull
        /// The process ran out of a resource (file descriptors, memory).
        case resourceExhausted
        /// Any other operating-system failure; ``NetError/reason`` has its text.
        case system
    }

    /// What kind of failure this is.
    public let code: Code
    /// What the transport was doing, for example `"bind 127.0.0.1:7700"`.
    public let context: String
    /// Why it failed, for example `"address already in use"`.
    public let reason: String

    /// Makes an error.
    ///
    /// - Parameters:
    ///   - code: the kind of failure.
    ///   - context: what was being done, with its operands.
    ///   - reason: why it failed, in words.
    public init(_ code: Code, context: String, reason: String) {
        self.code = code
        self.context = context
        self.reason = reason
    }

    /// `"<context>: <reason>"`.
    public var description: String { "\(context): \(reason)" }
}
