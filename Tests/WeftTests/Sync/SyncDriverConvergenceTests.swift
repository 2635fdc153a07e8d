import Testing
import WeftCore
import WeftSync

@_spi(Engine) @testable import Weft

@Suite(.timeLimit(.minutes(5))) struct SyncDriverConvergenceTests {
    @Test func twoDriversOverLoopbackConvergeOnWritesMadeBeforeAndAfterConnecting() async throws {
        let (hub, hubTarget) = try SyncFixture.driver(node: 0, others: [1])
        let (peer, peerTarget) = try SyncFixture.driver(node: 1, others: [0])
        do {
            for index in 0..<200 { try hubTarget.write(.set(.int(Int64(index))), at: "/hub/\(index)") }
            for _ in 0..<100 { try peerTarget.write(.increment(by: .int(1), from: .int(0)), at: "/counter") }
            let port = try await hub.listen(on: "127.0.0.1", port: 0)
            try await peer.addPeer(host: "127.0.0.1", port: port)
            try await SyncFixture.wait("the first exchange") {
                hubTarget.versionVector == peerTarget.versionVector
                    && hubTarget.versionVector[peerTarget.replica] == 100
            }
            for _ in 0..<50 { try hubTarget.write(.increment(by: .int(2), from: .int(0)), at: "/counter") }
            try peerTarget.write(.set(.string("live")), at: "/peer/last")
            try await SyncFixture.wait("live ops to converge") {
                hubTarget.digest == peerTarget.digest && hubTarget.versionVector[hubTarget.replica] == 250
                    && hubTarget.versionVector[peerTarget.replica] == 101
            }
            #expect(try hubTarget.value(at: "/counter") == .int(200))
            #expect(try peerTarget.value(at: "/hub/199") == .int(199))
            #expect(try hubTarget.value(at: "/peer/last") == .string("live"))
            try await SyncFixture.wait("acks to drain ops behind") {
                peer.status.peers.allSatisfy { $0.isConnected && $0.opsBehind == 0 }
                    && hub.status.peers.allSatisfy { $0.isConnected && $0.opsBehind == 0 }
            }
            #expect(peer.status.peers.map(\.replica) == [hubTarget.replica])
            #expect(hub.status.peers.map(\.direction) == [.inbound])
            #expect(hub.status.listeningAddress == "127.0.0.1:\(port)")
        } catch {
            await hub.shutdown()
            await peer.shutdown()
            throw error
        }
        await hub.shutdown()
        await peer.shutdown()
    }

    @Test func aMiddleDriverRelaysOpsBetweenTwoThatNeverMeet() async throws {
        let (middle, middleTarget) = try SyncFixture.driver(node: 0, others: [1, 2])
        let (left, leftTarget) = try SyncFixture.driver(node: 1, others: [0])
        let (right, rightTarget) = try SyncFixture.driver(node: 2, others: [0])
        do {
            let port = try await middle.listen(on: "127.0.0.1", port: 0)
            try await left.addPeer(host: "127.0.0.1", port: port)
            try await right.addPeer(host: "127.0.0.1", port: port)
            for index in 0..<100 {
                try leftTarget.write(.set(.int(Int64(index))), at: "/left/\(index)")
                try rightTarget.write(.increment(by: .int(3), from: .int(0)), at: "/total")
            }
            try await SyncFixture.wait("three replicas to converge") {
                let digest = middleTarget.digest
                return leftTarget.digest == digest && rightTarget.digest == digest
                    && middleTarget.versionVector[leftTarget.replica] == 100
                    && middleTarget.versionVector[rightTarget.replica] == 100
            }
            #expect(try leftTarget.value(at: "/total") == .int(300))
            #expect(try rightTarget.value(at: "/left/99") == .int(99))
            #expect(middle.status.connectedCount == 2)
        } catch {
            for driver in [middle, left, right] { await driver.shutdown() }
            throw error
        }
        for driver in [middle, left, right] { await driver.shutdown() }
    }

    @Test func tensOfMegabytesCrossToASlowReplicaWithinTheSessionWindow() async throws {
        let (hub, hubTarget) = try SyncFixture.driver(node: 0, others: [1])
        let (peer, peerTarget) = try SyncFixture.driver(node: 1, others: [0])
        do {
            // The hub's replica is slow: the peer may only run a window ahead of its acks.
            hubTarget.setApplyDelay(milliseconds: 10)
            let blob = Value.string(String(repeating: "w", count: 2_048))
            for index in 0..<12_000 { try peerTarget.write(.set(blob), at: "/blobs/\(index)") }
            let port = try await hub.listen(on: "127.0.0.1", port: 0)
            try await peer.addPeer(host: "127.0.0.1", port: port)
            try await SyncFixture.wait("24 MiB of ops to cross", within: 30_000) {
                hubTarget.versionVector[peerTarget.replica] == 12_000
            }
            #expect(hubTarget.digest == peerTarget.digest)
            try await SyncFixture.wait("the window to drain") { peer.status.peers.first?.opsBehind == 0 }
            #expect(hubTarget.remoteBatchesApplied < 12_000, "ops travel in batches")
        } catch {
            await hub.shutdown()
            await peer.shutdown()
            throw error
        }
        await hub.shutdown()
        await peer.shutdown()
    }
}
