// MARK: - Signals

extension EventLoop {
    /// Runs `handler` on the loop thread each time the process receives `signal`.
    ///
    /// ```swift
    /// try loop.onSignal(SIGINT) { loop.beginShutdown() }
    /// try loop.onSignal(SIGTERM) { loop.beginShutdown() }
    /// ```
    ///
    /// Call it on the loop thread. Signals are process-wide: while a watcher exists, the signal no longer
    /// has its default action (for SIGINT, ending the process).
    ///
    /// - Parameters:
    ///   - signal: the signal number, for example `SIGTERM`.
    ///   - handler: what to run; it runs on the loop thread, outside the signal handler.
    /// - Returns: a handle to stop watching with.
    /// - Throws: ``NetError/Code/invalidArgument`` for a signal number the system rejects,
    ///   ``NetError/Code/loopStopped`` once shutdown has begun.
    @discardableResult
    public func onSignal(_ signal: Int32, _ handler: @escaping () -> Void) throws(NetError) -> SignalHandle {
        preconditionInLoopThread()
        try checkAcceptingResources("watch signal \(signal)")
        return try SignalHandle(loop: self, signal: signal, handler: handler)
    }
}
