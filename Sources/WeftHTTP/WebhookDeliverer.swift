import Crypto
import Foundation
import Logging
import Weft
import WeftCore
import WeftSync

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A webhook the operator declared (`--webhooks FILE`): where its deliveries go and the secret that
/// signs them.
public struct WebhookEndpoint: Sendable, Hashable {
    /// The name subscriptions use.
    public var identifier: String
    /// Where deliveries are `POST`ed (http or https).
    public var url: URL
    /// The HMAC-SHA256 key of each delivery's `X-Weft-Signature`.
    public var secret: [UInt8]

    public init(identifier: String, url: URL, secret: [UInt8]) {
        self.identifier = identifier
        self.url = url
        self.secret = secret
    }

    /// The `X-Weft-Signature` of `body`: `sha256=` and the hex HMAC-SHA256 of the body's bytes.
    public func signature(of body: [UInt8]) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: secret))
        return "sha256=" + mac.map { $0 < 16 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }
}

/// Sends one delivery; answers the HTTP status. Throws when no answer came (refused, timed out).
public protocol WebhookTransport: Sendable {
    func post(_ url: URL, headers: [String: String], body: [UInt8]) async throws -> Int
}

/// The transport of the daemon: URLSession with a bounded timeout.
public struct URLSessionWebhookTransport: WebhookTransport {
    private let session: URLSession

    public init(timeoutSeconds: Double = HTTPLimits.webhookTimeoutSeconds) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeoutSeconds
        configuration.timeoutIntervalForResource = timeoutSeconds
        session = URLSession(configuration: configuration)
    }

    public func post(_ url: URL, headers: [String: String], body: [UInt8]) async throws -> Int {
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.httpBody = Data(body)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (_, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        return http.statusCode
    }
}

/// Delivers the changes of a replica's subscribed nodes to their webhooks, in order per subscription, at
/// least once across restarts and receiver outages.
///
/// Each round reads every subscription whose node changed (or whose retry is due): when the node's value
/// differs from the one last delivered, it `POST`s the latest value (changes between two rounds coalesce)
/// under the delivery id the cursor gives it, signed with the webhook's secret, and records the answer in
/// the cursor. A failure waits per ``WebhookRetryPolicy``; the subscription keeps retrying, and shows as
/// failing in `weft status` after ``WeftLimits/subscriptionFailuresBeforeFailing`` failures in a row.
///
/// ```swift
/// let deliverer = WebhookDeliverer(replica: replica, endpoints: endpoints, logger: logger)
/// deliverer.start()
/// …
/// await deliverer.stop()
/// ```
public final class WebhookDeliverer: @unchecked Sendable {
    /// What a delivery counts, for `/metrics`.
    public struct Counts: Sendable, Hashable {
        public var delivered = 0
        public var failed = 0
    }

    let replica: Replica
    let access: HTTPAccess?
    let endpoints: [String: WebhookEndpoint]
    let logger: Logger
    let policy: WebhookRetryPolicy
    let transport: any WebhookTransport
    let clock: @Sendable () -> Int64
    let jitter: @Sendable () -> Double
    private let lock = NSLock()
    private var dirty = true
    private var stopping = false
    private var task: Task<Void, Never>?
    private var listenerToken: ChangeListenerToken?
    private var bookListener: UUID?
    private let accessListener = UUID()
    private var counts = Counts()
    private let wake = WakeSignal()

