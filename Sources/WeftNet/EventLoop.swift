import CLibUV
import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One libuv loop running on its own thread, owning every socket, timer and signal watcher made through it.
///
/// **Threading.** The loop thread is the only thread that touches libuv handles. ``execute(_:)``,
/// ``submit(_:)``, ``beginShutdown()``, ``shutdown()`` and ``inLoopThread`` may be called from any thread.
/// Everything else (``listen(host:port:backlog:connectionsMax:onAccept:)``, ``connect(host:port:timeoutMilliseconds:_:)``,
/// ``scheduleTimer(after:repeating:_:)``, ``onSignal(_:_:)`` and the methods of the objects they return) must
/// be called on the loop thread, and every callback they take runs on the loop thread. Calling them from
/// another thread is a programming error and stops the process with a message.
///
/// **Lifetime.** The thread starts in `init` and runs until ``shutdown()``, which closes every handle (owners
/// hear ``NetError/Code/loopStopped``) and joins the thread. A loop that is never shut down keeps its thread.
///
/// ```swift
/// let loop = try EventLoop()
/// let port = try await loop.submit {
///     let listener = try loop.listen(host: "127.0.0.1", port: 0) { connection in
///         connection.onRead = { bytes in try? connection.write(bytes) } // echo
///     }
///     return listener.port
/// }
/// …
/// loop.shutdown()
/// ```
///
/// It is `@unchecked Sendable` because its mutable state is either guarded by a lock (the cross-thread
/// queue and the run phase) or confined to the loop thread (the resource registry), which every confined
/// entry point checks with a precondition.
public final class EventLoop: @unchecked Sendable {
    /// The name given at creation, used in logs and error contexts.
    public let label: String
    /// Where the loop and everything it owns log; label `weft.net` unless another logger was given.
    public let logger: Logger

    /// The libuv loop; touched only on the loop thread once the thread runs.
    let uvLoop: UnsafeMutablePointer<uv_loop_t>
    /// The handle other threads signal to wake the loop; `uv_async_send` is its only cross-thread use.
    let wakeup: UnsafeMutablePointer<uv_async_t>
    /// The loop's one read buffer, lent to whichever connection libuv reads next (reads never overlap).
    let readBuffer: UnsafeMutableRawBufferPointer

    /// Guards ``shared``.
    let sharedLock = _Lock()
    /// State shared with other threads; read and written only under ``sharedLock``.
    var shared = _SharedState()
    /// Guards ``thread`` joins and ``joined``.
    let joinLock = _Lock()
    /// Whether the loop thread has been joined; guarded by ``joinLock``.
    var joined = false
    /// The loop thread, for joining; written once in `init` before the loop is shared.
    var thread = uv_thread_t()
    /// The loop thread's identity, written by that thread before `init` returns (a semaphore orders it).
    var loopThreadID = uv_thread_t()
    /// Whether the thread was started, so `deinit` knows who closes the libuv loop.
    var threadStarted = false
    /// Posted by the loop thread once ``loopThreadID`` is set; only used during `init`.
    var startSignal: UnsafeMutablePointer<uv_sem_t>?

    /// Every open resource, by identity; loop thread only.
    var resources: [ObjectIdentifier: any _LoopResource] = [:]
    /// Whether shutdown has begun on the loop thread; new resources are refused from then on.
    var isClosing = false

    /// Starts a loop on a new thread.
    ///
    /// ```swift
    /// let loop = try EventLoop(label: "weft.daemon")
    /// defer { loop.shutdown() }
    /// ```
    ///
    /// - Parameters:
    ///   - label: a name for logs and error contexts.
    ///   - logger: where to log; defaults to `Logger(label: "weft.net")`.
    /// - Throws: ``NetError`` when libuv cannot make the loop or the thread (out of descriptors or memory).
    public init(label: String = "weft.net.loop", logger: Logger = Logger(label: "weft.net")) throws(NetError) {
        _ = _ignoreBrokenPipe
        self.label = label
        self.logger = logger
        (uvLoop, wakeup) = try Self.makeLoop(label: label)
        readBuffer = .allocate(byteCount: NetLimits.readChunkBytes, alignment: 16)
        wakeup.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        try startThread()
    }

    deinit {
        if !threadStarted {
            // The thread never ran the loop, so nobody closed it: close the wake-up handle and the loop here.
            uv_close(_asHandle(wakeup), nil)
            uv_run(uvLoop, UV_RUN_NOWAIT)
            uv_loop_close(uvLoop)
        }
        wakeup.deallocate()
        uvLoop.deallocate()
        readBuffer.deallocate()
    }

