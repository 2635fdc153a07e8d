import CLibUV

// MARK: - Shutting down

extension EventLoop {
    /// Asks the loop to shut down, from any thread (a signal handler on the loop thread included), and returns
    /// at once.
    ///
    /// On its next turn the loop runs the closures already queued, closes every listener, connection, timer
    /// and signal watcher (their owners hear ``NetError/Code/loopStopped``), and its thread ends. Calling it
    /// again does nothing.
    ///
    /// ```swift
    /// _ = try loop.onSignal(SIGTERM) { loop.beginShutdown() }
    /// loop.waitUntilStopped()
    /// ```
    public func beginShutdown() {
        sharedLock.withLock {
            guard shared.phase == .running, !shared.shutdownRequested else { return }
            shared.shutdownRequested = true
            uv_async_send(wakeup)
        }
    }

    /// Blocks the calling thread until the loop thread has ended; returns at once if it already has.
    ///
    /// ```swift
    /// loop.waitUntilStopped() // a daemon's main thread, after setting up its listener and signal watchers
    /// ```
    ///
    /// Calling it on the loop thread is a programming error (it would wait for itself).
    public func waitUntilStopped() {
        joinLock.withLock {
            // Once joined, the loop thread's id may belong to a new thread (the system reuses a joined thread's
            // id): checking it first would take a later caller for the loop thread.
            guard !joined else { return }
            precondition(!inLoopThread, "waitUntilStopped() on the loop thread of \(label) would wait for itself")
            var loopThread = thread
            uv_thread_join(&loopThread)
            joined = true
        }
    }

    /// Closes everything the loop owns and joins its thread: ``beginShutdown()`` then ``waitUntilStopped()``.
    ///
    /// ```swift
    /// let loop = try EventLoop()
    /// defer { loop.shutdown() }
    /// ```
    ///
    /// Call it from any thread but the loop thread; from the loop thread use ``beginShutdown()``.
    public func shutdown() {
        beginShutdown()
        waitUntilStopped()
    }

    /// Whether the loop thread has ended.
    public var isStopped: Bool {
        sharedLock.withLock { shared.phase == .stopped }
    }

    /// Refuses new work, runs what was queued, and closes every handle; loop thread only.
    func performShutdown() {
        preconditionInLoopThread()
        precondition(!isClosing, "performShutdown() ran twice on \(label)")
        isClosing = true
        let remaining = sharedLock.withLock {
            shared.phase = .stopping
            let work = shared.queue
            shared.queue = []
            return work
        }
        for item in remaining {
            item()
        }
        logger.debug(
            "event loop shutting down", metadata: ["loop": "\(label)", "resources": "\(resources.count)"])
        for resource in Array(resources.values) {
            resource._closeForShutdown()
        }
        uv_close(_asHandle(wakeup), nil)
    }

    /// Closes the libuv loop once `uv_run` has returned, and marks the loop stopped; loop thread only.
    func finishThread() {
        var strayHandles = 0
        uv_walk(uvLoop, _closeStrayHandle, &strayHandles)
        if strayHandles > 0 {
            logger.error("closed handles nobody owned", metadata: ["loop": "\(label)", "handles": "\(strayHandles)"])
            uv_run(uvLoop, UV_RUN_DEFAULT)
        }
        if !resources.isEmpty {
            logger.error(
                "resources left open at shutdown", metadata: ["loop": "\(label)", "count": "\(resources.count)"])
            resources.removeAll()
        }
        let status = uv_loop_close(uvLoop)
        if status != 0 {
            logger.error(
                "closing the libuv loop failed",
                metadata: ["loop": "\(label)", "error": "\(NetError.reason(forUVStatus: status))"])
        }
        logger.debug("event loop stopped", metadata: ["loop": "\(label)"])
        sharedLock.withLock {
            shared.phase = .stopped
        }
    }
}

/// Closes a handle still open after every resource closed, counting it; `argument` points to the count.
private func _closeStrayHandle(_ handle: UnsafeMutablePointer<uv_handle_t>?, _ argument: UnsafeMutableRawPointer?) {
    guard let handle, uv_is_closing(handle) == 0 else { return }
    uv_close(handle, nil)
    argument?.assumingMemoryBound(to: Int.self).pointee += 1
}
