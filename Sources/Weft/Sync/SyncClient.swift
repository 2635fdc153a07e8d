import Foundation
import Logging
import WeftCore
import WeftNet
import WeftSync

/// A client of a Weft daemon: reads, writes and watches paths through `weft serve` without holding a
/// replica. It authenticates like a peer (HMAC challenge-response over a shared token) with role `client`.
///
/// ```swift
/// let client = try await SyncClient.connect(host: "127.0.0.1", port: 7700, name: "cli", token: token)
/// try await client.request(.set(try Path("/greeting"), .string("hello")))
/// let value = try await client.request(.get(try Path("/greeting")))   // .string("hello")
/// await client.close()
/// ```
///
/// Thread-safety: every method may be called from any thread; the connection lives on the client's loop.
public final class SyncClient: @unchecked Sendable {
    private let loop: EventLoop
    private let clockOrigin = ContinuousClock.now
    private let address: String

    // Loop-confined.
    private var session: SyncSession
    private var connection: Connection?
    private var timers: [SyncTimer: TimerHandle] = [:]
    private var ready: CheckedContinuation<Result<Void, WeftError>, Never>?
    private var pending: [UInt64: CheckedContinuation<Result<ClientResult, WeftError>, Never>] = [:]
    private var eventHandlers: [UInt64: @Sendable (ClientEvent) -> Void] = [:]
    private var endHandlers: [UInt64: @Sendable (WeftError) -> Void] = [:]
    /// Live queries by request id: the result last delivered, and who hears the next.
    var liveQueries: [UInt64: LiveQuery] = [:]
    private var closedError: WeftError?
    private var closeWaiters: [CheckedContinuation<WeftError?, Never>] = []
    private var nextRequestID: UInt64 = 1

    private init(loop: EventLoop, session: SyncSession, address: String) {
        self.loop = loop
        self.session = session
        self.address = address
    }

    deinit {
        // Only ask: the last reference may be dropped on the loop thread itself, which cannot join itself.
        loop.beginShutdown()
    }

