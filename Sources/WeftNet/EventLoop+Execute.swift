import CLibUV

/// What other threads share with the loop thread; always accessed under ``EventLoop/sharedLock``.
struct _SharedState {
    /// Where the loop is in its life.
    enum Phase: Equatable {
        /// Accepting work.
        case running
        /// Closing its handles; refusing new work.
        case stopping
        /// The thread has finished.
        case stopped
    }

    /// Closures waiting to run on the loop thread, oldest first; at most ``NetLimits/executeQueueClosuresMax``.
    var queue: [@Sendable () -> Void] = []
    /// Where the loop is in its life.
    var phase = Phase.running
    /// Whether someone asked the loop to shut down.
    var shutdownRequested = false
}

// MARK: - Running work on the loop thread

extension EventLoop {
    /// Runs `work` on the loop thread, soon, from any thread.
    ///
    /// Closures run in the order they were queued, each once. A call from the loop thread itself queues the
    /// closure for the next turn of the loop rather than running it inline.
    ///
    /// ```swift
    /// try loop.execute { connection.close() }
    /// ```
    ///
    /// - Parameter work: what to run; it may call every loop-confined API.
    /// - Throws: ``NetError/Code/loopStopped`` once shutdown has begun (`work` will never run), or
    ///   ``NetError/Code/queueFull`` when ``NetLimits/executeQueueClosuresMax`` closures are waiting.
    public func execute(_ work: @escaping @Sendable () -> Void) throws(NetError) {
        try sharedLock.withLock { () throws(NetError) in
            guard shared.phase == .running else {
                throw NetError(.loopStopped, context: "execute on \(label)", reason: "the event loop is shutting down")
            }
            guard shared.queue.count < NetLimits.executeQueueClosuresMax else {
                throw NetError(
                    .queueFull, context: "execute on \(label)",
                    reason: "\(NetLimits.executeQueueClosuresMax) closures are already waiting")
            }
            shared.queue.append(work)
            // One signal per empty-to-non-empty transition is enough: the loop takes the whole queue at once.
            // It is sent under the lock so the handle cannot be closed between the check and the send.
            if shared.queue.count == 1 {
                uv_async_send(wakeup)
            }
        }
    }

    /// Runs `work` on the loop thread and returns its result to the awaiting caller.
    ///
    /// ```swift
    /// let listener = try await loop.submit { try loop.listen(host: "127.0.0.1", port: 0) { _ in } }
    /// print(listener.port)
    /// ```
    ///
    /// - Parameter work: what to run on the loop thread.
    /// - Returns: the value `work` returned.
    /// - Throws: what `work` threw, or the ``NetError`` of ``execute(_:)`` (then `work` never ran).
    @discardableResult
    public func submit<Value: Sendable>(
        _ work: @escaping @Sendable () throws -> Value
    ) async throws -> Value {
        let result: Result<Value, any Error> = await withCheckedContinuation { continuation in
            do throws(NetError) {
                try execute {
                    continuation.resume(returning: Result { try work() })
                }
            } catch {
                continuation.resume(returning: .failure(error))
            }
        }
        return try result.get()
    }

    /// Runs every queued closure, then shuts down if asked; called by the wake-up handle on the loop thread.
    func drainQueue() {
        let (work, stop) = sharedLock.withLock {
            let work = shared.queue
            shared.queue = []
            return (work, shared.shutdownRequested)
        }
        for item in work {
            item()
        }
        if stop && !isClosing {
            performShutdown()
        }
    }
}
