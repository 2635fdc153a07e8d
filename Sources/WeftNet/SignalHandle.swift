import CLibUV

/// A watcher made with ``EventLoop/onSignal(_:_:)``; cancel it to stop watching.
///
/// The handler runs on the loop thread each time the process receives the signal, never inside the
/// signal handler itself, so it may do anything the loop thread may do.
///
/// ```swift
/// let watcher = try loop.onSignal(SIGINT) { loop.beginShutdown() }
/// …
/// watcher.cancel()
/// ```
///
/// It is `@unchecked Sendable` so it can be handed to ``EventLoop/execute(_:)``: its state is confined to the
/// loop thread, and ``cancel()`` checks that it is called there.
public final class SignalHandle: @unchecked Sendable {
    /// The loop that owns the watcher.
    public let loop: EventLoop
    /// The signal number watched, for example `SIGTERM`.
    public let signal: Int32
    /// Whether the watcher still runs its handler.
    public private(set) var isActive = true

    private let handle: UnsafeMutablePointer<uv_signal_t>
    private var handler: (() -> Void)?

    /// Makes and starts the libuv signal watcher; the loop calls this on its thread.
    init(loop: EventLoop, signal: Int32, handler: @escaping () -> Void) throws(NetError) {
        self.loop = loop
        self.signal = signal
        self.handler = handler
        handle = .allocate(capacity: 1)
        let initStatus = uv_signal_init(loop.uvLoop, handle)
        guard initStatus == 0 else {
            handle.deallocate()
            throw NetError(uvStatus: initStatus, context: "watch signal \(signal)")
        }
        handle.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        loop.register(self)
        let startStatus = uv_signal_start(handle, _signalReceived, signal)
        guard startStatus == 0 else {
            close()
            throw NetError(uvStatus: startStatus, context: "watch signal \(signal)")
        }
    }

    /// Stops watching; libuv restores the signal's default action once no watcher is left for it.
    ///
    /// ```swift
    /// watcher.cancel()
    /// ```
    ///
    /// Call it on the loop thread.
    public func cancel() {
        loop.preconditionInLoopThread()
        close()
    }

    fileprivate func received() {
        handler?()
    }

    private func close() {
        guard isActive else { return }
        isActive = false
        handler = nil
        uv_signal_stop(handle)
        uv_close(_asHandle(handle), _signalClosed)
    }

    fileprivate func didClose() {
        handle.deallocate()
        loop.unregister(self)
    }
}

// MARK: - _LoopResource

extension SignalHandle: _LoopResource {
    func _closeForShutdown() {
        close()
    }
}

private func _signalReceived(_ handle: UnsafeMutablePointer<uv_signal_t>?, _ signal: Int32) {
    guard let data = handle?.pointee.data else { return }
    Unmanaged<SignalHandle>.fromOpaque(data).takeUnretainedValue().received()
}

private func _signalClosed(_ handle: UnsafeMutablePointer<uv_handle_t>?) {
    guard let data = handle?.pointee.data else { return }
    Unmanaged<SignalHandle>.fromOpaque(data).takeUnretainedValue().didClose()
}