    /// Connects to a daemon and completes the handshake.
    ///
    /// - Parameters:
    ///   - host: the daemon's address or host name.
    ///   - port: its port.
    ///   - name: the name this client's token is filed under in the daemon's token file.
    ///   - token: the secret shared with the daemon.
    ///   - serverName: the name the daemon introduces itself with (its `--name`), under which the client
    ///     files the same token.
    ///   - timeoutMilliseconds: how long connecting and authenticating may take together.
    /// - Throws: `WeftError` with code `sync` when the daemon cannot be reached or the session fails, or
    ///   `authentication` when the daemon refuses the token.
    public static func connect(
        host: String, port: Int, name: String, token: AuthToken, serverName: String,
        timeoutMilliseconds: Int = 10_000
    ) async throws(WeftError) -> SyncClient {
        var generator = SystemRandomNumberGenerator()
        var raw: UInt64 = 0
        var replica: ReplicaID?
        while replica == nil {
            raw = generator.next()
            replica = ReplicaID(rawValue: raw)
        }
        var book = TokenBook()
        book.set(token, for: serverName)
        let configuration = SyncConfiguration(replica: replica!, role: .client, name: name, tokens: book)
        let loop: EventLoop
        let session: SyncSession
        do {
            session = try SyncSession(configuration: configuration)
            loop = try EventLoop(label: "weft.client.loop", logger: Logger.weft(label: "weft.client"))
        } catch {
            throw WeftError(.sync, "cannot start a client: \(error)")
        }
        let client = SyncClient(
            loop: loop, session: session, address: SocketAddressText.describe(host: host, port: port))
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<Void, WeftError>, Never>) in
            do {
                try loop.execute {
                    client.ready = continuation
                    client.start(host: host, port: port, timeoutMilliseconds: timeoutMilliseconds)
                }
            } catch {
                continuation.resume(returning: .failure(WeftError(.sync, "cannot start a client: \(error)")))
            }
        }
        if case .failure(let error) = result {
            loop.shutdown()
            throw error
        }
        return client
    }

    /// Sends one command and waits for its reply.
    ///
    /// - Returns: the reply's value (see ``ClientCommand`` for what each command returns).
    /// - Throws: `WeftError` with code `sync` when the daemon refused the request or the connection closed,
    ///   `authentication` for a path the token may not touch.
    @discardableResult
    public func request(_ command: ClientCommand) async throws(WeftError) -> Value {
        switch try await send(command, onEvent: nil) {
        case .ok(let value): return value
        // The rows of a query as an object: the order is lost, as a path read of them would lose it.
        case .rows(let result): return result.value
        case .failed(let error): throw Self.publicError(error)
        }
    }

    /// Watches a path: `onEvent` receives its value now and after every change, until the connection closes
    /// or the daemon ends the watch: then `onEnd` gets why (`authentication` when its rules, reloaded, no
    /// longer let this client read the path).
    ///
    /// - Throws: what ``request(_:)`` throws.
    public func watch(
        _ path: Path, onEvent: @escaping @Sendable (Value) -> Void, onEnd: (@Sendable (WeftError) -> Void)? = nil
    ) async throws(WeftError) {
        _ = try await send(.watch(path), onEnd: onEnd, onEvent: { onEvent($0.value) })
    }

    /// Waits until the connection closes; returns why (nil for a clean close).
    public func waitUntilClosed() async -> WeftError? {
        await withCheckedContinuation { (continuation: CheckedContinuation<WeftError?, Never>) in
            do {
                try loop.execute {
                    if let error = self.closedError {
                        continuation.resume(returning: error)
                    } else {
                        self.closeWaiters.append(continuation)
                    }
                }
            } catch {
                continuation.resume(returning: WeftError(.sync, "the client is stopped"))
            }
        }
    }

    /// Closes the connection in order and stops the client's loop.
    public func close() async {
        try? await loop.submit {
            self.perform(self.session.onClose(error: nil, now: self.now))
        }
        loop.beginShutdown()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread { [loop] in
                loop.waitUntilStopped()
                continuation.resume()
            }
        }
    }

    // MARK: - Loop side

    private var now: UInt64 {
        let elapsed = clockOrigin.duration(to: .now)
        return UInt64(elapsed.components.seconds) * 1_000
            + UInt64(elapsed.components.attoseconds / 1_000_000_000_000_000)
    }

    func send(
        _ command: ClientCommand, onEnd: (@Sendable (WeftError) -> Void)? = nil,
        onEvent: (@Sendable (ClientEvent) -> Void)?, onOpen: (@Sendable (UInt64) -> Void)? = nil
    ) async throws(WeftError) -> ClientResult {
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<ClientResult, WeftError>, Never>) in
            do {
                try loop.execute {
                    if let error = self.closedError { return continuation.resume(returning: .failure(error)) }
                    let id = self.nextRequestID
                    self.nextRequestID += 1
                    do throws(SyncError) {
                        let actions = try self.session.onClientRequest(
                            ClientRequest(id: id, command: command), now: self.now)
                        self.pending[id] = continuation
                        if let onEvent { self.eventHandlers[id] = onEvent }
                        if let onEnd { self.endHandlers[id] = onEnd }
                        onOpen?(id)
                        self.perform(actions)
                    } catch {
                        continuation.resume(returning: .failure(WeftError(.sync, "\(error)")))
                    }
                }
            } catch {
                continuation.resume(returning: .failure(WeftError(.sync, "the client is stopped: \(error)")))
            }
        }
        return try result.get()
    }

    private func start(host: String, port: Int, timeoutMilliseconds: Int) {
        do {
            try loop.connect(host: host, port: port, timeoutMilliseconds: timeoutMilliseconds) { result in
                switch result {
                case .success(let connection):
                    self.opened(connection)
                case .failure(let error):
                    self.finish(WeftError(.sync, "\(error)"))
                }
            }
            try loop.scheduleTimer(after: timeoutMilliseconds) {
                guard self.ready != nil else { return }
                self.finish(WeftError(.sync, "connect \(self.address): no session within \(timeoutMilliseconds) ms"))
                self.connection?.close()
            }
        } catch {
            finish(WeftError(.sync, "\(error)"))
        }
    }

    private func opened(_ connection: Connection) {
        self.connection = connection
        connection.onRead = { bytes in
            self.perform(self.session.onBytesReceived(bytes, source: EmptyOpSource(), now: self.now))
        }
        connection.onClose = { error in
            // The transport's reason first: the session only knows that the connection closed.
            if let error { self.finish(WeftError(.sync, "\(error)")) }
            self.perform(self.session.onTransportClosed(now: self.now))
            self.finish(WeftError(.sync, "\(self.address) closed the connection"))
        }
        var generator = SystemRandomNumberGenerator()
        perform(session.onStart(.initiator, nonce: .random(using: &generator), source: EmptyOpSource(), now: now))
    }

    private func perform(_ actions: [SyncAction]) {
        for action in actions {
            switch action {
            case .send(let bytes):
                do {
                    try connection?.write(bytes)
                } catch {
                    finish(WeftError(.sync, "\(error)"))
                    connection?.close()
                    return
                }
            case .scheduleTimer(let timer, let milliseconds):
                timers.removeValue(forKey: timer)?.cancel()
                timers[timer] = try? loop.scheduleTimer(after: Int(clamping: milliseconds)) {
                    self.timers[timer] = nil
                    self.perform(self.session.onTimerFired(timer, source: EmptyOpSource(), now: self.now))
                }
            case .cancelTimer(let timer):
                timers.removeValue(forKey: timer)?.cancel()
            case .reportStatus(let status):
                if status.phase == .connected, let ready {
                    self.ready = nil
                    ready.resume(returning: .success(()))
                }
            case .deliverReply(let reply):
                let continuation = pending.removeValue(forKey: reply.id)
                switch reply.result {
                case .ok, .rows:
                    liveQueryOpened(reply)
                    continuation?.resume(returning: .success(reply.result))
                case .failed(let error):
                    eventHandlers[reply.id] = nil
                    let onEnd = endHandlers.removeValue(forKey: reply.id)
                    liveQueries[reply.id] = nil
                    // A reply is the daemon's answer to this request, not an error of the session: it
                    // reads "requestFailed: …", which the command line maps to its own exit code.
                    var refusal = error
                    refusal.raisedByPeer = false
                    continuation?.resume(returning: .failure(Self.publicError(refusal)))
                    // No request waits: the daemon ended an open watch.
                    if continuation == nil { onEnd?(Self.publicError(refusal)) }
                }
            case .deliverEvent(let event):
                eventHandlers[event.watchID]?(event)
            case .deliverQueryEvent(let event):
                if let error = deliver(event) {
                    finish(error)
                    connection?.close()
                    return
                }
            case .close(let error):
                if let error { finish(closeError(error)) }
                connection?.close()
            case .applyOps, .reviseOps, .installSnapshot, .recordAcknowledgement, .recordShareAcknowledgement,
                .handleRequest:
                preconditionFailure("a client session asked for \(action)")
            }
        }
    }

    /// Why the session closed, for people: bytes that break the framing before the handshake ends come
    /// from something that is not a daemon (a `--server` naming another service).
    private func closeError(_ error: SyncError) -> WeftError {
        let isFraming = error.code == .frameTooLarge || error.code == .malformedFrame
        guard isFraming, !error.raisedByPeer, ready != nil else { return Self.publicError(error) }
        return WeftError(.sync, "\(address) is not a weft daemon: \(error)")
    }

    static func publicError(_ error: SyncError) -> WeftError {
        switch error.code {
        case .authenticationFailed, .permissionDenied: return WeftError(.authentication, error.description)
        case .unsupportedVersion: return WeftError(.protocolMismatch, error.description)
        default: return WeftError(.sync, error.description)
        }
    }

    /// Fails everything waiting: the handshake, pending requests, close waiters.
    func finish(_ error: WeftError) {
        if closedError == nil { closedError = error }
        let reason = closedError ?? error
        for timer in timers.values { timer.cancel() }
        timers = [:]
        if let ready {
            self.ready = nil
            ready.resume(returning: .failure(reason))
        }
        for continuation in pending.values { continuation.resume(returning: .failure(reason)) }
        pending = [:]
        eventHandlers = [:]
        liveQueries = [:]
        for waiter in closeWaiters { waiter.resume(returning: reason) }
        closeWaiters = []
    }
}
