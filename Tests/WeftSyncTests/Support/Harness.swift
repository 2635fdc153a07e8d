import Testing
import WeftCore
@testable import WeftSync

/// Replicas (each an honest ``MemoryOpLog``) joined by pairs of sessions wired back to back: the
/// bytes one session sends are fed, in chunks of `chunkBytes`, to the other. Ops to apply are
/// merged into the receiving log, which then tells every session of that replica that it grew.
struct Harness {
    struct Endpoint {
        let node: Int
        var session: SyncSession
        var inbox: [UInt8] = []
        var timers: [SyncTimer: UInt64] = [:]
        var isClosed = false
        var peerClosed = false
        var statuses: [SyncStatus] = []
        var acknowledgements: [Acknowledgement] = []
        /// Acknowledgements of a peer limited to a share (for the stable frontier only).
        var shareAcknowledgements: [Acknowledgement] = []
        var requests: [ClientRequest] = []
        var replies: [ClientReply] = []
        var events: [ClientEvent] = []
        var queryEvents: [ClientQueryEvent] = []
        var sent = FrameDecoder()
        /// Every message this endpoint sent, decoded.
        var messagesSent: [Message] = []
        /// Bytes this endpoint sent.
        var bytesSent = 0
    }

    var logs: [MemoryOpLog]
    var endpoints: [Endpoint] = []
    var now: UInt64 = 50_000
    /// Largest chunk delivered at once; `nil` delivers chunks of random sizes.
    var chunkBytes: Int? = .max
    var generator: SeededGenerator

    init(nodeCount: Int, seed: UInt64 = 1) {
        logs = (0..<nodeCount).map { MemoryOpLog(replica: Harness.replica($0)) }
        generator = SeededGenerator(seed: seed)
    }

    static func replica(_ node: Int) -> ReplicaID { ReplicaID(rawValue: UInt64(node + 1) * 0x1_0001)! }

    static func token(_ a: Int, _ b: Int) -> AuthToken {
        try! AuthToken(string: "shared secret of \(min(a, b)) and \(max(a, b))")
    }

    /// A configuration for `node` holding a token for every other node.
    func configuration(node: Int, role: SyncRole = .peer) -> SyncConfiguration {
        var book = TokenBook()
        for other in 0..<max(logs.count, 8) where other != node {
            book.set(Harness.token(node, other), for: Harness.replica(other).description)
        }
        return SyncConfiguration(replica: Harness.replica(node), role: role, tokens: book)
    }

    // MARK: - Wiring

    /// Connects `initiator` to `acceptor`; returns the initiator's endpoint (the acceptor's is the next).
    @discardableResult
    mutating func connect(
        _ initiator: Int, _ acceptor: Int, adjust: (inout SyncConfiguration, SyncSide) -> Void = { _, _ in }
    ) -> Int {
        var initiatorConfiguration = configuration(node: initiator)
        adjust(&initiatorConfiguration, .initiator)
        var acceptorConfiguration = configuration(node: acceptor)
        adjust(&acceptorConfiguration, .acceptor)
        let first = endpoints.count
        endpoints.append(Endpoint(node: initiator, session: try! SyncSession(configuration: initiatorConfiguration)))
        endpoints.append(Endpoint(node: acceptor, session: try! SyncSession(configuration: acceptorConfiguration)))
        start(first + 1, side: .acceptor)
        start(first, side: .initiator)
        return first
    }

    mutating func start(_ endpoint: Int, side: SyncSide) {
        let nonce = AuthNonce.random(using: &generator)
        let node = endpoints[endpoint].node
        let actions = endpoints[endpoint].session.onStart(side, nonce: nonce, source: logs[node], now: now)
        perform(actions, at: endpoint)
    }

    func peer(of endpoint: Int) -> Int { endpoint ^ 1 }

    // MARK: - Actions

    mutating func perform(_ actions: [SyncAction], at endpoint: Int) {
        for action in actions { perform(action, at: endpoint) }
    }

    mutating func perform(_ action: SyncAction, at endpoint: Int) {
        let node = endpoints[endpoint].node
        switch action {
        case .send(let bytes):
            record(sent: bytes, at: endpoint)
            if !endpoints[peer(of: endpoint)].isClosed { endpoints[peer(of: endpoint)].inbox += bytes }
        case .applyOps(let ops, let from):
            #expect(from == Harness.replica(endpoints[peer(of: endpoint)].node))
            logs[node].apply(ops.ops)
            logGrew(node: node)
        case .reviseOps(let ops, _):
            logs[node].revise(ops.ops)
            logGrew(node: node)
        case .installSnapshot(let snapshot, _):
            logs[node].install(snapshot)
            logGrew(node: node)
        case .recordAcknowledgement(let acknowledgement, _):
            endpoints[endpoint].acknowledgements.append(acknowledgement)
        case .recordShareAcknowledgement(let acknowledgement, _):
            endpoints[endpoint].shareAcknowledgements.append(acknowledgement)
        case .scheduleTimer(let timer, let delay): endpoints[endpoint].timers[timer] = now + delay
        case .cancelTimer(let timer): endpoints[endpoint].timers[timer] = nil
        case .reportStatus(let status): endpoints[endpoint].statuses.append(status)
        case .handleRequest(let request): endpoints[endpoint].requests.append(request)
        case .deliverReply(let reply): endpoints[endpoint].replies.append(reply)
        case .deliverEvent(let event): endpoints[endpoint].events.append(event)
        case .deliverQueryEvent(let event): endpoints[endpoint].queryEvents.append(event)
        case .close:
            endpoints[endpoint].isClosed = true
            endpoints[peer(of: endpoint)].peerClosed = true
        }
    }

