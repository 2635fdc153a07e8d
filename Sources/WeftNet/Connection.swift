import CLibUV

/// One TCP socket carrying a byte stream, accepted by a ``Listener`` or made by
/// ``EventLoop/connect(host:port:timeoutMilliseconds:_:)``.
///
/// **Bytes, not messages.** WeftNet moves bytes; the protocol above (WeftSync's frames) cuts them into
/// messages. ``onRead`` receives each chunk the socket delivered, in order, cut wherever the network cut
/// it; ``write(_:)`` queues bytes behind earlier ones. The connection keeps nothing it read: a chunk is
/// lent to ``onRead`` from the loop's one read buffer (at most ``NetLimits/readChunkBytes``), so what
/// stays in memory is what the layer above chose to keep.
///
/// **Backpressure.** Written bytes wait in a buffer until the socket takes them. Past
/// ``NetLimits/writeBufferBytesMax`` buffered bytes, ``isWritable`` turns false and ``onWritabilityChanged``
/// hears `false`: stop producing until it hears `true` (at ``NetLimits/writeBufferBytesLow``). A write that
/// would pass ``NetLimits/writeBufferBytesCeiling`` is refused. In the other direction, ``pauseReading()``
/// stops reading from the socket, so a slow consumer makes the peer's writes back up instead of a buffer.
///
/// **Threading.** Every member must be used on the loop thread, and every callback runs there. The class is
/// `@unchecked Sendable` only so it can be captured by ``EventLoop/execute(_:)`` closures; its state is
/// confined to the loop thread and each public method checks that it runs there.
///
/// ```swift
/// connection.onRead = { bytes in actions = session.onBytesReceived(bytes, source: log, now: now) }
/// connection.onWritabilityChanged = { writable in session.setPaused(!writable) }
/// connection.onClose = { error in if let error { logger.warning("\(error)") } }
/// try connection.write(MessageCodec.encode(.ping(1)))
/// ```
public final class Connection: @unchecked Sendable {
    /// Where the connection is in its life.
    enum State: Equatable {
        /// Resolving the host name of an outbound connection.
        case resolving
        /// Waiting for an outbound TCP connection to be established.
        case connecting
        /// Established: bytes flow both ways.
        case open
        /// Closed by ``close()`` while writes were buffered: writing them out, reading nothing.
        case draining
        /// `uv_close` called; waiting for libuv's close callback.
        case closing
        /// Closed; callbacks released.
        case closed
    }

    /// The loop that owns the socket.
    public let loop: EventLoop
    /// The peer, as `"host:port"`: the address given to `connect`, or the accepted peer's numeric address.
    public internal(set) var remoteAddress: String

    /// Called with each chunk of bytes read, in order, on the loop thread. The buffer is lent for the
    /// call only: copy what you keep.
    public var onRead: ((UnsafeRawBufferPointer) -> Void)?
    /// Called once when the connection has closed: `nil` for an orderly close (``close()``, or the peer
    /// closing its side), an error otherwise. No callback runs after it, and all three are released.
    public var onClose: ((NetError?) -> Void)?
    /// Called when ``isWritable`` changes.
    public var onWritabilityChanged: ((Bool) -> Void)?

    /// Whether the write buffer has room: false from past ``NetLimits/writeBufferBytesMax`` buffered bytes
    /// until back at ``NetLimits/writeBufferBytesLow``.
    public internal(set) var isWritable = true
    /// Whether ``pauseReading()`` is in effect.
    public internal(set) var isReadingPaused = false
    /// Bytes written and not yet taken by the socket.
    public internal(set) var bufferedWriteBytes = 0
    /// Whether the connection is established and not closing.
    public var isOpen: Bool { state == .open }

    /// Where the connection is in its life.
    var state: State
    /// The libuv socket; freed in the close callback.
    let handle: UnsafeMutablePointer<uv_tcp_t>
    /// Whether `uv_read_start` is in effect.
    var isReading = false
    /// Bytes written and not yet handed to libuv.
    var pendingWrite: [UInt8] = []
    /// Bytes handed to libuv by the one `uv_write` in flight; freed in its callback.
    var inFlightWrite: UnsafeMutableRawBufferPointer?
    /// The request of the one `uv_write` in flight.
    let writeRequest: UnsafeMutablePointer<uv_write_t>
    /// Why the connection closed, handed to ``onClose`` or to the connect completion.
    var closeError: NetError?
    /// The completion of an outbound connection, until it is established or fails.
    var connectCompletion: ((Result<Connection, NetError>) -> Void)?
    /// Bounds resolving and connecting together.
    var connectTimer: TimerHandle?
    /// Bounds draining after ``close()``.
    var lingerTimer: TimerHandle?
    /// The host-name lookup in flight, if any; it holds a reference to this connection until its callback.
    var resolveRequest: UnsafeMutablePointer<uv_getaddrinfo_t>?
    /// The port to connect to once the host name resolves.
    var connectPort = 0
    /// When the connection was established, by the loop's clock.
    var openedAtMilliseconds: UInt64?
    /// Internal listeners to the close (the listener's count, a reconnector), after ``onClose``.
    var closeObservers: [(NetError?) -> Void] = []

