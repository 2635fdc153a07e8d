import CLibUV

// MARK: - Reading frames

extension Connection {
    /// Stops reading from the socket; frames already read wait until ``resumeReading()``.
    ///
    /// Called from inside ``onFrame``, no further frame is delivered until reading resumes. While paused the
    /// kernel's buffers fill and the peer's writes back up, which is how a slow consumer slows a fast producer.
    ///
    /// ```swift
    /// connection.onFrame = { frame in
    ///     queue.append(frame)
    ///     if queue.count >= high { connection.pauseReading() }
    /// }
    /// ```
    public func pauseReading() {
        loop.preconditionInLoopThread()
        guard !isReadingPaused else { return }
        isReadingPaused = true
        stopReadingHandle()
    }

    /// Delivers the frames read before the pause, then reads from the socket again.
    ///
    /// Frames already buffered are handed to ``onFrame`` before this returns (or, when called from inside
    /// ``onFrame``, right after that callback returns).
    ///
    /// ```swift
    /// if queue.count <= low { connection.resumeReading() }
    /// ```
    public func resumeReading() {
        loop.preconditionInLoopThread()
        guard isReadingPaused else { return }
        isReadingPaused = false
        guard state == .open, !isDelivering else { return }
        deliverFrames()
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

    /// Takes bytes the socket delivered and hands out the whole frames among them.
    fileprivate func didRead(_ bytes: UnsafeRawBufferPointer) {
        guard state == .open else { return }
        decoder.append(bytes)
        deliverFrames()
    }

    /// Hands whole frames to ``onFrame`` until none is left, reading is paused or the connection closes.
    func deliverFrames() {
        isDelivering = true
        defer { isDelivering = false }
        while state == .open, !isReadingPaused {
            let frame: [UInt8]?
            do {
                frame = try decoder.nextFrame()
            } catch {
                failFraming(error)
                return
            }
            guard let frame else { break }
            onFrame?(frame)
        }
        if isReadingPaused {
            stopReadingHandle()
        }
    }

    /// Closes the connection because the peer broke the framing rules, and says so in the log.
    private func failFraming(_ violation: FrameDecoder.Violation) {
        let context = "read frame from \(remoteAddress)"
        let error: NetError
        switch violation {
        case let .tooLarge(announcedBytes):
            let reason = "header announces \(announcedBytes) bytes; at most \(decoder.payloadBytesMax) allowed"
            error = NetError(.frameTooLarge, context: context, reason: reason)
        case .empty:
            let reason = "header announces an empty frame; a frame carries at least its type byte"
            error = NetError(.frameEmpty, context: context, reason: reason)
        }
        loop.logger.warning("closing connection: malformed frame", metadata: ["error": "\(error)"])
        finish(error)
    }

    /// The peer closed its side: orderly between frames, a truncated frame otherwise.
    fileprivate func didReachEnd() {
        guard state == .open || state == .draining else { return }
        let leftover = decoder.bufferedBytes
        guard leftover == 0 else {
            let reason = "the peer closed the connection \(leftover) bytes into an unfinished frame"
            let error = NetError(.frameTruncated, context: "read frame from \(remoteAddress)", reason: reason)
            loop.logger.warning("closing connection: truncated frame", metadata: ["error": "\(error)"])
            finish(error)
            return
        }
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
/// copies what it keeps before the next read.
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