    mutating func record(sent bytes: [UInt8], at endpoint: Int) {
        endpoints[endpoint].bytesSent += bytes.count
        endpoints[endpoint].sent.append(bytes)
        while let frame = try! endpoints[endpoint].sent.nextFrame() {
            endpoints[endpoint].messagesSent.append(try! MessageCodec.decode(frame))
        }
    }

    /// Tells every open session of `node` that its log grew.
    mutating func logGrew(node: Int) {
        for endpoint in endpoints.indices where endpoints[endpoint].node == node && !endpoints[endpoint].isClosed {
            let actions = endpoints[endpoint].session.onLocalOpsAppended(source: logs[node], now: now)
            perform(actions, at: endpoint)
        }
    }

    /// Writes a local op at `node` and tells its sessions.
    @discardableResult
    mutating func write(node: Int, _ kind: OpKind, at path: String) -> Op {
        let op = try! logs[node].write(kind, at: path)
        logGrew(node: node)
        return op
    }

    // MARK: - Running

    /// Delivers bytes until every inbox is empty; returns the number of deliveries.
    @discardableResult
    mutating func run(deliveriesMax: Int = 1_000_000) -> Int {
        var deliveries = 0
        while let endpoint = nextBusyEndpoint() {
            deliveries += 1
            guard deliveries <= deliveriesMax else {
                Issue.record("the harness did not settle within \(deliveriesMax) deliveries")
                return deliveries
            }
            deliver(to: endpoint)
        }
        return deliveries
    }

    mutating func nextBusyEndpoint() -> Int? {
        let busy = endpoints.indices.filter {
            !endpoints[$0].isClosed && (!endpoints[$0].inbox.isEmpty || endpoints[$0].peerClosed)
        }
        guard !busy.isEmpty else { return nil }
        return busy[Int(generator.below(UInt64(busy.count)))]
    }

    mutating func deliver(to endpoint: Int) {
        let node = endpoints[endpoint].node
        guard !endpoints[endpoint].inbox.isEmpty else {
            perform(endpoints[endpoint].session.onTransportClosed(now: now), at: endpoint)
            return
        }
        let available = endpoints[endpoint].inbox.count
        let size = chunkBytes.map { min($0, available) } ?? Int(generator.below(UInt64(min(available, 64)))) + 1
        let chunk = Array(endpoints[endpoint].inbox.prefix(size))
        endpoints[endpoint].inbox.removeFirst(size)
        let actions = endpoints[endpoint].session.onBytesReceived(chunk, source: logs[node], now: now)
        perform(actions, at: endpoint)
    }

    /// Moves the clock forward and fires the timers that are due, earliest first.
    mutating func advance(byMilliseconds delay: UInt64) {
        let target = now + delay
        while true {
            let due = endpoints.indices.flatMap { endpoint in
                endpoints[endpoint].timers.compactMap { $0.value <= target ? (endpoint, $0.key, $0.value) : nil }
            }.filter { !endpoints[$0.0].isClosed }.min { $0.2 < $1.2 }
            guard let (endpoint, timer, deadline) = due else { break }
            now = max(now, deadline)
            endpoints[endpoint].timers[timer] = nil
            let node = endpoints[endpoint].node
            perform(endpoints[endpoint].session.onTimerFired(timer, source: logs[node], now: now), at: endpoint)
        }
        now = target
    }

    /// Closes the transport under one link without error frames (a cut cable), dropping bytes in flight.
    mutating func cut(_ endpoint: Int) {
        for side in [endpoint, peer(of: endpoint)] where !endpoints[side].isClosed {
            endpoints[side].inbox = []
            perform(endpoints[side].session.onTransportClosed(now: now), at: side)
        }
    }

    // MARK: - Inspection

    func opsSent(by endpoint: Int) -> [Op] {
        endpoints[endpoint].messagesSent.flatMap { message -> [Op] in
            if case .ops(let ops) = message { return ops.ops }
            return []
        }
    }

    func state(_ node: Int) -> Value { logs[node].state }
}

/// Random ops over a small tree, so that writes of different replicas overlap.
enum RandomWrites {
    static let paths = ["/a", "/a/x", "/a/y", "/b", "/b/c/d", "/counter", "/list/0", "/list/1"]

    static func kind(using generator: inout SeededGenerator) -> (OpKind, String) {
        let path = paths[Int(generator.below(UInt64(paths.count)))]
        switch generator.below(4) {
        case 0: return (.set(.int(Int64(generator.below(1000)))), path)
        case 1: return (.set(.string("v\(generator.below(100))")), path)
        case 2: return (.increment(by: .int(Int64(generator.below(9)) + 1), from: .int(0)), "/counter")
        default:
            let children = [
                MergeChild(relative: try! Path("m"), value: .int(Int64(generator.below(50)))),
                MergeChild(relative: try! Path("n/o"), value: .bool(generator.below(2) == 0)),
            ]
            return (.merge(try! MergeChild.validated(children)), path)
        }
    }
}
