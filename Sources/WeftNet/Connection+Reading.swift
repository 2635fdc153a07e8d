import CLibUV

// MARK: - Reading bytes

extension Connection {
    /// Stops reading from the socket until ``resumeReading()``.
    ///
    /// Called from inside ``onRead``, the chunk being delivered is the last one until reading resumes. While
    /// paused the kernel's buffers fill and the peer's writes back up, which is how a slow consumer slows a
    /// fast producer, and how a layer that must not buffer more (an unauthenticated peer) keeps it out.
    ///
    /// ```swift
    /// connection.onRead = { bytes in
    ///     queue.append(contentsOf: bytes)
    ///     if queue.count >= high { connection.pauseReading() }
    /// }
    /// ```
    public func pauseReading() {
        loop.preconditionInLoopThread()
        guard !isReadingPaused else { return }
        isReadingPaused = true
        stopReadingHandle()
    }

    /// Reads from the socket again after ``pauseReading()``.
    ///
    /// ```swift
    /// if queue.count <= low { connection.resumeReading() }
    /// ```
    public func resumeReading() {
        loop.preconditionInLoopThread()
        guard isReadingPaused else { return }
        isReadingPaused = false
        startReadingHandle()
    }

    /// Starts `uv_read_start` when the connection is open and not paused.
    func startReadingHandle() {
        guard state == .open, !isReadingPaused, !isReading else { return }
        let status = uv_read_start(_asStream(handle), _connectionAllocate, _connectionRead)
        guard status == 0 else {
            finish(NetError(uvStatus: status, context: "read from \(remoteAddress)"))
            return
        }
        isReading = true
    }

    /// Stops `uv_read_start` if it is in effect.
    func stopReadingHandle() {
        guard isReading else { return }
        uv_read_stop(_asStream(handle))
        isReading = false
    }

    /// Hands bytes the socket delivered to ``onRead``.
    fileprivate func didRead(_ bytes: UnsafeRawBufferPointer) {
        guard state == .open else { return }
        onRead?(bytes)
    }

    /// The peer closed its side: the connection closes in order (whether that ended a message is for
    /// the layer above to say).
    fileprivate func didReachEnd() {
        guard state == .open || state == .draining else { return }
        finish(nil)
    }

    /// A read failed: the connection is broken.
    fileprivate func didFailReading(status: Int32) {
        let error = NetError(uvStatus: status, context: "read from \(remoteAddress)")
        loop.logger.debug("connection broke while reading", metadata: ["error": "\(error)"])
        finish(error)
    }
}

/// Lends the loop's shared read buffer: libuv reads one stream at a time, and ``Connection/didRead(_:)``
/// hands it to ``Connection/onRead``, which copies what it keeps before the next read.
private func _connectionAllocate(
    _ handle: UnsafeMutablePointer<uv_handle_t>?, _ suggestedBytes: Int, _ buffer: UnsafeMutablePointer<uv_buf_t>?
) {
    guard let buffer else { return }
    guard let data = handle?.pointee.data else {
        buffer.pointee = uv_buf_init(nil, 0)
        return
    }
    let readBuffer = Unmanaged<Connection>.fromOpaque(data).takeUnretainedValue().loop.readBuffer
    let base = readBuffer.baseAddress?.assumingMemoryBound(to: CChar.self)
    buffer.pointee = uv_buf_init(base, UInt32(readBuffer.count))
}

private func _connectionRead(
    _ stream: UnsafeMutablePointer<uv_stream_t>?, _ count: Int, _ buffer: UnsafePointer<uv_buf_t>?
) {
    guard let data = stream?.pointee.data else { return }
    let connection = Unmanaged<Connection>.fromOpaque(data).takeUnretainedValue()
    if count > 0, let base = buffer?.pointee.base {
        connection.didRead(UnsafeRawBufferPointer(start: base, count: count))
    } else if count == Int(UV_EOF.rawValue) {
        connection.didReachEnd()
    } else if count < 0 {
        connection.didFailReading(status: Int32(truncatingIfNeeded: count))
    }
}
