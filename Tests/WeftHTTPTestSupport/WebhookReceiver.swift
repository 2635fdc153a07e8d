import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import WeftHTTP

/// A real HTTP receiver on 127.0.0.1 and an ephemeral port: records each `POST /hook` and answers 200,
/// or 500 while `failing` is set.
public final class WebhookReceiver: @unchecked Sendable {
    public init() {}

    public struct Delivery: Sendable {
        public let id: String
        public let signature: String
        public let body: [UInt8]

        public var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:] }

        /// True when the signature is the HMAC-SHA256 of the body under `secret`.
        public func isSigned(with secret: String) -> Bool {
            let mac = HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: Array(secret.utf8)))
            return signature == "sha256=" + mac.map { String(format: "%02x", $0) }.joined()
        }
    }

    private let lock = NSLock()
    private var received: [Delivery] = []
    private var failingNow = false
    private var attemptsNow = 0
    private var server: GracefulServer?

    public var deliveries: [Delivery] { lock.withLock { received } }
    public var attempts: Int { lock.withLock { attemptsNow } }
    public var failing: Bool {
        get { lock.withLock { failingNow } }
        set { lock.withLock { failingNow = newValue } }
    }

    /// Starts listening; answers the port.
    public func start() async throws -> Int {
        let router = Router()
        router.post("hook") { [self] request, _ -> Response in
            let buffer = try await request.body.collect(upTo: 1 << 20)
            let delivery = Delivery(
                id: request.headers[HTTPField.Name("X-Weft-Delivery")!] ?? "",
                signature: request.headers[HTTPField.Name("X-Weft-Signature")!] ?? "",
                body: Array(buffer.readableBytesView))
            let fail = lock.withLock { () -> Bool in
                attemptsNow += 1
                if !failingNow { received.append(delivery) }
                return failingNow
            }
            return Response(status: fail ? .internalServerError : .ok)
        }
        let (bound, stream) = AsyncStream.makeStream(of: Int?.self)
        var logger = Logger(label: "webhook-receiver")
        logger.logLevel = .critical
        let application = Application(
            router: router, configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                stream.yield(channel.localAddress?.port)
                stream.finish()
            }, logger: logger)
        let server = GracefulServer(running: application, logger: logger) { _ in stream.finish() }
        lock.withLock { self.server = server }
        for await port in bound {
            if let port { return port }
        }
        throw CancellationError()
    }

    public func stop() async {
        let server = lock.withLock { self.server }
        await server?.stop()
    }
}