    /// A deliverer for `replica`'s subscriptions through `endpoints`.
    ///
    /// - Parameters:
    ///   - access: the daemon's token book: before each round every subscription's client must still read
    ///     its node, else it is marked refused and nothing is sent (nil checks nothing).
    ///   - clock: the wall time in milliseconds (the payload's `timestamp`, and retry times).
    ///   - jitter: a draw in 0..<1 for each retry's jitter.
    public init(
        replica: Replica, endpoints: [WebhookEndpoint], access: HTTPAccess? = nil, logger: Logger,
        policy: WebhookRetryPolicy = WebhookRetryPolicy(),
        transport: any WebhookTransport = URLSessionWebhookTransport(),
        clock: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) },
        jitter: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.replica = replica
        self.access = access
        self.endpoints = Dictionary(endpoints.map { ($0.identifier, $0) }) { _, last in last }
        self.logger = logger
        self.policy = policy
        self.transport = transport
        self.clock = clock
        self.jitter = jitter
    }

    /// Deliveries acknowledged and attempts failed since start.
    public var deliveryCounts: Counts { lock.withLock { counts } }

    /// Starts delivering: what was missed while the daemon was down goes out first.
    public func start() {
        replica.subscriptions.declareWebhooks(Set(endpoints.keys))
        listenerToken = replica.addChangeListener { [weak self] _ in self?.poke() }
        bookListener = replica.subscriptions.addListener { [weak self] in self?.poke() }
        // A reload of the tokens or rules: each subscription's access is checked again at once.
        access?.addListener(accessListener) { [weak self] in self?.poke() }
        let task = Task { [self] in await run() }
        lock.withLock { self.task = task }
    }

    /// Stops delivering once the deliveries in flight are answered (or time out): nothing is cancelled,
    /// as cancelling a URLSession task can deadlock on Linux's FoundationNetworking. A delivery whose
    /// answer is lost is sent again, with its id, after a restart.
    public func stop() async {
        listenerToken?.cancel()
        if let bookListener { replica.subscriptions.removeListener(bookListener) }
        access?.removeListener(accessListener)
        let task = lock.withLock { () -> Task<Void, Never>? in
            stopping = true
            return self.task
        }
        wake.close()
        await task?.value
    }

    private var isStopping: Bool { lock.withLock { stopping } }

    private func poke() {
        lock.withLock { dirty = true }
        wake.signal()
    }

    private func run() async {
        var retryAt: Int64?
        while !isStopping {
            let now = clock()
            let due = lock.withLock { () -> Bool in
                defer { dirty = false }
                return dirty
            }
            if due || (retryAt.map { $0 <= now } ?? false), !isStopping {
                retryAt = await round(now: now)
            }
            // Sleeps until a change wakes it or the next retry is due, never longer than a second.
            let wait = min(max((retryAt ?? Int64.max) - clock(), 1), 1_000)
            await wake.wait(milliseconds: wait)
        }
    }

    /// One pass over the subscriptions: delivers what is due, and answers when the next retry is.
    private func round(now: Int64) async -> Int64? {
        let subscriptions: [DataSubscription]
        do {
            subscriptions = try replica.subscriptions.all()
        } catch {
            logger.error("the subscriptions cannot be read", metadata: ["error": "\(error)"])
            return now + policy.capMillis
        }
        var nextRetry: Int64?
        var due: [DataSubscription] = []
        for subscription in subscriptions {
            guard isAllowed(subscription) else { continue }
            let fingerprint = ValueFingerprint.of(replica.value(at: subscription.path))
            guard fingerprint != subscription.delivery.deliveredFingerprint else { continue }
            if subscription.delivery.nextAttemptMillis > now {
                nextRetry = min(nextRetry ?? .max, subscription.delivery.nextAttemptMillis)
                continue
            }
            due.append(subscription)
        }
        await withTaskGroup(of: Int64?.self) { group in
            var running = 0
            for subscription in due {
                if running >= HTTPLimits.webhookConcurrentMax, let retry = await group.next() {
                    running -= 1
                    if let retry { nextRetry = min(nextRetry ?? .max, retry) }
                }
                running += 1
                group.addTask { await self.deliver(subscription, now: now) }
            }
            for await retry in group {
                if let retry { nextRetry = min(nextRetry ?? .max, retry) }
            }
        }
        return nextRetry
    }

    /// True when the subscription's client may still read its node; else marks it refused (once, with
    /// the reason) so that `weft status` shows it, and nothing of the node is sent. Access that comes
    /// back (another reload) lifts the mark.
    private func isAllowed(_ subscription: DataSubscription) -> Bool {
        let refusal = access?.readDenial(client: subscription.client, at: subscription.path)
        if refusal != subscription.delivery.refusal {
            do {
                try replica.subscriptions.recordRefusal(subscription.id, refusal: refusal)
            } catch {
                logger.error("a subscription's refusal could not be recorded", metadata: ["error": "\(error)"])
            }
            if let refusal {
                logger.warning(
                    "a subscription is refused: its client can no longer read its node",
                    metadata: ["subscription": "\(subscription.id)", "reason": "\(refusal)"])
            }
        }
        return refusal == nil
    }

    /// One attempt; answers the time of the retry when it failed.
    private func deliver(_ subscription: DataSubscription, now: Int64) async -> Int64? {
        let book = replica.subscriptions
        let id = subscription.id
        guard let endpoint = endpoints[subscription.target.webhookIdentifier] else {
            return fail(id, subscription, "no webhook \(subscription.target.webhookIdentifier) is declared", now: now)
        }
        // A reload may have landed since the round began: nothing is read for a client that lost access.
        guard isAllowed(subscription) else { return nil }
        // Read again, with the stamps: the value sent and the ops listed are one consistent read.
        let changes = replica.changes(at: subscription.path, since: subscription.delivery.deliveredVector)
        let fingerprint = ValueFingerprint.of(changes.value)
        let sequence: UInt64
        do {
            guard let begun = try book.beginDelivery(id, fingerprint: fingerprint) else { return nil }
            sequence = begun
        } catch {
            return fail(id, subscription, "\(error)", now: now)
        }
        let body = self.body(subscription, sequence: sequence, changes: changes, now: now)
        let headers = [
            "Content-Type": "application/json", "X-Weft-Signature": endpoint.signature(of: body),
            "X-Weft-Delivery": "\(id):\(sequence)",
        ]
        do {
            let status = try await transport.post(endpoint.url, headers: headers, body: body)
            guard (200..<300).contains(status) else {
                return fail(id, subscription, "the receiver answered \(status)", now: now)
            }
            try book.recordDelivered(id, sequence: sequence, fingerprint: fingerprint, vector: changes.vector)
            lock.withLock { counts.delivered += 1 }
            return nil
        } catch {
            return fail(id, subscription, "\(error)", now: now)
        }
    }

    private func fail(_ id: String, _ subscription: DataSubscription, _ reason: String, now: Int64) -> Int64 {
        let retry = now + policy.delayMillis(afterFailures: subscription.delivery.failures + 1, jitter: jitter())
        lock.withLock { counts.failed += 1 }
        do {
            try replica.subscriptions.recordFailure(id, error: reason, retryAtMillis: retry)
        } catch {
            logger.error("a delivery failure could not be recorded", metadata: ["error": "\(error)"])
        }
        if subscription.delivery.failures + 1 == WeftLimits.subscriptionFailuresBeforeFailing {
            logger.warning(
                "a subscription is failing", metadata: ["subscription": "\(id)", "error": "\(reason)"])
        }
        return retry
    }

    /// The JSON a receiver gets (see `Docs/HTTP.md`): ``payload(_:sequence:changes:now:)`` and `stamps`,
    /// the stamps of the ops that changed the node since the previous delivery, as a JSON array (a
    /// ``Value`` has no arrays). Stamp texts are of the push-id alphabet: nothing in them needs escaping.
    func body(_ subscription: DataSubscription, sequence: UInt64, changes: NodeChanges, now: Int64) -> [UInt8] {
        var json = payload(subscription, sequence: sequence, changes: changes, now: now).jsonString()
        json.removeLast()  // the object's closing brace
        json += #","stamps":["# + changes.stamps.map { "\"\($0.text)\"" }.joined(separator: ",") + "]}"
        return Array(json.utf8)
    }

    /// The delivery's fields but its stamps; `stampsComplete` is false when some are left out.
    func payload(_ subscription: DataSubscription, sequence: UInt64, changes: NodeChanges, now: Int64) -> Value {
        let value = changes.value
        var fields: [Key: Value] = [
            "stampsComplete": .bool(changes.isComplete),
            "id": .string("\(subscription.id):\(sequence)"), "subscription": .string(subscription.id),
            "sequence": .int(Int64(clamping: sequence)), "path": .string(subscription.path.description),
            "event": .string(value.isNull ? "delete" : "put"), "timestamp": .int(now),
            "replica": .string(replica.replicaID.description),
        ]
        switch subscription.target {
        case .webhook(let identifier, let context):
            fields["webhook"] = .string(identifier)
            fields["context"] = .string(context)
        case .notifications(let deviceToken):
            fields["deviceToken"] = .string(deviceToken)
        }
        if subscription.descriptor.includesValue { fields["value"] = value }
        return .object(fields)
    }
}

