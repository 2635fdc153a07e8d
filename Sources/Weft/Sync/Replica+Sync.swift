#if canImport(Combine)
    import Combine
#else
    import OpenCombine
    import OpenCombineDispatch
#endif
import Foundation
import Logging
import WeftCore
import WeftSync

// Embedded sync: a replica listens and connects itself, through one `SyncDriver` it makes on first use
// and stops at shutdown.

/// How a replica syncs once it listens or connects (``Replica/configureSync(_:)``).
///
/// ```swift
/// var sync = ReplicaSyncOptions()
/// sync.role = .hub
/// sync.name = "hub"
/// sync.tokens = ["north": "north's long shared secret"]
/// try replica.configureSync(sync)
/// ```
public struct ReplicaSyncOptions: Sendable {
    /// What a replica is to the others.
    public enum Role: Sendable, Hashable {
        /// A replica among equals; it relays what it learns.
        case peer
        /// A replica that many others connect to; it relays too, and its acknowledgement makes an op
        /// `.acknowledged`.
        case hub
    }

    /// This replica's role; `.peer` by default.
    public var role: Role = .peer
    /// The name this replica's token is filed under at its peers; empty (the default) to be known by
    /// its replica id in hex.
    public var name: String = ""
    /// Tokens of named peers: the peer's name (or replica id in hex) → the secret shared with it (16 to
    /// 1024 bytes of UTF-8). A peer filed here uses its filed token, also when dialled with another.
    public var tokens: [String: String] = [:]
    /// Where connections, handshakes and errors are logged.
    public var logger = Logger.weft(label: "weft.sync")

    /// The defaults: a peer, known by its replica id, with no named tokens.
    public init() {}
}

extension Replica {
    /// Sets how this replica syncs. Call it before the first ``listen(on:token:)`` or
    /// ``connect(to:token:)``; without it the defaults of ``ReplicaSyncOptions`` hold.
    ///
    /// ```swift
    /// var sync = ReplicaSyncOptions()
    /// sync.role = .hub
    /// try replica.configureSync(sync)
    /// ```
    /// - Throws: `WeftError` with code `sync` once sync has started, or `shutDown`.
    public func configureSync(_ options: ReplicaSyncOptions) throws(WeftError) {
        try syncLink.configure(options)
    }

    /// Listens for peers (and daemon clients) on a numeric address, replicating with each one that
    /// authenticates, until ``shutdown()``.
    ///
    /// ```swift
    /// let port = try await hub.listen(on: "127.0.0.1:0", token: "a long secret shared by the mesh")
    /// try await phone.connect(to: "127.0.0.1:\(port)", token: "a long secret shared by the mesh")
    /// ```
    ///
    /// - Parameters:
    ///   - address: `HOST:PORT` with a numeric IPv4 or IPv6 host (`[::1]:7700`); port 0 lets the system
    ///     choose.
    ///   - token: a secret (16 to 1024 bytes of UTF-8) that any peer not filed in
    ///     ``ReplicaSyncOptions/tokens`` may prove to connect, with full read and write permissions; nil
    ///     admits only the filed peers.
    /// - Returns: the port listened on.
    /// - Throws: `WeftError` with code `sync` for a malformed or busy address, a bad token, a second
    ///   listen; `shutDown` after ``shutdown()``.
    @discardableResult
    public func listen(on address: String, token: String? = nil) async throws(WeftError) -> Int {
        let (host, port) = try _SyncAddress.parse(address, ports: 0...65_535)
        let authToken = try token.map { (text) throws(WeftError) in try _SyncAddress.token(text) }
        return try await syncLink.driver(for: self).listen(on: host, port: port, token: authToken)
    }

