// MARK: - TCP

extension EventLoop {
    /// Listens for TCP connections on a numeric address.
    ///
    /// ```swift
    /// let listener = try loop.listen(host: "127.0.0.1", port: 0) { connection in
    ///     connection.onRead = { bytes in try? connection.write(bytes) }
    /// }
    /// print(listener.port) // the port the system chose
    /// ```
    ///
    /// Call it on the loop thread; `onAccept` runs there.
    ///
    /// - Parameters:
    ///   - host: a numeric IPv4 or IPv6 address (`"127.0.0.1"`, `"0.0.0.0"`, `"::1"`).
    ///   - port: the port, or 0 for one the system chooses (read it back from ``Listener/port``).
    ///   - backlog: the kernel's queue of connections not yet accepted, 1...``NetLimits/listenBacklog``.
    ///   - connectionsMax: most live accepted connections, 1...``NetLimits/connectionsMax``; beyond it new
    ///     connections get `refusal` and are closed, and the refusal is logged with the limit.
    ///   - refusal: the bytes a connection refused at the limit is sent before it closes, so that the peer
    ///     learns why (the protocol above's "too many connections" message); none by default.
    ///   - onAccept: receives each accepted, open connection; set its callbacks here.
    /// - Returns: the listening socket.
    /// - Throws: ``NetError/Code/invalidAddress`` for a host that is not numeric or a port out of range;
    ///   ``NetError/Code/addressInUse`` (`"bind 127.0.0.1:7700: address already in use"`),
    ///   ``NetError/Code/permissionDenied`` and the like from the system; ``NetError/Code/invalidArgument``
    ///   for a backlog or connection limit out of range; ``NetError/Code/loopStopped``.
    public func listen(
        host: String, port: Int, backlog: Int = NetLimits.listenBacklog,
        connectionsMax: Int = NetLimits.connectionsMax, refusal: [UInt8] = [],
        onAccept: @escaping (Connection) -> Void
    ) throws(NetError) -> Listener {
        preconditionInLoopThread()
        let target = SocketAddress.describe(host: host, port: port)
        try checkAcceptingResources("listen on \(target)")
        guard (1...NetLimits.connectionsMax).contains(connectionsMax) else {
            let reason = "connection limit must be 1...\(NetLimits.connectionsMax)"
            throw NetError(.invalidArgument, context: "listen on \(target)", reason: reason)
        }
        guard (1...NetLimits.listenBacklog).contains(backlog) else {
            let reason = "backlog must be 1...\(NetLimits.listenBacklog)"
            throw NetError(.invalidArgument, context: "listen on \(target)", reason: reason)
        }
        let listener = try Listener(
            loop: self, host: host, port: port, backlog: backlog, connectionsMax: connectionsMax, refusal: refusal,
            onAccept: onAccept)
        logger.info("listening", metadata: ["address": "\(listener.address)"])
        return listener
    }

    /// Opens a TCP connection; the outcome goes to `completion` on the loop thread, never before this returns.
    ///
    /// ```swift
    /// try loop.connect(host: "127.0.0.1", port: 7700) { result in
    ///     switch result {
    ///     case .success(let connection): connection.onRead = { bytes in … }
    ///     case .failure(let error): logger.warning("\(error)") // "connect 127.0.0.1:7700: connection refused"
    ///     }
    /// }
    /// ```
    ///
    /// Call it on the loop thread. A host that is not numeric is resolved first (on libuv's thread pool);
    /// the first IPv4 address is used, else the first IPv6 one. Closing the returned connection before it is
    /// established fails the completion with ``NetError/Code/notOpen``.
    ///
    /// - Parameters:
    ///   - host: a numeric address or a host name.
    ///   - port: the port, 1...65535.
    ///   - timeoutMilliseconds: how long resolving and connecting may take together,
    ///     1...``NetLimits/connectTimeoutMillisecondsMax``.
    ///   - completion: receives the open connection (it starts reading once this returns), or why it failed:
    ///     ``NetError/Code/connectionRefused``, ``NetError/Code/hostNotFound``, ``NetError/Code/timedOut``,
    ///     ``NetError/Code/unreachable``, ``NetError/Code/loopStopped``…
    /// - Returns: the connection, not yet established.
    /// - Throws: ``NetError/Code/invalidAddress`` or ``NetError/Code/invalidArgument`` for arguments out of
    ///   range, ``NetError/Code/loopStopped`` once shutdown has begun. Nothing is started then.
    @discardableResult
    public func connect(
        host: String, port: Int, timeoutMilliseconds: Int = NetLimits.connectTimeoutMillisecondsMax,
        _ completion: @escaping (Result<Connection, NetError>) -> Void
    ) throws(NetError) -> Connection {
        preconditionInLoopThread()
        let target = SocketAddress.describe(host: host, port: port)
        try checkAcceptingResources("connect \(target)")
        guard (1...65_535).contains(port) else {
            throw NetError(.invalidAddress, context: "connect \(target)", reason: "port must be in 1...65535")
        }
        guard !host.isEmpty, host.utf8.count <= NetLimits.hostBytesMax else {
            let reason = "host must be 1...\(NetLimits.hostBytesMax) bytes long"
            throw NetError(.invalidAddress, context: "connect \(target)", reason: reason)
        }
        guard (1...NetLimits.connectTimeoutMillisecondsMax).contains(timeoutMilliseconds) else {
            let reason = "timeout must be 1...\(NetLimits.connectTimeoutMillisecondsMax) ms"
            throw NetError(.invalidArgument, context: "connect \(target)", reason: reason)
        }
        let connection = try Connection(loop: self, remoteAddress: target, state: .resolving)
        connection.startConnecting(
            host: host, port: port, timeoutMilliseconds: timeoutMilliseconds, completion: completion)
        return connection
    }
}