    /// Whether the caller runs on this loop's thread.
    ///
    /// ```swift
    /// if loop.inLoopThread { connection.close() } else { try loop.execute { connection.close() } }
    /// ```
    public var inLoopThread: Bool {
        var current = uv_thread_self()
        var owner = loopThreadID
        return uv_thread_equal(&current, &owner) != 0
    }

    /// Stops the process when called off the loop thread: libuv handles are not thread-safe.
    func preconditionInLoopThread(_ function: StaticString = #function) {
        precondition(
            inLoopThread, "\(function) must run on the loop thread of \(label); hop there with execute { }")
    }

    /// Throws ``NetError/Code/loopStopped`` once shutdown has begun, so no handle outlives the loop.
    func checkAcceptingResources(_ context: @autoclosure () -> String) throws(NetError) {
        if isClosing {
            throw NetError(.loopStopped, context: context(), reason: "the event loop \(label) is shutting down")
        }
    }

    /// Adds an open resource to the registry that shutdown closes.
    func register(_ resource: any _LoopResource) {
        resources[ObjectIdentifier(resource)] = resource
    }

    /// Removes a resource whose handle has closed.
    func unregister(_ resource: any _LoopResource) {
        resources[ObjectIdentifier(resource)] = nil
    }

    /// The loop's cached monotonic clock, in milliseconds.
    var nowMilliseconds: UInt64 { uv_now(uvLoop) }
}

// MARK: - Starting

extension EventLoop {
    /// Makes and initialises the libuv loop and its wake-up handle, releasing both if either fails.
    private static func makeLoop(
        label: String
    ) throws(NetError) -> (UnsafeMutablePointer<uv_loop_t>, UnsafeMutablePointer<uv_async_t>) {
        let loop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
        let status = uv_loop_init(loop)
        guard status == 0 else {
            loop.deallocate()
            throw NetError(uvStatus: status, context: "start event loop \(label)")
        }
        let wakeup = UnsafeMutablePointer<uv_async_t>.allocate(capacity: 1)
        let asyncStatus = uv_async_init(loop, wakeup, _eventLoopWakeup)
        guard asyncStatus == 0 else {
            wakeup.deallocate()
            uv_loop_close(loop)
            loop.deallocate()
            throw NetError(uvStatus: asyncStatus, context: "start event loop \(label)")
        }
        return (loop, wakeup)
    }

    /// Starts the loop thread and waits until it has recorded its identity.
    private func startThread() throws(NetError) {
        let signal = UnsafeMutablePointer<uv_sem_t>.allocate(capacity: 1)
        defer { signal.deallocate() }
        let semaphoreStatus = uv_sem_init(signal, 0)
        guard semaphoreStatus == 0 else {
            throw NetError(uvStatus: semaphoreStatus, context: "start event loop thread \(label)")
        }
        defer { uv_sem_destroy(signal) }
        startSignal = signal
        // The thread holds the loop alive until it has run to its end.
        let retained = Unmanaged.passRetained(self)
        let status = uv_thread_create(&thread, _eventLoopThreadMain, retained.toOpaque())
        guard status == 0 else {
            retained.release()
            startSignal = nil
            throw NetError(uvStatus: status, context: "start event loop thread \(label)")
        }
        threadStarted = true
        uv_sem_wait(signal)
        startSignal = nil
    }

    /// The loop thread's body: run until every handle is closed, then close the loop.
    fileprivate func runThread() {
        loopThreadID = uv_thread_self()
        if let startSignal { uv_sem_post(startSignal) }
        logger.debug("event loop started", metadata: ["loop": "\(label)"])
        uv_run(uvLoop, UV_RUN_DEFAULT)
        if !isClosing {
            // uv_run only returns early if a handle was closed behind our back; shut down properly anyway.
            logger.error("event loop ran out of handles before shutdown", metadata: ["loop": "\(label)"])
            performShutdown()
            uv_run(uvLoop, UV_RUN_DEFAULT)
        }
        finishThread()
    }
}

/// Ignores SIGPIPE once per process: a write to a socket the peer closed must come back as `EPIPE`
/// (a ``NetError/Code/connectionReset``), not kill the daemon.
private let _ignoreBrokenPipe: Void = {
    _ = signal(SIGPIPE, SIG_IGN)
}()

/// Entry point of the loop thread; `argument` is the retained loop.
private func _eventLoopThreadMain(_ argument: UnsafeMutableRawPointer?) {
    guard let argument else { return }
    let loop = Unmanaged<EventLoop>.fromOpaque(argument).takeRetainedValue()
    loop.runThread()
}

/// The wake-up handle's callback: runs queued closures and, when asked, shuts down.
private func _eventLoopWakeup(_ handle: UnsafeMutablePointer<uv_async_t>?) {
    guard let data = handle?.pointee.data else { return }
    Unmanaged<EventLoop>.fromOpaque(data).takeUnretainedValue().drainQueue()
}