    /// Connects to a peer or a hub and replicates with it until ``shutdown()``, redialling with jittered
    /// exponential backoff whenever the connection fails or drops. It returns once dialling started;
    /// watch ``syncStatus`` for the connection.
    ///
    /// ```swift
    /// try await replica.connect(to: "10.0.0.2:7700", token: "a long secret shared with the hub")
    /// for await status in replica.syncStatusUpdates() where status.connectedCount > 0 { break }
    /// ```
    ///
    /// - Parameters:
    ///   - address: `HOST:PORT`, the host numeric or a name.
    ///   - token: the secret (16 to 1024 bytes of UTF-8) shared with the replica at that address, which
    ///     must prove it holds it too (unless it is filed by name in ``ReplicaSyncOptions/tokens``).
    /// - Throws: `WeftError` with code `sync` for a malformed address, a bad token, an address already
    ///   connected or too many peers; `shutDown` after ``shutdown()``.
    public func connect(to address: String, token: String) async throws(WeftError) {
        let (host, port) = try _SyncAddress.parse(address, ports: 1...65_535)
        let authToken = try _SyncAddress.token(token)
        try await syncLink.driver(for: self).addPeer(host: host, port: port, token: authToken)
    }

    /// Where this replica listens and how each peer stands: connected or not, ops it has not
    /// acknowledged (`opsBehind`), the last error. Empty until the first listen or connect.
    ///
    /// ```swift
    /// for peer in replica.syncStatus.peers {
    ///     print(peer.address, peer.isConnected, peer.opsBehind, peer.lastError ?? "")
    /// }
    /// ```
    public var syncStatus: SyncDriverStatus { syncLink.status }

    /// The sync status now, then after each change, until ``shutdown()`` ends the sequence. A slow
    /// reader gets the latest ones (at most ``WeftLimits/syncStatusUpdatesBufferedMax`` wait).
    ///
    /// ```swift
    /// for await status in replica.syncStatusUpdates() {
    ///     print("\(status.connectedCount) of \(status.peers.count) peers connected")
    /// }
    /// ```
    public func syncStatusUpdates() -> AsyncStream<SyncDriverStatus> { syncLink.updates() }

    /// The sync status as a Combine publisher: the status now, then after each change; it finishes when
    /// ``shutdown()`` stops sync (a subscriber that comes later gets the completion alone).
    ///
    /// ```swift
    /// let cancellable = replica.syncStatusPublisher(queue: .main).sink { status in
    ///     banner.isHidden = status.connectedCount > 0
    /// }
    /// ```
    /// - Parameter queue: where statuses and the completion are delivered, in order; nil for
    ///   ``callbackQueue``.
    public func syncStatusPublisher(queue: DispatchQueue? = nil) -> AnyPublisher<SyncDriverStatus, Never> {
        syncLink.publisher.receive(on: queue ?? callbackQueue).eraseToAnyPublisher()
    }

    /// Stops sync: closes every session and the listener and stops the loop. Part of ``shutdown()``.
    func stopSync() async { await syncLink.stop() }

    /// True once this replica listened or connected, or when it stored members of a group it met
    /// before (it will likely sync again, and a late op from them may still reject a local write).
    var isReplicating: Bool {
        if syncLink.hasStarted { return true }
        return !persistedMembers.isEmpty
    }
}

/// The sync driver of one replica, made on first use, and the observers of its status.
final class _ReplicaSyncLink: @unchecked Sendable {
    private let lock = NSLock()
    private var options = ReplicaSyncOptions()
    private var driver: SyncDriver?
    private var isStopped = false
    /// The stop under way or done, once ``stop()`` was called.
    private var stopping: Task<Void, Never>?
    private var latest = SyncDriverStatus(listeningAddress: nil, peers: [])
    private var observers: [Int: AsyncStream<SyncDriverStatus>.Continuation] = [:]
    private var nextObserver = 0
    /// Holds the latest status for Combine subscribers; sent to only from the driver's loop thread and
    /// from ``stop()``, after the driver stopped.
    private let subject = CurrentValueSubject<SyncDriverStatus, Never>(
        SyncDriverStatus(listeningAddress: nil, peers: []))

    var publisher: AnyPublisher<SyncDriverStatus, Never> { subject.eraseToAnyPublisher() }

    var status: SyncDriverStatus { lock.withLock { latest } }

    /// True once a listen or connect made the driver.
    var hasStarted: Bool { lock.withLock { driver != nil } }

