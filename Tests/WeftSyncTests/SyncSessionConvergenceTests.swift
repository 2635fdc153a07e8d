import Testing
import WeftCore
@testable import WeftSync

@Suite struct SyncSessionConvergenceTests {
    /// Writes `count` random ops at `node`.
    func writeRandom(_ harness: inout Harness, node: Int, count: Int, seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        for _ in 0..<count {
            let (kind, path) = RandomWrites.kind(using: &generator)
            harness.write(node: node, kind, at: path)
        }
    }

    func expectConverged(_ harness: Harness, _ nodes: [Int]) {
        for node in nodes.dropFirst() {
            #expect(harness.logs[node].versionVector == harness.logs[nodes[0]].versionVector)
            #expect(StateDigest(of: harness.state(node)) == StateDigest(of: harness.state(nodes[0])))
        }
    }

    @Test func twoReplicasWithDisjointOpsConverge() {
        var harness = Harness(nodeCount: 2)
        writeRandom(&harness, node: 0, count: 120, seed: 1)
        writeRandom(&harness, node: 1, count: 80, seed: 2)
        harness.connect(0, 1)
        harness.run()
        expectConverged(harness, [0, 1])
        #expect(harness.logs[0].versionVector.total == 200)
        #expect(!harness.state(0).isNull)
    }

    @Test func opsSentAsKeptBytesAreTheBytesASessionEncodes() {
        var streams: [[Message]] = []
        var byteCounts: [[Int]] = []
        for keepsBytes in [false, true] {
            var harness = Harness(nodeCount: 2)
            harness.logs[0].keepsBytes = keepsBytes
            harness.logs[1].keepsBytes = keepsBytes
            writeRandom(&harness, node: 0, count: 150, seed: 11)
            writeRandom(&harness, node: 1, count: 90, seed: 12)
            harness.connect(0, 1) { configuration, _ in configuration.batchOpsMax = 16 }
            harness.run()
            expectConverged(harness, [0, 1])
            #expect(harness.logs[0].versionVector.total == 240)
            streams.append(harness.endpoints.flatMap(\.messagesSent))
            byteCounts.append(harness.endpoints.map(\.bytesSent))
        }
        #expect(streams[0] == streams[1])
        #expect(byteCounts[0] == byteCounts[1])
        #expect(streams[1].contains { if case .ops = $0 { true } else { false } })
    }

    @Test(arguments: [UInt64(5), 6, 7])
    func replicasConvergeWhateverTheChunkingOfTheBytes(seed: UInt64) {
        var harness = Harness(nodeCount: 2, seed: seed)
        harness.chunkBytes = nil
        writeRandom(&harness, node: 0, count: 60, seed: seed)
        writeRandom(&harness, node: 1, count: 60, seed: seed + 100)
        harness.connect(1, 0)
        harness.run()
        expectConverged(harness, [0, 1])
    }

    @Test func eachOriginIsSentInSequenceOrderWithoutDuplicates() {
        var harness = Harness(nodeCount: 2)
        writeRandom(&harness, node: 0, count: 300, seed: 3)
        harness.connect(0, 1) { configuration, _ in configuration.batchOpsMax = 7 }
        harness.run()
        let sequences = harness.opsSent(by: 0).map(\.sequence)
        #expect(sequences == Array(1...300))
        #expect(harness.opsSent(by: 1).isEmpty)
    }

    @Test func batchesRespectTheirCountAndByteLimits() {
        var harness = Harness(nodeCount: 2)
        for index in 0..<200 {
            harness.write(node: 0, .set(.string(String(repeating: "x", count: 100))), at: "/k\(index)")
        }
        harness.connect(0, 1) { configuration, _ in
            configuration.batchOpsMax = 50
            configuration.batchBytesMax = 1000
        }
        harness.run()
        let batches = harness.endpoints[0].messagesSent.compactMap { message -> [Op]? in
            if case .ops(let ops) = message { return ops.ops }
            return nil
        }
        #expect(batches.count > 1)
        for (index, batch) in batches.enumerated() {
            #expect(batch.count <= 50)
            let payload = batch.map { OpCodec.encode($0).count }
            #expect(payload.dropLast().reduce(0, +) < 1000, "the op crossing the budget is the batch's last")
            if index < batches.count - 1 {
                #expect(payload.reduce(0, +) >= 1000 || batch.count == 50, "batches are full")
            }
        }
        expectConverged(harness, [0, 1])
    }

