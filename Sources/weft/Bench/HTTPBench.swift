import Foundation
import Logging
@_spi(Engine) import Weft
import WeftCore
import WeftHTTP
import WeftSync

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// `weft bench http`: one SQLite replica served over the binary protocol and over HTTP in one process.
/// Sixteen clients write (each write answered once durable) and read, first through the binary protocol
/// (the baseline), then through Firebase's REST API; then the time from a write on one peer to its event
/// on an SSE stream of another peer that syncs with it.
enum HTTPBench {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    struct Options {
        var writes: Int
        var reads: Int
        var latencySamples: Int
        var clients = 16
        /// Also measures REST through URLSession clients (the bench's first client, kept to compare).
        var alsoURLSession = false
    }

    static func run(_ options: Options, progress: BenchProgress) async throws -> [Measurement] {
        let folder = NSTemporaryDirectory() + "weft-bench-http-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var quiet = Logger(label: "weft.bench.http")
        quiet.logLevel = .error
        let secret = "bench client secret, long enough to be a token"
        let token = try AuthToken(string: secret)
        let peerToken = try AuthToken(string: "bench peer secret shared by both replicas")

        let writer = try Replica.open(at: folder + "/a.sqlite")
        try await writer.waitUntilLoaded()
        let driver = try SyncDriver(
            replica: writer,
            configuration: SyncConfiguration(
                replica: writer.replicaID, role: .hub, name: "a", tokens: TokenBook(["client": token, "b": peerToken])),
            logger: quiet)
        let syncPort = try await driver.listen(on: "127.0.0.1", port: 0)
        let server = HTTPServer(replica: writer, access: HTTPAccess(TokenBook(["client": token])), logger: quiet)
        let httpPort = try await server.start(host: "127.0.0.1", port: 0)
        let perClient = max(1, options.writes / options.clients)
        let readsPerClient = max(1, options.reads / options.clients)

        progress.step("http: \(perClient * options.clients) durable writes over the binary protocol, \(options.clients) clients")
        var connected: [SyncClient] = []
        for _ in 0..<options.clients {
            connected.append(
                try await SyncClient.connect(host: "127.0.0.1", port: syncPort, name: "client", token: token, serverName: "a"))
        }
        let clients = connected
        let binaryWrites = try await timed(clients: options.clients) { client in
            for index in 0..<perClient {
                _ = try await clients[client].request(
                    .set(try Path("/binary/\(client)/\(index)"), .object(["n": .int(Int64(index)), "by": .string("bench")])))
            }
        }
        let binaryReads = try await timed(clients: options.clients) { client in
            for index in 0..<readsPerClient {
                _ = try await clients[client].request(.get(try Path("/binary/\(client)/\(index % perClient)")))
            }
        }
        for client in clients { await client.close() }

        progress.step("http: the same writes and reads through REST, \(options.clients) clients")
        // One keep-alive connection and one thread per client: a blocking client on the cooperative pool
        // would hold its few threads.
        let connections = try (0..<options.clients).map { _ in try KeepAliveHTTPClient(port: httpPort) }
        let restWrites = try await threaded(clients: options.clients) { client in
            for index in 0..<perClient {
                let (status, _) = try connections[client].send(
                    "PUT", "/rest/\(client)/\(index).json?print=silent", bearer: secret,
                    body: #"{"n":\#(index),"by":"bench"}"#)
                guard status == 204 else { throw Failure(description: "a REST PUT answered \(status)") }
            }
        }
        let restReads = try await threaded(clients: options.clients) { client in
            for index in 0..<readsPerClient {
                let (status, _) = try connections[client].send(
                    "GET", "/rest/\(client)/\(index % perClient).json", bearer: secret, body: nil)
                guard status == 200 else { throw Failure(description: "a REST GET answered \(status)") }
            }
        }
        var viaURLSession: [Measurement] = []
        if options.alsoURLSession {
            let configuration = URLSessionConfiguration.ephemeral
            configuration.httpMaximumConnectionsPerHost = options.clients
            let session = URLSession(configuration: configuration)
            let base = "http://127.0.0.1:\(httpPort)"
            let sessionWrites = try await timed(clients: options.clients) { client in
                for index in 0..<perClient {
                    try await send(
                        session, "PUT", "\(base)/urlsession/\(client)/\(index).json?print=silent", secret,
                        body: #"{"n":\#(index),"by":"bench"}"#, expect: 204)
                }
            }
            let sessionReads = try await timed(clients: options.clients) { client in
                for index in 0..<readsPerClient {
                    try await send(
                        session, "GET", "\(base)/urlsession/\(client)/\(index % perClient).json", secret, body: nil,
                        expect: 200)
                }
            }
            let writes = Double(perClient * options.clients)
            let reads = Double(readsPerClient * options.clients)
            viaURLSession = [
                Measurement(
                    suite: "http", name: "REST PUT through URLSession clients (baseline: binary set)",
                    value: writes / sessionWrites, unit: "ops/s", baseline: writes / binaryWrites),
                Measurement(
                    suite: "http", name: "REST GET through URLSession clients (baseline: binary get)",
                    value: reads / sessionReads, unit: "reads/s", baseline: reads / binaryReads),
            ]
        }

        progress.step("http: \(options.latencySamples) writes on one peer, each seen on an SSE stream of another")
        let latencies = try await sseLatencies(
            writer: writer, syncPort: syncPort, peerToken: peerToken, secret: secret, token: token,
            samples: options.latencySamples, folder: folder, logger: quiet)

        await server.stop()
        await driver.shutdown()
        await writer.shutdown()
        let writes = Double(perClient * options.clients)
        let reads = Double(readsPerClient * options.clients)
        return [
            Measurement(
                suite: "http", name: "REST PUT, \(options.clients) clients, durable (baseline: binary set)",
                value: writes / restWrites, unit: "ops/s", baseline: writes / binaryWrites),
            Measurement(
                suite: "http", name: "REST GET, \(options.clients) clients (baseline: binary get)",
                value: reads / restReads, unit: "reads/s", baseline: reads / binaryReads),
            Measurement(
                suite: "http", name: "write on a peer → SSE event on another, p50", value: percentile(latencies, 0.50),
                unit: "ms"),
            Measurement(
                suite: "http", name: "write on a peer → SSE event on another, p99", value: percentile(latencies, 0.99),
                unit: "ms"),
        ] + viaURLSession
    }

    /// Runs `body` for each client at once, each on a thread of its own; answers the seconds until all
    /// finished, or throws the first failure.
    private static func threaded(clients: Int, _ body: @escaping @Sendable (Int) throws -> Void) async throws -> Double {
        let group = DispatchGroup()
        let failures = FailureBox()
        let start = ContinuousClock.now
        for client in 0..<clients {
            group.enter()
            let thread = Thread {
                do { try body(client) } catch { failures.record(error) }
                group.leave()
            }
            thread.start()
        }
        // Waits without holding a thread of the cooperative pool, which the replica's commits need.
        await withCheckedContinuation { continuation in
            group.notify(queue: .global()) { continuation.resume() }
        }
        if let error = failures.first { throw error }
        return seconds(since: start)
    }

    /// The first error a client thread met.
    private final class FailureBox: @unchecked Sendable {
        private let lock = NSLock()
        private var error: (any Error)?
        func record(_ error: any Error) { lock.withLock { if self.error == nil { self.error = error } } }
        var first: (any Error)? { lock.withLock { error } }
    }

    /// Runs `body` for each client at once; answers the seconds until all finished.
    private static func timed(clients: Int, _ body: @escaping @Sendable (Int) async throws -> Void) async throws -> Double {
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in 0..<clients { group.addTask { try await body(client) } }
            try await group.waitForAll()
        }
        return seconds(since: start)
    }

    private static func send(
        _ session: URLSession, _ method: String, _ url: String, _ secret: String, body: String?, expect: Int
    ) async throws {
        guard let url = URL(string: url) else { throw Failure(description: "bad URL \(url)") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.httpBody = body.map { Data($0.utf8) }
        request.setValue("Bearer \(secret)", forHTTPHeaderField: "Authorization")
        let (_, response) = try await session.data(for: request)
        guard let status = (response as? HTTPURLResponse)?.statusCode, status == expect else {
            throw Failure(description: "\(method) \(url) did not answer \(expect)")
        }
    }

    /// A second replica syncing with `writer`, serving HTTP, with one SSE stream open on `/latency`:
    /// each sample writes on `writer` and waits for the event on the stream.
    private static func sseLatencies(
        writer: Replica, syncPort: Int, peerToken: AuthToken, secret: String, token: AuthToken, samples: Int,
        folder: String, logger: Logger
    ) async throws -> [Double] {
        let reader = try Replica.open(at: folder + "/b.sqlite")
        try await reader.waitUntilLoaded()
        let driver = try SyncDriver(
            replica: reader,
            configuration: SyncConfiguration(replica: reader.replicaID, role: .peer, name: "b", tokens: TokenBook(["a": peerToken])),
            logger: logger)
        try await driver.addPeer(host: "127.0.0.1", port: syncPort)
        let server = HTTPServer(replica: reader, access: HTTPAccess(TokenBook(["client": token])), logger: logger)
        let port = try await server.start(host: "127.0.0.1", port: 0)
        let stream = try SSEReader(port: port, path: "/latency.json", secret: secret)
        var latencies: [Double] = []
        do {
            try stream.waitFor("\"data\":null", seconds: 30)
            for sample in 1...samples {
                let start = ContinuousClock.now
                _ = try writer.submit(path: try Path("/latency"), kind: .set(.int(Int64(sample))))
                try stream.waitFor("\"data\":\(sample)}", seconds: 30)
                latencies.append(seconds(since: start) * 1000)
            }
        } catch {
            stream.close()
            await server.stop()
            await driver.shutdown()
            await reader.shutdown()
            throw error
        }
        stream.close()
        await server.stop()
        await driver.shutdown()
        await reader.shutdown()
        return latencies
    }

    private static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)]
    }

    private static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = start.duration(to: .now)
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}

/// An event stream read over a plain socket: the bytes as they come, searched for a marker.
final class SSEReader {
    private let descriptor: Int32
    private var received = ""

    init(port: Int, path: String, secret: String) throws {
        guard let descriptor = loopbackSocket(port: port) else {
            throw HTTPBench.Failure(description: "cannot connect to the SSE stream")
        }
        self.descriptor = descriptor
        let request =
            "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nAuthorization: Bearer \(secret)\r\n\r\n"
        _ = request.withCString { send(descriptor, $0, strlen($0), 0) }
    }

    /// Reads until `marker` arrived (then forgets what came before it), at most `seconds`.
    func waitFor(_ marker: String, seconds: Double) throws {
        let deadline = Date().addingTimeInterval(seconds)
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            if let range = received.range(of: marker) {
                received = String(received[range.upperBound...])
                return
            }
            guard Date() < deadline else { throw HTTPBench.Failure(description: "no SSE event \(marker) in \(seconds) s") }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { throw HTTPBench.Failure(description: "the SSE stream closed") }
            received += String(decoding: buffer[0..<count], as: UTF8.self)
        }
    }

    func close() { Glibc.close(descriptor) }
}
