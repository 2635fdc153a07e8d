import CLibUV

// MARK: - Writing bytes

extension Connection {
    /// Sends bytes: queues them behind earlier writes.
    ///
    /// Bytes go to the socket at once when it can take them; the rest wait in the write buffer. Check
    /// ``isWritable`` (or listen to ``onWritabilityChanged``) before producing more. Writing nothing does
    /// nothing.
    ///
    /// ```swift
    /// try connection.write(MessageCodec.encode(.ack(acknowledgement)))
    /// ```
    ///
    /// - Parameter bytes: at most ``NetLimits/writeBytesMax`` bytes.
    /// - Throws: ``NetError/Code/notOpen`` unless the connection is open; ``NetError/Code/writeTooLarge``
    ///   for more than ``NetLimits/writeBytesMax`` bytes; ``NetError/Code/writeBufferFull`` when they would
    ///   take the buffer past ``NetLimits/writeBufferBytesCeiling``. Nothing is queued then, and the
    ///   connection stays open.
    public func write(_ bytes: some Collection<UInt8>) throws(NetError) {
        loop.preconditionInLoopThread()
        let context = "write to \(remoteAddress)"
        guard state == .open else {
            throw NetError(.notOpen, context: context, reason: "the connection is \(stateDescription)")
        }
        let count = bytes.count
        guard count > 0 else { return }
        guard count <= NetLimits.writeBytesMax else {
            let reason = "\(count) bytes in one write; at most \(NetLimits.writeBytesMax)"
            throw NetError(.writeTooLarge, context: context, reason: reason)
        }
        guard bufferedWriteBytes + count <= NetLimits.writeBufferBytesCeiling else {
            let reason = "\(bufferedWriteBytes) bytes already buffered; at most \(NetLimits.writeBufferBytesCeiling)"
            throw NetError(.writeBufferFull, context: context, reason: reason)
        }
        pendingWrite.append(contentsOf: bytes)
        bufferedWriteBytes += count
        flush()
        didMakeWriteProgress()
    }

    /// Hands pending bytes to the socket when no write is in flight: first a synchronous attempt, then a
    /// `uv_write` of what is left.
    private func flush() {
        guard inFlightWrite == nil, !pendingWrite.isEmpty, state == .open || state == .draining else { return }
        let written = pendingWrite.withUnsafeMutableBytes { bytes -> Int32 in
            var buffer = uv_buf_init(bytes.baseAddress?.assumingMemoryBound(to: CChar.self), UInt32(bytes.count))
            return uv_try_write(_asStream(handle), &buffer, 1)
        }
        if written > 0 {
            pendingWrite.removeFirst(Int(written))
            bufferedWriteBytes -= Int(written)
        } else if written < 0 && written != UV_EAGAIN.rawValue {
            finish(NetError(uvStatus: written, context: "write to \(remoteAddress)"))
            return
        }
        guard !pendingWrite.isEmpty else { return }
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: pendingWrite.count, alignment: 1)
        pendingWrite.withUnsafeBytes { storage.copyMemory(from: $0) }
        // Keep a small buffer's capacity for the next writes; give a burst's large one back.
        pendingWrite.removeAll(keepingCapacity: pendingWrite.capacity <= NetLimits.readChunkBytes)
        var buffer = uv_buf_init(storage.baseAddress?.assumingMemoryBound(to: CChar.self), UInt32(storage.count))
        writeRequest.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        let status = uv_write(writeRequest, _asStream(handle), &buffer, 1, _connectionWrote)
        guard status == 0 else {
            storage.deallocate()
            finish(NetError(uvStatus: status, context: "write to \(remoteAddress)"))
            return
        }
        inFlightWrite = storage
    }

    /// The in-flight write finished: free it, write what queued up behind it, and update writability.
    fileprivate func didWrite(status: Int32) {
        guard let storage = inFlightWrite else { return }
        inFlightWrite = nil
        let writtenBytes = storage.count
        storage.deallocate()
        // A write cancelled because the socket is closing needs nothing more.
        guard state == .open || state == .draining else { return }
        guard status == 0 else {
            let error = NetError(uvStatus: status, context: "write to \(remoteAddress)")
            loop.logger.debug("connection broke while writing", metadata: ["error": "\(error)"])
            finish(error)
            return
        }
        bufferedWriteBytes -= writtenBytes
        precondition(bufferedWriteBytes >= 0, "write buffer accounting went negative: \(bufferedWriteBytes)")
        flush()
        didMakeWriteProgress()
    }

    /// Reports a writability change, and finishes a draining close once everything is written.
    private func didMakeWriteProgress() {
        switch state {
        case .open:
            if isWritable && bufferedWriteBytes > NetLimits.writeBufferBytesMax {
                isWritable = false
                onWritabilityChanged?(false)
            } else if !isWritable && bufferedWriteBytes <= NetLimits.writeBufferBytesLow {
                isWritable = true
                onWritabilityChanged?(true)
            }
        case .draining:
            if bufferedWriteBytes == 0 {
                finish(nil)
            }
        case .resolving, .connecting, .closing, .closed:
            return
        }
    }
}

private func _connectionWrote(_ request: UnsafeMutablePointer<uv_write_t>?, _ status: Int32) {
    guard let data = request?.pointee.data else { return }
    Unmanaged<Connection>.fromOpaque(data).takeUnretainedValue().didWrite(status: status)
}
