import CLibUV

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A listening TCP socket made with ``EventLoop/listen(host:port:backlog:connectionsMax:onAccept:)``.
///
/// Each accepted socket becomes an open ``Connection`` handed to `onAccept` on the loop thread; it starts
/// reading once `onAccept` returns, so callbacks set there see every byte. Past ``connectionsMax`` live
/// connections, a new one is sent the refusal bytes given to `listen` (the protocol's "too many
/// connections" message), closed, and logged with the limit.
///
/// ```swift
/// let listener = try loop.listen(host: "0.0.0.0", port: 7700) { connection in
///     sessions.adopt(connection)
/// }
/// logger.info("listening on \(listener.address)")
/// ```
///
/// It is `@unchecked Sendable` so it can be returned from ``EventLoop/submit(_:)``: its state is confined to
/// the loop thread, and ``close()`` checks that it is called there. ``port`` and ``host`` never change after
/// creation and may be read anywhere.
public final class Listener: @unchecked Sendable {
    /// The loop that owns the socket.
    public let loop: EventLoop
    /// The numeric host the socket is bound to, as given.
    public let host: String
    /// The port the socket is bound to: the one asked for, or the one the system chose for port 0.
    public private(set) var port: Int
    /// `"host:port"`, with the bound port.
    public var address: String { SocketAddress.describe(host: host, port: port) }
    /// Accepted connections that have not closed yet.
    public private(set) var connectionCount = 0
    /// Most live accepted connections; beyond it new ones are closed at once (and logged). It is the
    /// limit asked for, lowered to what the process's open-file limit leaves room for
    /// (``OpenFileLimit/connectionsAllowed(wanted:)``): past that, libuv would close them unseen.
    public let connectionsMax: Int
    /// Whether the socket still accepts connections.
    public private(set) var isListening = true

    private let handle: UnsafeMutablePointer<uv_tcp_t>
    private var onAccept: ((Connection) -> Void)?
    /// What a connection refused at ``connectionsMax`` is sent before it closes.
    private let refusal: [UInt8]

    /// Binds and listens; the loop calls this on its thread.
    init(
        loop: EventLoop, host: String, port: Int, backlog: Int, connectionsMax: Int, refusal: [UInt8],
        onAccept: @escaping (Connection) -> Void
    )
        throws(NetError)
    {
        guard let address = SocketAddress(numericHost: host, port: port) else {
            let reason = "expected a numeric IPv4 or IPv6 host and a port in 0...65535"
            throw NetError(
                .invalidAddress, context: "bind \(SocketAddress.describe(host: host, port: port))", reason: reason)
        }
        self.loop = loop
        self.host = host
        self.port = port
        self.connectionsMax = OpenFileLimit.connectionsAllowed(wanted: connectionsMax)
        self.onAccept = onAccept
        self.refusal = refusal
        handle = .allocate(capacity: 1)
        let initStatus = uv_tcp_init(loop.uvLoop, handle)
        guard initStatus == 0 else {
            handle.deallocate()
            throw NetError(uvStatus: initStatus, context: "bind \(address)")
        }
        handle.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        loop.register(self)
        do throws(NetError) {
            try bindAndListen(address, backlog: backlog)
        } catch {
            close()
            throw error
        }
        if self.connectionsMax < connectionsMax, let soft = OpenFileLimit.soft {
            loop.logger.warning(
                "the open-file limit leaves room for fewer connections than wanted; raise it (ulimit -n) for more",
                metadata: [
                    "listener": "\(self.address)", "openFiles": "\(soft)",
                    "connections": "\(self.connectionsMax)", "wanted": "\(connectionsMax)",
                ])
        }
    }

    /// Stops accepting connections and closes the socket. Connections already accepted stay open.
    ///
    /// ```swift
    /// listener.close()
    /// ```
    ///
    /// Call it on the loop thread.
    public func close() {
        loop.preconditionInLoopThread()
        guard isListening else { return }
        isListening = false
        onAccept = nil
        uv_close(_asHandle(handle), _listenerClosed)
    }