    @Test func opsOfAThirdReplicaAreRelayedThroughAMiddleNode() {
        var harness = Harness(nodeCount: 3)
        writeRandom(&harness, node: 0, count: 40, seed: 10)
        writeRandom(&harness, node: 2, count: 40, seed: 11)
        harness.connect(0, 1)
        harness.connect(1, 2)
        harness.run()
        expectConverged(harness, [0, 1, 2])
        let fromNode1To2 = harness.opsSent(by: 2)
        #expect(fromNode1To2.contains { $0.origin == Harness.replica(0) })
        #expect(!harness.opsSent(by: 2).contains { $0.origin == Harness.replica(2) })
    }

    @Test func aMeshOfFourConvergesWithoutSendingAnOpTwiceOnALink() {
        var harness = Harness(nodeCount: 4, seed: 12)
        for node in 0..<4 { writeRandom(&harness, node: node, count: 25, seed: 20 + UInt64(node)) }
        harness.connect(0, 1)
        harness.connect(1, 2)
        harness.connect(2, 3)
        harness.connect(3, 0)
        harness.run()
        expectConverged(harness, [0, 1, 2, 3])
        for endpoint in harness.endpoints.indices {
            let stamps = harness.opsSent(by: endpoint).map(\.stamp)
            #expect(Set(stamps).count == stamps.count)
        }
    }

    @Test func newLocalOpsStreamLiveOnceConnected() {
        var harness = Harness(nodeCount: 3)
        harness.connect(0, 1)
        harness.connect(2, 1)
        harness.run()
        let op = harness.write(node: 0, .set(.string("live")), at: "/news")
        harness.run()
        #expect(harness.state(2).value(at: try! Path("/news")) == .string("live"))
        #expect(harness.logs[2].versionVector[op.origin] == op.sequence)
        harness.write(node: 2, .increment(by: .int(2), from: .int(0)), at: "/n")
        harness.run()
        expectConverged(harness, [0, 1, 2])
    }

    @Test func liveOpsAreNotEchoedBackToTheReplicaTheyCameFrom() {
        var harness = Harness(nodeCount: 3)
        harness.connect(0, 1)
        harness.connect(1, 2)
        harness.run()
        writeRandom(&harness, node: 0, count: 30, seed: 50)
        harness.run()
        writeRandom(&harness, node: 2, count: 30, seed: 51)
        harness.run()
        expectConverged(harness, [0, 1, 2])
        #expect(!harness.opsSent(by: 1).contains { $0.origin == Harness.replica(0) })
        #expect(!harness.opsSent(by: 3).contains { $0.origin == Harness.replica(1) || $0.origin == Harness.replica(0) })
        #expect(harness.opsSent(by: 1).count == 30)
    }

    @Test(arguments: [UInt64(61), 62, 63, 64, 65, 66])
    func aFullMeshConvergesUnderLiveWritesInAnyDeliveryOrder(seed: UInt64) {
        var harness = Harness(nodeCount: 3, seed: seed)
        harness.chunkBytes = nil
        harness.connect(0, 1)
        harness.connect(1, 2)
        harness.connect(2, 0)
        harness.run()
        var generator = SeededGenerator(seed: seed)
        for _ in 0..<150 {
            let node = Int(generator.below(3))
            let (kind, path) = RandomWrites.kind(using: &generator)
            harness.write(node: node, kind, at: path)
            for _ in 0..<generator.below(4) {
                if let endpoint = harness.nextBusyEndpoint() { harness.deliver(to: endpoint) }
            }
        }
        harness.run()
        for endpoint in harness.endpoints.indices {
            #expect(harness.endpoints[endpoint].session.closeError == nil)
        }
        expectConverged(harness, [0, 1, 2])
        #expect(harness.logs[0].versionVector.total == 150)
    }

