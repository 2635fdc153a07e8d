import Testing
import WeftCore
import WeftSync

@_spi(Engine) @testable import Weft

/// Two replicas joined by one session in this process, bytes delivered when the test says (a hub and a
/// leaf limited to a share, say). The test can cut the session with bytes still in flight, as a dropped
/// connection does. Actions go to the replicas as `SyncDriver` hands them over; timers are not run.
struct SessionPair {
    struct Endpoint {
        let fixture: ReplicaFixture
        var session: SyncSession
        var inbox: [UInt8] = []
        var closed: SyncError?
        var isClosed = false
        /// Snapshots received whole (each handed to the replica to install).
        var snapshots = 0
        /// Set when an install stamped own ops again: the driver then ends the session with `resync`,
        /// and so should the test (fresh hellos count those ops anew).
        var needsResync = false
    }

    var endpoints: [Endpoint]
    let now: UInt64 = 1_000

    /// Starts a session from `initiator` (endpoint 0) to `acceptor` (endpoint 1).
    init(
        _ initiator: ReplicaFixture, _ initiatorConfiguration: SyncConfiguration, _ acceptor: ReplicaFixture,
        _ acceptorConfiguration: SyncConfiguration
    ) throws {
        endpoints = [
            Endpoint(fixture: initiator, session: try SyncSession(configuration: initiatorConfiguration)),
            Endpoint(fixture: acceptor, session: try SyncSession(configuration: acceptorConfiguration)),
        ]
        var generator = SeededGenerator(seed: 11)
        let acceptorNonce = AuthNonce.random(using: &generator)
        perform(endpoints[1].session.onStart(.acceptor, nonce: acceptorNonce, source: source(1), now: now), at: 1)
        let initiatorNonce = AuthNonce.random(using: &generator)
        perform(endpoints[0].session.onStart(.initiator, nonce: initiatorNonce, source: source(0), now: now), at: 0)
    }

    func source(_ endpoint: Int) -> _SyncTargetSource {
        let replica = endpoints[endpoint].fixture.replica
        return _SyncTargetSource(target: replica, compactionStamp: replica.compactionStamp)
    }

    mutating func perform(_ actions: [SyncAction], at endpoint: Int) {
        let replica = endpoints[endpoint].fixture.replica
        for action in actions {
            switch action {
            case .send(let bytes):
                if !endpoints[endpoint ^ 1].isClosed { endpoints[endpoint ^ 1].inbox += bytes }
            case .applyOps(let ops, _):
                #expect(throws: Never.self) { try replica.applyRemote(ops) }
            case .reviseOps(let ops, _):
                #expect(throws: Never.self) { try replica.reviseCarried(ops.ops) }
            case .installSnapshot(let snapshot, _):
                endpoints[endpoint].snapshots += 1
                #expect(throws: Never.self) {
                    if try replica.installSnapshot(snapshot).opsRestamped > 0 { endpoints[endpoint].needsResync = true }
                }
            case .close(let error):
                endpoints[endpoint].isClosed = true
                endpoints[endpoint].closed = error
            default:
                break
            }
        }
    }

    /// Delivers what waits for `endpoint`, then lets both sides see their durable logs.
    mutating func deliver(to endpoint: Int) async throws {
        let bytes = endpoints[endpoint].inbox
        endpoints[endpoint].inbox = []
        guard !bytes.isEmpty, !endpoints[endpoint].isClosed else { return }
        perform(endpoints[endpoint].session.onBytesReceived(bytes, source: source(endpoint), now: now), at: endpoint)
        try await logsMoved()
    }

    /// Tells each open session that its replica's durable log may have moved.
    mutating func logsMoved() async throws {
        for endpoint in endpoints.indices {
            try await endpoints[endpoint].fixture.replica.flush()
            guard !endpoints[endpoint].isClosed else { continue }
            perform(endpoints[endpoint].session.onLocalOpsAppended(source: source(endpoint), now: now), at: endpoint)
        }
    }

    /// Delivers both ways until nothing is in flight.
    mutating func settle() async throws {
        for _ in 0..<100 {
            guard endpoints.contains(where: { !$0.inbox.isEmpty && !$0.isClosed }), !needsResync else { return }
            for endpoint in endpoints.indices { try await deliver(to: endpoint) }
        }
        Issue.record("the session did not settle in 100 rounds")
    }

    /// True when either end stamped own ops again and the session must start over.
    var needsResync: Bool { endpoints.contains(where: \.needsResync) }

    /// True while neither end closed.
    var isOpen: Bool { !endpoints.contains(where: \.isClosed) }

    /// Drops the connection: bytes in flight are lost.
    mutating func cut() {
        for endpoint in endpoints.indices {
            endpoints[endpoint].inbox = []
            endpoints[endpoint].isClosed = true
        }
    }
}
