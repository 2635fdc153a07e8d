import CLibUV

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// MARK: - Establishing

extension Connection {
    /// Starts an outbound connection: resolve the host unless it is numeric, then connect, all within
    /// `timeoutMilliseconds`. The outcome goes to `completion`, on the loop thread, never before this returns.
    func startConnecting(
        host: String, port: Int, timeoutMilliseconds: Int,
        completion: @escaping (Result<Connection, NetError>) -> Void
    ) {
        precondition(state == .resolving, "a connection starts connecting once, from .resolving, not \(state)")
        connectCompletion = completion
        do {
            connectTimer = try loop.scheduleTimer(after: timeoutMilliseconds) { [self] in
                let reason = "no connection within \(timeoutMilliseconds) ms"
                finish(NetError(.timedOut, context: "connect \(remoteAddress)", reason: reason))
            }
        } catch {
            finish(error)
            return
        }
        if let address = SocketAddress(numericHost: host, port: port) {
            state = .connecting
            startConnect(to: address)
        } else {
            startResolving(host: host, port: port)
        }
    }

    /// Marks the connection established: records when, and turns off Nagle's algorithm (frames are latency
    /// sensitive, and writes are already coalesced while one is in flight).
    func becomeOpen() {
        state = .open
        openedAtMilliseconds = loop.nowMilliseconds
        let status = uv_tcp_nodelay(handle, 1)
        if status != 0 {
            let error = NetError(uvStatus: status, context: "set TCP_NODELAY on \(remoteAddress)")
            loop.logger.debug("could not disable Nagle's algorithm", metadata: ["error": "\(error)"])
        }
    }

    /// Marks an accepted socket established and names it after its peer.
    func becomeAccepted() {
        becomeOpen()
        var storage = sockaddr_storage()
        var length = Int32(MemoryLayout<sockaddr_storage>.size)
        let peer = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address -> SocketAddress? in
                guard uv_tcp_getpeername(handle, address, &length) == 0 else { return nil }
                return SocketAddress(address)
            }
        }
        if let peer {
            remoteAddress = peer.description
        }
    }

    /// Looks the host up on libuv's thread pool; the request holds this connection until its callback.
    private func startResolving(host: String, port: Int) {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
            hints.ai_socktype = SOCK_STREAM
        #endif
        let request = UnsafeMutablePointer<uv_getaddrinfo_t>.allocate(capacity: 1)
        let retained = Unmanaged.passRetained(self)
        request.pointee.data = retained.toOpaque()
        connectPort = port
        let status = uv_getaddrinfo(loop.uvLoop, request, _connectionResolved, host, nil, &hints)
        guard status == 0 else {
            retained.release()
            request.deallocate()
            finish(NetError(uvStatus: status, context: "resolve \(remoteAddress)"))
            return
        }
        resolveRequest = request
    }

    /// The lookup ended: connect to its first IPv4 address (or its first address if none is IPv4).
    fileprivate func didResolve(status: Int32, addresses: UnsafeMutablePointer<addrinfo>?) {
        resolveRequest = nil
        guard state == .resolving else { return }
        guard status == 0 else {
            finish(NetError(uvStatus: status, context: "resolve \(remoteAddress)"))
            return
        }
        var chosen: SocketAddress?
        var entry = addresses
        while let current = entry {
            if let raw = current.pointee.ai_addr, let address = SocketAddress(raw, port: connectPort) {
                if address.isIPv4 {
                    chosen = address
                    break
                }
                chosen = chosen ?? address
            }
            entry = current.pointee.ai_next
        }
        guard let chosen else {
            finish(NetError(.hostNotFound, context: "resolve \(remoteAddress)", reason: "no IPv4 or IPv6 address"))
            return
        }
        state = .connecting
        startConnect(to: chosen)
    }

    /// Starts the TCP handshake.
    private func startConnect(to address: SocketAddress) {
        let request = UnsafeMutablePointer<uv_connect_t>.allocate(capacity: 1)
        request.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        let status = address.withSockaddr { uv_tcp_connect(request, handle, $0, _connectionConnected) }
        guard status == 0 else {
            request.deallocate()
            finish(NetError(uvStatus: status, context: "connect \(remoteAddress)"))
            return
        }
    }

    /// The handshake ended: hand the open connection to the completion, then start reading.
    fileprivate func didConnect(status: Int32) {
        // A connect cancelled because the socket is closing is reported by the close callback.
        guard state == .connecting else { return }
        guard status == 0 else {
            finish(NetError(uvStatus: status, context: "connect \(remoteAddress)"))
            return
        }
        connectTimer?.cancel()
        connectTimer = nil
        becomeOpen()
        let completion = connectCompletion
        connectCompletion = nil
        completion?(.success(self))
        startReadingHandle()
    }
}

/// The lookup's callback; libuv calls it on the loop thread, also when the lookup was cancelled.
private func _connectionResolved(
    _ request: UnsafeMutablePointer<uv_getaddrinfo_t>?, _ status: Int32, _ addresses: UnsafeMutablePointer<addrinfo>?
) {
    defer { uv_freeaddrinfo(addresses) }
    guard let request else { return }
    defer { request.deallocate() }
    guard let data = request.pointee.data else { return }
    let connection = Unmanaged<Connection>.fromOpaque(data).takeRetainedValue()
    connection.didResolve(status: status, addresses: addresses)
}

/// The handshake's callback; libuv calls it before the socket's close callback, also when cancelled.
private func _connectionConnected(_ request: UnsafeMutablePointer<uv_connect_t>?, _ status: Int32) {
    guard let request else { return }
    defer { request.deallocate() }
    guard let data = request.pointee.data else { return }
    Unmanaged<Connection>.fromOpaque(data).takeUnretainedValue().didConnect(status: status)
}
