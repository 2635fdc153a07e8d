// MARK: - Timers

extension EventLoop {
    /// Runs `body` on the loop thread after a delay, once or repeatedly.
    ///
    /// ```swift
    /// let timeout = try loop.scheduleTimer(after: 5_000) { session.handshakeTimedOut() }
    /// let tick = try loop.scheduleTimer(after: 100, repeating: 100) { driver.tick() }
    /// ```
    ///
    /// Call it on the loop thread.
    ///
    /// - Parameters:
    ///   - milliseconds: delay before the first run; zero runs it on the next turn of the loop.
    ///   - repeating: when given, the period between later runs, in milliseconds (more than zero).
    ///   - body: what to run.
    /// - Returns: a handle to cancel the timer with.
    /// - Throws: ``NetError/Code/invalidArgument`` for a negative delay or a period that is not positive,
    ///   ``NetError/Code/loopStopped`` once shutdown has begun.
    @discardableResult
    public func scheduleTimer(
        after milliseconds: Int, repeating: Int? = nil, _ body: @escaping () -> Void
    ) throws(NetError) -> TimerHandle {
        preconditionInLoopThread()
        try checkAcceptingResources("schedule timer")
        guard milliseconds >= 0 else {
            throw NetError(.invalidArgument, context: "schedule timer", reason: "delay \(milliseconds) ms is negative")
        }
        if let repeating, repeating <= 0 {
            throw NetError(
                .invalidArgument, context: "schedule timer", reason: "period \(repeating) ms is not positive")
        }
        return try TimerHandle(
            loop: self, afterMilliseconds: UInt64(milliseconds), repeatingMilliseconds: UInt64(repeating ?? 0),
            body: body)
    }
}
