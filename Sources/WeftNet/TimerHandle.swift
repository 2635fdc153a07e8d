import CLibUV

/// A timer scheduled with ``EventLoop/scheduleTimer(after:repeating:_:)``; cancel it to stop it.
///
/// A one-shot timer closes itself after it fires; a repeating one runs until cancelled or until the loop
/// shuts down. Its body runs on the loop thread.
///
/// ```swift
/// let heartbeat = try loop.scheduleTimer(after: 1_000, repeating: 1_000) { session.sendHeartbeat() }
/// …
/// heartbeat.cancel()
/// ```
///
/// It is `@unchecked Sendable` so it can be handed to ``EventLoop/execute(_:)``: its state is confined to the
/// loop thread, and ``cancel()`` checks that it is called there.
public final class TimerHandle: @unchecked Sendable {
    /// The loop that owns the timer.
    public let loop: EventLoop
    /// Whether the timer can still fire: false once a one-shot timer has fired, or once cancelled.
    public private(set) var isActive = true

    private let handle: UnsafeMutablePointer<uv_timer_t>
    private var body: (() -> Void)?
    private let isRepeating: Bool

    /// Makes and starts the libuv timer; the loop calls this on its thread.
    init(loop: EventLoop, afterMilliseconds: UInt64, repeatingMilliseconds: UInt64, body: @escaping () -> Void)
        throws(NetError)
    {
        self.loop = loop
        self.body = body
        self.isRepeating = repeatingMilliseconds > 0
        handle = .allocate(capacity: 1)
        let initStatus = uv_timer_init(loop.uvLoop, handle)
        guard initStatus == 0 else {
            handle.deallocate()
            throw NetError(uvStatus: initStatus, context: "schedule timer")
        }
        handle.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        loop.register(self)
        // The loop's clock is cached per turn; refresh it so a long callback does not make the timer early.
        uv_update_time(loop.uvLoop)
        let startStatus = uv_timer_start(handle, _timerFired, afterMilliseconds, repeatingMilliseconds)
        guard startStatus == 0 else {
            close()
            throw NetError(uvStatus: startStatus, context: "schedule timer")
        }
    }

    /// Stops the timer so its body never runs again; does nothing if it already fired or was cancelled.
    ///
    /// ```swift
    /// timeout.cancel()
    /// ```
    ///
    /// Call it on the loop thread.
    public func cancel() {
        loop.preconditionInLoopThread()
        close()
    }

    /// Runs the body; a one-shot timer closes first, so the body may schedule a new timer freely.
    fileprivate func fire() {
        guard isActive, let body else { return }
        if !isRepeating {
            close()
        }
        body()
    }

    /// Stops and closes the handle, dropping the body (and what it captured).
    private func close() {
        guard isActive else { return }
        isActive = false
        body = nil
        uv_timer_stop(handle)
        uv_close(_asHandle(handle), _timerClosed)
    }

    /// Frees the handle once libuv has closed it.
    fileprivate func didClose() {
        handle.deallocate()
        loop.unregister(self)
    }
}

// MARK: - _LoopResource

extension TimerHandle: _LoopResource {
    func _closeForShutdown() {
        close()
    }
}

private func _timerFired(_ handle: UnsafeMutablePointer<uv_timer_t>?) {
    guard let data = handle?.pointee.data else { return }
    Unmanaged<TimerHandle>.fromOpaque(data).takeUnretainedValue().fire()
}

private func _timerClosed(_ handle: UnsafeMutablePointer<uv_handle_t>?) {
    guard let data = handle?.pointee.data else { return }
    Unmanaged<TimerHandle>.fromOpaque(data).takeUnretainedValue().didClose()
}