    /// Makes an unconnected socket registered with the loop; the loop calls this on its thread.
    init(loop: EventLoop, remoteAddress: String, state: State) throws(NetError) {
        self.loop = loop
        self.remoteAddress = remoteAddress
        self.state = state
        handle = .allocate(capacity: 1)
        let status = uv_tcp_init(loop.uvLoop, handle)
        guard status == 0 else {
            handle.deallocate()
            throw NetError(uvStatus: status, context: "open socket for \(remoteAddress)")
        }
        writeRequest = .allocate(capacity: 1)
        handle.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        loop.register(self)
    }

    /// Closes the connection in order: stops reading, writes out what is buffered (for at most
    /// ``NetLimits/closeLingerMillisecondsMax``), then closes the socket and calls ``onClose`` with `nil`.
    /// Closing a connection that is still connecting fails its completion with ``NetError/Code/notOpen``.
    /// Does nothing if it is already closing.
    ///
    /// ```swift
    /// try connection.write(goodbye)
    /// connection.close()
    /// ```
    public func close() {
        loop.preconditionInLoopThread()
        switch state {
        case .resolving, .connecting:
            finish(NetError(.notOpen, context: "connect \(remoteAddress)", reason: "closed before it was established"))
        case .open:
            stopReadingHandle()
            if bufferedWriteBytes == 0 {
                finish(nil)
            } else {
                state = .draining
                startLingerTimer()
            }
        case .draining, .closing, .closed:
            return
        }
    }

    /// Closes the socket now, dropping buffered writes; `error` goes to ``onClose``. Idempotent.
    func finish(_ error: NetError?) {
        guard state != .closing, state != .closed else { return }
        state = .closing
        closeError = error
        stopReadingHandle()
        connectTimer?.cancel()
        connectTimer = nil
        lingerTimer?.cancel()
        lingerTimer = nil
        if let resolveRequest {
            // Best effort: a lookup already running finishes, and its callback sees the connection closing.
            _ = uv_cancel(UnsafeMutablePointer<uv_req_t>(OpaquePointer(resolveRequest)))
        }
        uv_close(_asHandle(handle), _connectionClosed)
    }

    /// Releases memory and callbacks once libuv has closed the socket, then tells the owner.
    fileprivate func didClose() {
        precondition(state == .closing, "connection closed from state \(state)")
        precondition(inFlightWrite == nil, "libuv closed a socket before cancelling its write")
        state = .closed
        handle.deallocate()
        writeRequest.deallocate()
        pendingWrite = []
        bufferedWriteBytes = 0
        let completion = connectCompletion
        let onClose = self.onClose
        let observers = closeObservers
        connectCompletion = nil
        onRead = nil
        self.onClose = nil
        onWritabilityChanged = nil
        closeObservers = []
        loop.unregister(self)
        if let completion {
            let error = closeError ?? NetError(.notOpen, context: "connect \(remoteAddress)", reason: "closed")
            completion(.failure(error))
            return
        }
        onClose?(closeError)
        for observer in observers {
            observer(closeError)
        }
    }

    /// Closes after ``NetLimits/closeLingerMillisecondsMax`` if the buffered writes have not drained by then.
    private func startLingerTimer() {
        let linger = NetLimits.closeLingerMillisecondsMax
        do {
            lingerTimer = try loop.scheduleTimer(after: linger) { [self] in
                let reason = "\(bufferedWriteBytes) buffered bytes not written within \(linger) ms"
                finish(NetError(.timedOut, context: "close \(remoteAddress)", reason: reason))
            }
        } catch {
            finish(error)
        }
    }

    /// The state, in words, for error messages.
    var stateDescription: String {
        switch state {
        case .resolving: return "resolving its host"
        case .connecting: return "still connecting"
        case .open: return "open"
        case .draining: return "closing"
        case .closing, .closed: return "closed"
        }
    }
}

// MARK: - _LoopResource

extension Connection: _LoopResource {
    func _closeForShutdown() {
        finish(
            NetError(.loopStopped, context: "connection \(remoteAddress)", reason: "the event loop is shutting down"))
    }
}

// MARK: - CustomStringConvertible

extension Connection: CustomStringConvertible {
    public var description: String { "Connection(\(remoteAddress), \(stateDescription))" }
}

private func _connectionClosed(_ handle: UnsafeMutablePointer<uv_handle_t>?) {
    guard let data = handle?.pointee.data else { return }
    Unmanaged<Connection>.fromOpaque(data).takeUnretainedValue().didClose()
}
