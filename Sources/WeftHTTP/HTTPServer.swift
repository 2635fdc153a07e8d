import Foundation
import Hummingbird
import Logging
import Weft
import WeftCore
import WeftSync

/// The daemon's HTTP face: Firebase's Realtime Database REST API and event streams over a replica, and
/// Prometheus metrics, on Hummingbird beside the sync driver's loop.
///
/// ```swift
/// let access = HTTPAccess(book)
/// let server = HTTPServer(replica: replica, access: access, logger: logger)
/// let port = try await server.start(host: "127.0.0.1", port: 7780)
/// …
/// await server.stop()
/// ```
public final class HTTPServer: @unchecked Sendable {
    private let service: RESTService
    private let streams: StreamRegistry
    private let metrics: HTTPMetrics
    private let logger: Logger
    private let lock = NSLock()
    private var server: GracefulServer?

    /// A server over `replica`, authenticating with `access`.
    ///
    /// - Parameters:
    ///   - keepAlive: the interval between `keep-alive` events of a stream (30 s, as Firebase).
    ///   - peers: read at each scrape of `/metrics`: each peer's ops behind and connection state.
    ///   - clock: the wall time in milliseconds, for `{".sv": "timestamp"}`.
    public init(
        replica: Replica, access: HTTPAccess, logger: Logger,
        keepAlive: Duration = .seconds(HTTPLimits.keepAliveSecondsDefault),
        peers: @escaping @Sendable () -> [HTTPPeerGauge] = { [] },
        clock: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }
    ) {
        let metrics = HTTPMetrics(replica: replica)
        let streams = StreamRegistry(replica: replica, access: access, metrics: metrics, keepAlive: keepAlive)
        metrics.peers = peers
        metrics.streamCount = { streams.openCount }
        self.metrics = metrics
        self.streams = streams
        self.logger = logger
        service = RESTService(replica: replica, access: access, streams: streams, metrics: metrics, clock: clock)
    }

    /// Starts listening on `host:port` (port 0 picks one) and returns the port bound.
    /// - Throws: `WeftError` with code `sync` when the address cannot be bound.
    public func start(host: String, port: Int) async throws -> Int {
        let (bound, stream) = AsyncStream.makeStream(of: Int?.self)
        let responder = WeftResponder(service: service)
        let application = Application(
            responder: responder,
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: nil),
            onServerRunning: { channel in
                stream.yield(channel.localAddress?.port)
                stream.finish()
            },
            logger: logger)
        let logger = self.logger
        let server = GracefulServer(running: application, logger: logger) { error in
            if let error { logger.error("the HTTP server stopped", metadata: ["error": "\(error)"]) }
            stream.finish()
        }
        lock.withLock { self.server = server }
        for await port in bound {
            if let port { return port }
        }
        throw WeftError(.sync, "cannot listen for HTTP on \(host):\(port)")
    }

    /// Counts the deliveries and failures of `deliverer` in `/metrics`.
    public func countDeliveries(of deliverer: WebhookDeliverer) { metrics.count(deliverer) }

    /// Records a compaction for `/metrics`.
    public func noteCompaction(at date: Date = Date()) { metrics.noteCompaction(at: date) }

    /// Ends every event stream and stops listening.
    public func stop() async {
        streams.closeAll()
        metrics.stop()
        let server = lock.withLock { self.server }
        await server?.stop()
    }
}

/// Hands every request to the REST service: Firebase's routes are paths ending in `.json`, which a
/// router's patterns cannot name, and one place answers unknown routes and methods alike.
struct WeftResponder: HTTPResponder {
    typealias Context = BasicRequestContext
    let service: RESTService

    func respond(to request: Request, context: Context) async throws -> Response {
        await service.respond(to: request)
    }
}