    /// Binds, listens, and reads back the bound port.
    private func bindAndListen(_ address: SocketAddress, backlog: Int) throws(NetError) {
        let bindStatus = address.withSockaddr { uv_tcp_bind(handle, $0, 0) }
        guard bindStatus == 0 else { throw NetError(uvStatus: bindStatus, context: "bind \(address)") }
        let listenStatus = uv_listen(_asStream(handle), Int32(clamping: backlog), _listenerReceivedConnection)
        guard listenStatus == 0 else {
            // Linux reports a taken address at listen(2), not bind(2); name the step people recognise.
            let step = listenStatus == UV_EADDRINUSE.rawValue ? "bind" : "listen on"
            throw NetError(uvStatus: listenStatus, context: "\(step) \(address)")
        }
        var storage = sockaddr_storage()
        var length = Int32(MemoryLayout<sockaddr_storage>.size)
        let bound = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw -> SocketAddress? in
                guard uv_tcp_getsockname(handle, raw, &length) == 0 else { return nil }
                return SocketAddress(raw)
            }
        }
        guard let bound else {
            throw NetError(.system, context: "bind \(address)", reason: "the system did not report the bound port")
        }
        port = bound.port
    }

    /// Accepts one pending connection and hands it to the owner, or closes it when over the limit.
    fileprivate func didReceiveConnection(status: Int32) {
        guard isListening else { return }
        guard status == 0 else {
            let error = NetError(uvStatus: status, context: "accept on \(address)")
            loop.logger.warning("accepting a connection failed", metadata: ["error": "\(error)"])
            return
        }
        let connection: Connection
        do {
            connection = try Connection(loop: loop, remoteAddress: "peer of \(address)", state: .open)
        } catch {
            loop.logger.error("could not make a socket for an incoming connection", metadata: ["error": "\(error)"])
            return
        }
        let acceptStatus = uv_accept(_asStream(handle), _asStream(connection.handle))
        guard acceptStatus == 0 else {
            let error = NetError(uvStatus: acceptStatus, context: "accept on \(address)")
            loop.logger.warning("accepting a connection failed", metadata: ["error": "\(error)"])
            connection.finish(error)
            return
        }
        connection.becomeAccepted()
        guard connectionCount < connectionsMax else {
            loop.logger.warning(
                "refusing connection: too many connections",
                metadata: [
                    "listener": "\(address)", "peer": "\(connection.remoteAddress)",
                    "limit": "\(connectionsMax)",
                ])
            // Said, not just closed: a client at the limit got "the connection closed" and no reason. The
            // bytes go out with a graceful close (bounded by the close linger); the refused connection is
            // not counted, so at most one write buffer per refusal in flight.
            do {
                try connection.write(refusal)
            } catch {
                loop.logger.debug("the refusal was not sent", metadata: ["error": "\(error)"])
            }
            connection.close()
            return
        }
        connectionCount += 1
        connection.closeObservers.append { [weak self] _ in self?.connectionCount -= 1 }
        onAccept?(connection)
        connection.startReadingHandle()
    }

    fileprivate func didClose() {
        handle.deallocate()
        loop.unregister(self)
    }
}

// MARK: - _LoopResource

extension Listener: _LoopResource {
    func _closeForShutdown() {
        close()
    }
}

private func _listenerReceivedConnection(_ server: UnsafeMutablePointer<uv_stream_t>?, _ status: Int32) {
    guard let data = server?.pointee.data else { return }
    Unmanaged<Listener>.fromOpaque(data).takeUnretainedValue().didReceiveConnection(status: status)
}

private func _listenerClosed(_ handle: UnsafeMutablePointer<uv_handle_t>?) {
    guard let data = handle?.pointee.data else { return }
    Unmanaged<Listener>.fromOpaque(data).takeUnretainedValue().didClose()
}
