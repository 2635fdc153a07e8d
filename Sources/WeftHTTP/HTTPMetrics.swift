import Foundation
import Hummingbird
import Prometheus
import Weft
import WeftCore

/// One peer's line in `/metrics`.
public struct HTTPPeerGauge: Sendable {
    /// The peer's address as the sync driver shows it.
    public var address: String
    /// Ops this replica holds that the peer has not acknowledged.
    public var opsBehind: UInt64
    /// True while a session with it is open.
    public var isConnected: Bool

    /// A peer's gauges.
    public init(address: String, opsBehind: UInt64, isConnected: Bool) {
        self.address = address
        self.opsBehind = opsBehind
        self.isConnected = isConnected
    }
}

/// The daemon's Prometheus metrics, served at `GET /metrics` in the text exposition format.
///
/// Counters move as things happen; the gauges of the replica and of the peers are read when scraped.
final class HTTPMetrics: @unchecked Sendable {
    let registry = PrometheusCollectorRegistry()
    let requests: Counter
    let writesApplied: Counter
    let writesRejected: Counter
    let unauthorized: Counter
    let streamsOpened: Counter
    let opsApplied: Counter
    let opsRejected: Counter
    private let webhookDeliveries: Counter
    private let webhookFailures: Counter
    private let subscriptions: Gauge
    private let subscriptionsFailing: Gauge
    private let subscriptionsRefused: Gauge
    private let streamsOpen: Gauge
    private let logOps: Gauge
    private let commits: Gauge
    private let opsCommitted: Gauge
    private let databaseBytes: Gauge
    private let lastCompaction: Gauge
    var peers: @Sendable () -> [HTTPPeerGauge] = { [] }
    var streamCount: @Sendable () -> Int = { 0 }
    private var listenerToken: ChangeListenerToken?
    private let replica: Replica
    private let lock = NSLock()
    private var deliverer: WebhookDeliverer?
    private var deliveriesCounted = WebhookDeliverer.Counts()

    init(replica: Replica) {
        self.replica = replica
        requests = registry.makeCounter(descriptor: Self.named("weft_http_requests_total", "HTTP requests received"))
        writesApplied = registry.makeCounter(
            descriptor: Self.named("weft_http_writes_total", "HTTP writes answered once durable"))
        writesRejected = registry.makeCounter(
            descriptor: Self.named(
                "weft_http_writes_rejected_total", "HTTP writes refused (bad data, rejected op, storage)"))
        unauthorized = registry.makeCounter(
            descriptor: Self.named("weft_http_unauthorized_total", "HTTP requests without a valid client token"))
        streamsOpened = registry.makeCounter(
            descriptor: Self.named("weft_http_streams_opened_total", "Event streams opened"))
        opsApplied = registry.makeCounter(
            descriptor: Self.named("weft_ops_applied_total", "Ops applied by the merge, local and remote, since start"))
        opsRejected = registry.makeCounter(
            descriptor: Self.named("weft_ops_rejected_total", "Ops rejected by the merge (stale reads, bad increments)")
        )
        webhookDeliveries = registry.makeCounter(
            descriptor: Self.named(
                "weft_webhook_deliveries_total", "Webhook and notification deliveries the receiver acknowledged"))
        webhookFailures = registry.makeCounter(
            descriptor: Self.named(
                "weft_webhook_failures_total", "Webhook and notification delivery attempts that failed (retried)"))
        subscriptions = registry.makeGauge(
            descriptor: Self.named("weft_subscriptions", "Webhook and notification subscriptions kept"))
        subscriptionsFailing = registry.makeGauge(
            descriptor: Self.named(
                "weft_subscriptions_failing", "Subscriptions whose last deliveries failed in a row (still retried)"))
        subscriptionsRefused = registry.makeGauge(
            descriptor: Self.named(
                "weft_subscriptions_refused", "Subscriptions whose client can no longer read their node (not delivered)"))
        streamsOpen = registry.makeGauge(descriptor: Self.named("weft_http_streams_open", "Event streams open now"))
        logOps = registry.makeGauge(
            descriptor: Self.named("weft_log_ops", "Ops in the replica's log (not yet compacted)"))
        commits = registry.makeGauge(descriptor: Self.named("weft_group_commits", "Group commits since start"))
        opsCommitted = registry.makeGauge(
            descriptor: Self.named("weft_ops_committed", "Ops written by group commits since start"))
        databaseBytes = registry.makeGauge(descriptor: Self.named("weft_database_bytes", "Size of the database file"))
        lastCompaction = registry.makeGauge(
            descriptor: Self.named(
                "weft_last_compaction_seconds", "Unix time of the last compaction, 0 for none since start"))
        listenerToken = replica.addChangeListener { [weak self] batch in
            var applied: Int64 = 0
            var rejected: Int64 = 0
            for outcome in batch.outcomes.values {
                switch outcome {
                case .applied: applied += 1
                case .rejected: rejected += 1
                case .waiting: break
                }
            }
            if applied > 0 { self?.opsApplied.increment(by: applied) }
            if rejected > 0 { self?.opsRejected.increment(by: rejected) }
        }
    }

    func stop() { listenerToken?.cancel() }

    /// A metric's descriptor: its whole name (the unit already in it, as `_total`) and its help line.
    private static func named(_ name: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
    }

    /// Counts the deliveries of `deliverer` from now on.
    func count(_ deliverer: WebhookDeliverer) {
        lock.withLock { self.deliverer = deliverer }
    }

    /// Moves the delivery counters by what the deliverer counted since the last scrape (it counts in
    /// memory; the counters only go up, as Prometheus wants).
    private func scrapeDeliveries() {
        let (delivered, failed) = lock.withLock { () -> (Int, Int) in
            guard let counts = deliverer?.deliveryCounts else { return (0, 0) }
            defer { deliveriesCounted = counts }
            return (counts.delivered - deliveriesCounted.delivered, counts.failed - deliveriesCounted.failed)
        }
        if delivered > 0 { webhookDeliveries.increment(by: Int64(delivered)) }
        if failed > 0 { webhookFailures.increment(by: Int64(failed)) }
        if let all = try? replica.subscriptions.all() {
            subscriptions.set(Double(all.count))
            subscriptionsFailing.set(Double(all.filter(\.delivery.isFailing).count))
            subscriptionsRefused.set(Double(all.filter { $0.delivery.refusal != nil }.count))
        }
    }

    /// Records a compaction's time.
    func noteCompaction(at date: Date) {
        lastCompaction.set(date.timeIntervalSince1970)
    }

    /// The scrape: gauges read now, then every metric in Prometheus's text format.
    func response() -> Response {
        streamsOpen.set(Double(streamCount()))
        logOps.set(Double(replica.logOpCount))
        let statistics = replica.statistics
        commits.set(Double(statistics.commits))
        opsCommitted.set(Double(statistics.opsCommitted))
        if let bytes = try? replica.bytesOnDisk() { databaseBytes.set(Double(bytes)) }
        scrapeDeliveries()
        for peer in peers() {
            registry.makeGauge(
                descriptor: Self.named(
                    "weft_peer_ops_behind", "Ops this replica holds that the peer has not acknowledged"),
                labels: [("peer", peer.address)]
            ).set(Double(peer.opsBehind))
            registry.makeGauge(
                descriptor: Self.named("weft_peer_connected", "1 while a session with the peer is open"),
                labels: [("peer", peer.address)]
            ).set(peer.isConnected ? 1.0 : 0.0)
        }
        return Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
    }
}
