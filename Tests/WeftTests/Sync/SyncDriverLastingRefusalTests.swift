import Testing
import WeftCore
import WeftSync

@_spi(Engine) @testable import Weft

/// A dialled peer that refuses this replica for a reason only a change of configuration ends is dialled
/// again only after a long fixed delay, and the refusal is said once, with what to change, in the log and
/// in the peer's status: a wrong token, and a leaf (a replica holding only its share) dialling a replica of
/// the whole tree.
@Suite(.timeLimit(.minutes(5))) struct SyncDriverLastingRefusalTests {
    /// The redial delay the dialler's reconnector now waits, read on its loop.
    static func fixedDelay(of driver: SyncDriver) async throws -> Int? {
        try await driver.loop.submit { driver.outboundPeers.first?.reconnector?.fixedRetryDelayMilliseconds }
    }

    @Test("a peer refused for its token waits the long delay and says once what to change")
    func wrongTokenIsALastingRefusal() async throws {
        let hub = try SyncFixture.driver(node: 0, others: [1]).0
        let logs = LogRecorder()
        var configuration = SyncFixture.configuration(node: 1, others: [])
        configuration.tokens.set(
            try AuthToken(string: "not the secret the hub holds"), for: SyncFixture.replica(0).description)
        let dialler = try SyncDriver(
            target: EngineTarget(node: 1), configuration: configuration, logger: SyncFixture.logger(node: 1, logs: logs)
        )
        do {
            let port = try await hub.listen(on: "127.0.0.1", port: 0)
            try await dialler.addPeer(host: "127.0.0.1", port: port)
            try await SyncFixture.wait("the refusal to be advised in the status") {
                dialler.status.peers.first?.advice?.contains("do not share a token") == true
            }
            #expect(try await Self.fixedDelay(of: dialler) == SyncShellLimits.refusedRedialDelayMilliseconds)
            #expect(logs.messages.filter { $0.contains("sync peer refused for good") }.count == 1)
            #expect(dialler.status.peers.first?.lastErrorCode == .authenticationFailed)
            let report = try await dialler.loop.submit { dialler.statusReport() }
            #expect("\(report)".contains("advice"), "weft status shows it")
        } catch {
            await hub.shutdown()
            await dialler.shutdown()
            throw error
        }
        await hub.shutdown()
        await dialler.shutdown()
    }

    @Test("a leaf dialling a replica of the whole tree is told to sync with its hub only, once")
    func leafDiallingAFullPeer() async throws {
        let logs = LogRecorder()
        let (full, _) = try SyncFixture.driver(node: 0, others: [1])
        let leafTarget = EngineTarget(node: 1)
        // The leaf holds a placeholder of an op of node 2 (as its hub sent it); node 0 lacks that op.
        let withheld = Op(
            stamp: Stamp(millis: 1_000, counter: 0, replica: SyncFixture.replica(2)), sequence: 1,
            path: try Path("/stores/leaf2"), kind: .guardedBatch(read: VersionVector(), reads: [], writes: []),
            isPartial: true)
        _ = try leafTarget.applyRemote(EncodedOps([withheld]))
        let leaf = try SyncDriver(
            target: leafTarget, configuration: SyncFixture.configuration(node: 1, others: [0]),
            logger: SyncFixture.logger(node: 1, logs: logs))
        do {
            let port = try await full.listen(on: "127.0.0.1", port: 0)
            try await leaf.addPeer(host: "127.0.0.1", port: port)
            try await SyncFixture.wait("the leaf to be told to sync with its hub only") {
                leaf.status.peers.first?.advice?.contains("syncs with its hub only") == true
            }
            #expect(try await Self.fixedDelay(of: leaf) == SyncShellLimits.refusedRedialDelayMilliseconds)
            #expect(logs.messages.filter { $0.contains("sync peer refused for good") }.count == 1)
            #expect(leaf.status.peers.first?.lastErrorCode == .roleMismatch)
        } catch {
            await full.shutdown()
            await leaf.shutdown()
            throw error
        }
        await full.shutdown()
        await leaf.shutdown()
    }

    @Test("only refusals that a change of configuration ends last; a reloaded peer's close is redialled")
    func whichRefusalsLast() {
        let share = SyncError(.roleMismatch, "this replica holds only its share of the tree (op 1 of x is partial)")
        #expect(SyncDriver.advice(for: share, wasConnected: true)?.contains("this replica holds only") == true)
        // A replica of the whole tree refusing a leaf: the leaf hears it from the peer, the whole replica
        // raised it; each gets the advice of its own end.
        let refusedLeaf = "\"leaf1\" holds only its share of the tree (ops its hub cut down to what it may read)"
        let heardByLeaf = SyncError(.roleMismatch, refusedLeaf, raisedByPeer: true)
        #expect(SyncDriver.advice(for: heardByLeaf, wasConnected: false)?.contains("this replica holds only") == true)
        let raisedByWhole = SyncError(.roleMismatch, refusedLeaf)
        #expect(SyncDriver.advice(for: raisedByWhole, wasConnected: false)?.contains("the peer holds only") == true)
        var heardByWhole = share
        heardByWhole.raisedByPeer = true
        #expect(SyncDriver.advice(for: heardByWhole, wasConnected: false)?.contains("the peer holds only") == true)
        #expect(SyncDriver.advice(for: SyncError(.authenticationFailed, "wrong proof"), wasConnected: false) != nil)
        var reloaded = SyncError(.authenticationFailed, "the token of \"bob\" was removed")
        reloaded.raisedByPeer = true
        #expect(SyncDriver.advice(for: reloaded, wasConnected: true) == nil, "it dials again at once, as before")
        #expect(SyncDriver.advice(for: reloaded, wasConnected: false) != nil, "refused at the handshake: it lasts")
        #expect(SyncDriver.advice(for: SyncError(.connectionLost, "closed"), wasConnected: false) == nil)
        #expect(SyncDriver.advice(for: SyncError(.clockDrift, "ahead"), wasConnected: true) == nil)
    }
}