/// The `--webhooks` file: one `IDENTIFIER URL SECRET` per line (`#` comments, blank lines skipped); the
/// identifier `push-gateway` is the gateway that notifications go through.
public enum WebhookFile {
    /// The endpoints of `text`.
    /// - Throws: `WeftError` `invalidValue` naming the line that is wrong.
    public static func parse(_ text: String) throws -> [WebhookEndpoint] {
        var endpoints: [WebhookEndpoint] = []
        var seen: Set<String> = []
        for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true).map(String.init)
            guard parts.count == 3 else {
                throw WeftError(.invalidValue, "webhooks line \(number + 1): expected IDENTIFIER URL SECRET")
            }
            guard let url = URL(string: parts[1]), let scheme = url.scheme?.lowercased(),
                scheme == "http" || scheme == "https", url.host != nil
            else {
                throw WeftError(.invalidValue, "webhooks line \(number + 1): \(parts[1]) is not an http(s) URL")
            }
            guard parts[2].utf8.count >= 16 else {
                throw WeftError(.invalidValue, "webhooks line \(number + 1): the secret needs at least 16 bytes")
            }
            guard parts[0].utf8.count <= SyncLimits.subscriptionFieldBytesMax, seen.insert(parts[0]).inserted else {
                throw WeftError(.invalidValue, "webhooks line \(number + 1): \(parts[0]) is named twice or too long")
            }
            endpoints.append(WebhookEndpoint(identifier: parts[0], url: url, secret: Array(parts[2].utf8)))
        }
        return endpoints
    }
}