    @Test(arguments: (70 as UInt64)..<(82 as UInt64))
    func aMeshWithLinksCutAndRedialledConvergesOnceHealed(seed: UInt64) {
        var harness = Harness(nodeCount: 4, seed: seed)
        harness.chunkBytes = nil
        let pairs = [(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)]
        var links = pairs.map { pair in
            harness.connect(pair.0, pair.1) { configuration, _ in
                configuration.batchOpsMax = 5
                configuration.windowBytes = 2048
            }
        }
        var generator = SeededGenerator(seed: seed)
        for _ in 0..<200 {
            switch generator.below(10) {
            case 0:
                let index = Int(generator.below(UInt64(links.count)))
                harness.cut(links[index])
                let pair = pairs[index]
                links[index] = harness.connect(pair.0, pair.1)
            case 1...4:
                let (kind, path) = RandomWrites.kind(using: &generator)
                harness.write(node: Int(generator.below(4)), kind, at: path)
            default:
                for _ in 0..<generator.below(6) {
                    if let endpoint = harness.nextBusyEndpoint() { harness.deliver(to: endpoint) }
                }
            }
        }
        harness.run()
        for link in links {
            #expect(harness.endpoints[link].session.phase == .connected)
            #expect(harness.endpoints[link + 1].session.phase == .connected)
        }
        for endpoint in harness.endpoints.indices {
            let error = harness.endpoints[endpoint].session.closeError
            #expect(
                error == nil || error?.code == .connectionLost, "endpoint \(endpoint): \(String(describing: error))")
        }
        expectConverged(harness, [0, 1, 2, 3])
    }

    @Test func aPeerMayContinueAnOriginFromTheOpsThisSideRelayedToIt() {
        // Node 0 relays ops of node 3 to node 1; node 1 then learns the next op of node 3 elsewhere
        // and sends it to node 0, continuing from what node 0 sent it.
        var third = MemoryOpLog(replica: Harness.replica(3))
        for index in 0..<6 { try! third.write(.set(.int(Int64(index))), at: "/c") }
        var pair = ConnectedPair()
        _ = pair.handshake()
        pair.initiatorLog.apply(Array(third.allOps.filter { $0.sequence <= 5 }))
        let relayed = pair.initiator.onLocalOpsAppended(source: pair.initiatorLog, now: 1)
        // The ops, then an ack of the log's move (it holds them durably now).
        #expect(relayed.messagesSent.map(\.type) == [.ops, .ack])
        let received = pair.acceptor.onBytesReceived(relayed.bytesSent, source: pair.acceptorLog, now: 2)
        pair.acceptorLog.apply(received.opsToApply)
        let acked = pair.acceptor.onLocalOpsAppended(source: pair.acceptorLog, now: 3)
        _ = pair.initiator.onBytesReceived(acked.bytesSent, source: pair.initiatorLog, now: 4)
        pair.acceptorLog.apply(third.allOps)
        let onward = pair.acceptor.onLocalOpsAppended(source: pair.acceptorLog, now: 5)
        #expect(onward.messagesSent.map(\.type) == [.ops, .ack])
        let last = pair.initiator.onBytesReceived(onward.bytesSent, source: pair.initiatorLog, now: 6)
        #expect(last.errorSent == nil)
        #expect(last.opsToApply.map(\.sequence) == [6])
    }

    @Test func acknowledgementsReachTheSenderAndTheStatusShowsNothingBehind() {
        var harness = Harness(nodeCount: 2)
        writeRandom(&harness, node: 0, count: 50, seed: 30)
        harness.connect(0, 1)
        harness.run()
        #expect(harness.endpoints[0].acknowledgements.first == Acknowledgement(versionVector: VersionVector()))
        let acknowledged = harness.endpoints[0].acknowledgements.last?.versionVector
        #expect(acknowledged?[Harness.replica(0)] == 50)
        #expect(harness.endpoints[0].session.peerAcknowledged == harness.logs[0].versionVector)
        #expect(harness.endpoints[0].statuses.last?.opsBehind == 0)
        #expect(harness.endpoints[0].statuses.contains { $0.opsBehind == 50 })
        #expect(harness.endpoints[0].session.unacknowledgedBytes == 0)
    }

    @Test func aDroppedSessionResumesFromVersionVectors() {
        var harness = Harness(nodeCount: 2)
        writeRandom(&harness, node: 0, count: 400, seed: 40)
        let first = harness.connect(0, 1) { configuration, _ in
            configuration.batchOpsMax = 20
            configuration.windowBytes = 4096
        }
        for _ in 0..<6 { if let endpoint = harness.nextBusyEndpoint() { harness.deliver(to: endpoint) } }
        harness.cut(first)
        let had = harness.logs[1].versionVector[Harness.replica(0)]
        #expect(had < 400)
        let second = harness.connect(0, 1)
        harness.run()
        expectConverged(harness, [0, 1])
        let resent = harness.opsSent(by: second).map(\.sequence)
        #expect(resent.first == had + 1)
        #expect(resent.count == 400 - Int(had))
        #expect(harness.endpoints[first].session.closeError?.code == .connectionLost)
    }

    @Test func theOwnerClosesOnClockDriftWithAnErrorFrameThePeerReads() {
        var harness = Harness(nodeCount: 2)
        harness.write(node: 0, .set(.int(1)), at: "/a")
        harness.connect(0, 1)
        harness.run()
        let drift = SyncError(.clockDrift, "a remote stamp is 90000 ms ahead of the local clock")
        harness.perform(harness.endpoints[1].session.onClose(error: drift, now: harness.now), at: 1)
        harness.run()
        #expect(harness.endpoints[1].session.closeError == drift)
        #expect(harness.endpoints[0].session.closeError == SyncError(.clockDrift, drift.message, raisedByPeer: true))
        #expect(harness.endpoints[0].statuses.last?.phase == .closed)
    }
}
