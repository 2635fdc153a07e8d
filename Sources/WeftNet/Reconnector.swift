/// Keeps one outbound connection to a host and port alive, reconnecting with jittered exponential backoff.
///
/// After ``start()``, it connects; whenever the attempt fails or the connection closes, it waits
/// ``BackoffPolicy/nextDelay(using:)`` and tries again, until ``stop()``. The backoff starts over when a
/// connection stayed open at least ``NetLimits/reconnectHealthyMillisecondsMin`` (so a peer that accepts and
/// drops at once is not hammered), or when the owner calls ``resetBackoff()`` (say, after a handshake).
///
/// ```swift
/// let hub = Reconnector(loop: loop, host: "hub.example", port: 7700) { connection in
///     connection.onRead = { bytes in session.receive(bytes) }
///     try? connection.write(helloFrame)
/// }
/// try hub.start()
/// ```
///
/// Everything runs on the loop thread, callbacks included. Keep a reference while it should run: it holds
/// itself only weakly through its timers and connections. It is `@unchecked Sendable` so it can be handed to
/// ``EventLoop/execute(_:)``; its state is confined to the loop thread, checked by each public method.
public final class Reconnector: @unchecked Sendable {
    /// The loop that owns the connections and timers.
    public let loop: EventLoop
    /// The host to connect to, numeric or a name.
    public let host: String
    /// The port to connect to.
    public let port: Int
    /// The open connection, if any.
    public private(set) var connection: Connection?
    /// Whether ``start()`` was called and neither ``stop()`` nor the loop's shutdown has ended it.
    public var isRunning: Bool { wantsConnection && !loop.isClosing }
    /// The backoff, as it stands.
    public private(set) var backoff: BackoffPolicy
    /// Called on the loop thread each time a retry is scheduled, with why (nil after an orderly close) and
    /// the delay in milliseconds.
    public var onRetryScheduled: ((NetError?, Int) -> Void)?
    /// While set, every retry waits this many milliseconds instead of the backoff's delay: the owner sets
    /// it when the peer refused it for a reason that only a change of configuration ends (a wrong token),
    /// and clears it once a session went well.
    ///
    /// ```swift
    /// hub.fixedRetryDelayMilliseconds = 300_000   // redial every five minutes until the token is fixed
    /// ```
    public var fixedRetryDelayMilliseconds: Int? {
        didSet { loop.preconditionInLoopThread() }
    }

    /// Whether the owner wants the connection kept: set by ``start()``, cleared by ``stop()``.
    private var wantsConnection = false
    private var generator: any RandomNumberGenerator
    private let connectTimeoutMilliseconds: Int
    private let onConnect: (Connection) -> Void
    private var pendingAttempt: Connection?
    private var retryTimer: TimerHandle?

    /// Makes a reconnector; nothing happens until ``start()``.
    ///
    /// ```swift
    /// let seeded = SeededGenerator(seed: 7) // deterministic delays in tests
    /// let peer = Reconnector(loop: loop, host: "127.0.0.1", port: port, generator: seeded) { _ in }
    /// ```
    ///
    /// - Parameters:
    ///   - loop: the loop to run on.
    ///   - host: a numeric address or a host name.
    ///   - port: the port, 1...65535.
    ///   - backoff: the delays between attempts.
    ///   - generator: the random source for the jitter.
    ///   - connectTimeoutMilliseconds: the limit of each attempt, 1...``NetLimits/connectTimeoutMillisecondsMax``.
    ///   - onConnect: receives each new open connection, on the loop thread; set its callbacks there.
    public init(
        loop: EventLoop, host: String, port: Int, backoff: BackoffPolicy = BackoffPolicy(),
        generator: any RandomNumberGenerator = SystemRandomNumberGenerator(),
        connectTimeoutMilliseconds: Int = NetLimits.connectTimeoutMillisecondsMax,
        onConnect: @escaping (Connection) -> Void
    ) {
        self.loop = loop
        self.host = host
        self.port = port
        self.backoff = backoff
        self.generator = generator
        self.connectTimeoutMilliseconds = connectTimeoutMilliseconds
        self.onConnect = onConnect
    }

    /// Starts connecting; does nothing if already running. Call it on the loop thread.
    ///
    /// - Throws: what ``EventLoop/connect(host:port:timeoutMilliseconds:_:)`` throws for bad arguments or a
    ///   stopping loop; the reconnector is not running then.
    public func start() throws(NetError) {
        loop.preconditionInLoopThread()
        guard !isRunning else { return }
        wantsConnection = true
        do {
            try attempt()
        } catch {
            wantsConnection = false
            throw error
        }
    }

    /// Stops reconnecting and closes the connection (in order) and any attempt in flight. Call it on the loop
    /// thread.
    public func stop() {
        loop.preconditionInLoopThread()
        guard isRunning else { return }
        wantsConnection = false
        retryTimer?.cancel()
        retryTimer = nil
        pendingAttempt?.close()
        pendingAttempt = nil
        connection?.close()
        connection = nil
    }

    /// Makes the next retry wait the shortest delay again. Call it on the loop thread.
    public func resetBackoff() {
        loop.preconditionInLoopThread()
        backoff.reset()
    }

    private func attempt() throws(NetError) {
        pendingAttempt = try loop.connect(
            host: host, port: port, timeoutMilliseconds: connectTimeoutMilliseconds
        ) { [weak self] result in
            self?.didAttempt(result)
        }
    }

    private func didAttempt(_ result: Result<Connection, NetError>) {
        pendingAttempt = nil
        switch result {
        case let .success(opened):
            guard isRunning else {
                opened.close()
                return
            }
            connection = opened
            let openedAt = opened.openedAtMilliseconds ?? loop.nowMilliseconds
            opened.closeObservers.append { [weak self] error in
                self?.didDisconnect(openedAtMilliseconds: openedAt, error: error)
            }
            loop.logger.debug("connected", metadata: ["peer": "\(opened.remoteAddress)"])
            onConnect(opened)
        case let .failure(error):
            guard isRunning else { return }
            scheduleRetry(after: error)
        }
    }

    private func didDisconnect(openedAtMilliseconds: UInt64, error: NetError?) {
        connection = nil
        guard isRunning else { return }
        let openMilliseconds = loop.nowMilliseconds - openedAtMilliseconds
        if openMilliseconds >= UInt64(NetLimits.reconnectHealthyMillisecondsMin) {
            backoff.reset()
        }
        scheduleRetry(after: error)
    }

    private func scheduleRetry(after error: NetError?) {
        if error?.code == .loopStopped {
            wantsConnection = false
            return
        }
        let delay = fixedRetryDelayMilliseconds ?? backoff.nextDelay(using: &generator)
        let target = SocketAddress.describe(host: host, port: port)
        loop.logger.info(
            "reconnecting later",
            metadata: ["peer": "\(target)", "delay_ms": "\(delay)", "reason": "\(error.map { "\($0)" } ?? "closed")"])
        do {
            retryTimer = try loop.scheduleTimer(after: delay) { [weak self] in
                self?.retry()
            }
        } catch {
            wantsConnection = false
            return
        }
        onRetryScheduled?(error, delay)
    }

    private func retry() {
        retryTimer = nil
        guard isRunning else { return }
        do {
            try attempt()
        } catch {
            if error.code == .loopStopped {
                wantsConnection = false
            } else {
                scheduleRetry(after: error)
            }
        }
    }
}