    /// The driver, if a listen or connect made it and sync has not stopped.
    var currentDriver: SyncDriver? { lock.withLock { driver } }

    func configure(_ options: ReplicaSyncOptions) throws(WeftError) {
        lock.lock()
        defer { lock.unlock() }
        guard !isStopped else { throw WeftError(.shutDown, "the replica is shut down") }
        guard driver == nil else {
            throw WeftError(.sync, "sync has started: configure it before the first listen or connect")
        }
        self.options = options
    }

    /// The driver, made now if this is the first call.
    func driver(for replica: Replica) throws(WeftError) -> SyncDriver {
        lock.lock()
        defer { lock.unlock() }
        guard !isStopped, !replica.isShutDown else { throw WeftError(.shutDown, "the replica is shut down") }
        if let driver { return driver }
        var book = TokenBook()
        for (name, secret) in options.tokens {
            book.set(try _SyncAddress.token(secret, for: name), for: name)
        }
        let role: SyncRole = options.role == .hub ? .hub : .peer
        let configuration = SyncConfiguration(replica: replica.replicaID, role: role, name: options.name, tokens: book)
        let made = try SyncDriver(replica: replica, configuration: configuration, logger: options.logger)
        made.observeStatus { [weak self] status in self?.publish(status) }
        driver = made
        return made
    }

    private func publish(_ status: SyncDriverStatus) {
        let continuations = lock.withLock { () -> [AsyncStream<SyncDriverStatus>.Continuation] in
            latest = status
            return Array(observers.values)
        }
        for continuation in continuations { continuation.yield(status) }
        subject.send(status)
    }

    func updates() -> AsyncStream<SyncDriverStatus> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: SyncDriverStatus.self, bufferingPolicy: .bufferingNewest(WeftLimits.syncStatusUpdatesBufferedMax))
        let key = lock.withLock { () -> Int? in
            continuation.yield(latest)
            guard !isStopped else { return nil }
            defer { nextObserver += 1 }
            observers[nextObserver] = continuation
            return nextObserver
        }
        guard let key else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.lock.withLock { _ = self?.observers.removeValue(forKey: key) }
        }
        return stream
    }

    /// Shuts the driver down (which lets go of the replica it holds) and ends every status sequence.
    /// A call made while another stops sync waits for that one, so that every `shutdown()` returns with
    /// sync stopped.
    func stop() async {
        let task = lock.withLock { () -> Task<Void, Never> in
            if let stopping { return stopping }
            isStopped = true
            let running = driver
            driver = nil
            let made = Task { await self.finishStopping(running) }
            stopping = made
            return made
        }
        await task.value
    }

    private func finishStopping(_ running: SyncDriver?) async {
        if let running { await running.shutdown() }
        let continuations = lock.withLock { () -> [AsyncStream<SyncDriverStatus>.Continuation] in
            defer { observers = [:] }
            return Array(observers.values)
        }
        let last = status
        for continuation in continuations {
            continuation.yield(last)
            continuation.finish()
        }
        subject.send(last)
        subject.send(completion: .finished)
    }
}

/// `HOST:PORT` and token text given to the embedded sync calls.
enum _SyncAddress {
    /// Splits `HOST:PORT` (an IPv6 host in brackets) and checks the port.
    static func parse(_ text: String, ports: ClosedRange<Int>) throws(WeftError) -> (host: String, port: Int) {
        guard let colon = text.lastIndex(of: ":") else {
            throw WeftError(.sync, "expected HOST:PORT, got \"\(text)\"")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, let port = Int(text[text.index(after: colon)...]), ports.contains(port) else {
            throw WeftError(.sync, "expected HOST:PORT with a port in \(ports), got \"\(text)\"")
        }
        return (host, port)
    }

    /// A token from its secret text.
    static func token(_ secret: String, for name: String? = nil) throws(WeftError) -> AuthToken {
        do {
            return try AuthToken(string: secret)
        } catch {
            let whose = name.map { " of \($0)" } ?? ""
            throw WeftError(.sync, "invalid token\(whose): \(error)")
        }
    }
}
