import Testing
import WeftCore
@testable import WeftSync

@Suite struct SyncSessionSnapshotTests {
    let origin = Harness.replica(0)

    func writeItems(_ harness: inout Harness, node: Int, count: Int, prefix: String = "item", distinct: Int = 40) {
        for index in 0..<count {
            let value = Value.string("value \(index) " + String(repeating: "z", count: index % 7))
            harness.write(node: node, .set(value), at: "/\(prefix)/k\(index % distinct)")
        }
    }

    func types(_ harness: Harness, _ endpoint: Int) -> [MessageType] {
        harness.endpoints[endpoint].messagesSent.map(\.type)
    }

    @Test func aPeerBehindTheCompactionFrontierGetsASnapshotThenTheTail() {
        var harness = Harness(nodeCount: 2)
        writeItems(&harness, node: 0, count: 100)
        harness.logs[0].compact(upTo: VersionVector([origin: 60]))
        harness.connect(0, 1)
        harness.run()
        #expect(StateDigest(of: harness.state(1)) == StateDigest(of: harness.state(0)))
        #expect(harness.logs[1].versionVector == harness.logs[0].versionVector)
        #expect(harness.logs[1].compactionFrontier == VersionVector([origin: 60]))
        let sent = types(harness, 0)
        let begin = sent.firstIndex(of: .snapshotBegin)!
        let end = sent.firstIndex(of: .snapshotEnd)!
        let firstOps = sent.firstIndex(of: .ops)!
        #expect(begin < end && end < firstOps)
        #expect(harness.opsSent(by: 0).map(\.sequence) == Array(61...100))
        #expect(types(harness, 1).contains(.snapshotAck))
    }

    @Test func aLargeSnapshotFlowsInSmallChunksUnderTheWindow() {
        var harness = Harness(nodeCount: 2)
        writeItems(&harness, node: 0, count: 300, prefix: "big", distinct: 300)
        harness.logs[0].compact(upTo: harness.logs[0].versionVector)
        harness.connect(0, 1) { configuration, _ in
            configuration.snapshotChunkBytes = 64
            configuration.windowBytes = SyncLimits.windowBytesMin
        }
        var peakUnacknowledged = 0
        while let endpoint = harness.nextBusyEndpoint() {
            harness.deliver(to: endpoint)
            peakUnacknowledged = max(peakUnacknowledged, harness.endpoints[0].session.unacknowledgedBytes)
        }
        #expect(StateDigest(of: harness.state(1)) == StateDigest(of: harness.state(0)))
        #expect(types(harness, 0).filter { $0 == .snapshotChunk }.count > 30)
        #expect(peakUnacknowledged <= SyncLimits.windowBytesMin + 256)
        #expect(harness.opsSent(by: 0).isEmpty)
    }

    @Test func aPeerAheadOfTheFrontierGetsNoSnapshot() {
        var harness = Harness(nodeCount: 2)
        writeItems(&harness, node: 0, count: 50)
        let first = harness.connect(0, 1)
        harness.run()
        harness.cut(first)
        harness.logs[0].compact(upTo: VersionVector([origin: 50]))
        writeItems(&harness, node: 0, count: 10, prefix: "later")
        let second = harness.connect(0, 1)
        harness.run()
        #expect(!types(harness, second).contains(.snapshotBegin))
        #expect(harness.opsSent(by: second).map(\.sequence) == Array(51...60))
        #expect(StateDigest(of: harness.state(1)) == StateDigest(of: harness.state(0)))
    }

    @Test func aReceiverKeepsItsOwnOpsAboveTheSnapshotAndSendsThemBack() {
        var harness = Harness(nodeCount: 2)
        writeItems(&harness, node: 0, count: 30)
        harness.logs[0].compact(upTo: harness.logs[0].versionVector)
        writeItems(&harness, node: 1, count: 12, prefix: "mine")
        harness.connect(1, 0)
        harness.run()
        #expect(harness.logs[1].versionVector[Harness.replica(1)] == 12)
        #expect(harness.logs[0].versionVector[Harness.replica(1)] == 12)
        #expect(StateDigest(of: harness.state(1)) == StateDigest(of: harness.state(0)))
        #expect(types(harness, 1).contains(.snapshotBegin))
    }

    @Test func aCompactionBeyondThePeersCursorMidSessionSendsASnapshot() {
        var third = MemoryOpLog(replica: Harness.replica(3))
        for index in 0..<10 { try! third.write(.set(.int(Int64(index))), at: "/c/k\(index % 3)") }
        var pair = ConnectedPair()
        _ = pair.handshake()
        pair.initiatorLog.apply(third.allOps)
        pair.acceptorLog.apply(third.allOps)
        pair.initiatorLog.compact(upTo: pair.initiatorLog.versionVector)
        let sent = pair.initiator.onLocalOpsAppended(source: pair.initiatorLog, now: 1)
        // The snapshot, then an ack of the log's move: the acceptor learns the initiator holds the ops.
        #expect(sent.messagesSent.map(\.type) == [.snapshotBegin, .snapshotChunk, .snapshotEnd, .ack])
        let received = pair.acceptor.onBytesReceived(sent.bytesSent, source: pair.acceptorLog, now: 2)
        guard
            case .installSnapshot(let snapshot, _) = received.first(where: {
                if case .installSnapshot = $0 { true } else { false }
            })
        else {
            Issue.record("no snapshot to install")
            return
        }
        pair.acceptorLog.install(snapshot)
        #expect(StateDigest(of: pair.acceptorLog.state) == StateDigest(of: pair.initiatorLog.state))
        // The initiator's ack told the acceptor it holds the third replica's ops: none is offered back
        // (before durable moves were acked, they were offered, and acked without merging).
        #expect(received.messagesSent == [.snapshotAck(chunkCount: 1)])
        let back = pair.initiator.onBytesReceived(received.bytesSent, source: pair.initiatorLog, now: 3)
        #expect(back.opsToApply.isEmpty)
        #expect(back.messagesSent.isEmpty)
        #expect(pair.initiator.unacknowledgedBytes == 0)
    }

    @Test func anEmptyCompactedStateIsAnEmptySnapshot() {
        var harness = Harness(nodeCount: 2)
        harness.write(node: 0, .set(.int(1)), at: "/gone")
        harness.write(node: 0, .set(.null), at: "/gone")
        harness.logs[0].compact(upTo: harness.logs[0].versionVector)
        harness.connect(0, 1)
        harness.run()
        #expect(!types(harness, 0).contains(.snapshotChunk))
        #expect(types(harness, 0).contains(.snapshotEnd))
        #expect(harness.logs[1].versionVector == harness.logs[0].versionVector)
        #expect(harness.state(1) == .null)
    }

    // MARK: - Refusals

    func readyAcceptor() -> ConnectedPair {
        var pair = ConnectedPair()
        _ = pair.handshake()
        return pair
    }

    func feed(_ pair: inout ConnectedPair, _ messages: [Message]) -> [SyncAction] {
        pair.acceptor.onBytesReceived(messages.flatMap(MessageCodec.encode), source: pair.acceptorLog, now: 1)
    }

    var entry: SnapshotEntry { SnapshotEntry(path: try! Path("/a"), value: .string("x")) }

    var begin: SnapshotBegin {
        SnapshotBegin(
            frontier: VersionVector([origin: 3]), entryCount: 1, byteCount: UInt64(SnapshotChunker.byteCount(of: entry))
        )
    }

    @Test func aSnapshotMatchingItsDigestIsHandedToTheOwner() {
        var pair = readyAcceptor()
        let digest = StateDigest(of: try! Value(json: #"{"a":"x"}"#))
        let actions = feed(&pair, [.snapshotBegin(begin), .snapshotChunk([entry]), .snapshotEnd(digest)])
        let expected = SyncSnapshot(value: try! Value(json: #"{"a":"x"}"#), frontier: VersionVector([origin: 3]))
        #expect(actions.contains(.installSnapshot(expected, from: origin)))
        #expect(actions.messagesSent == [.snapshotAck(chunkCount: 1)])
    }

    /// The compaction stamp and the touches, announced by the begin and carried after the last entry
    /// (in frames of their own, each acknowledged like a chunk), reach the owner with the state.
    @Test func theCompactionStampAndTouchesComeWithTheSnapshot() {
        var pair = readyAcceptor()
        let stamp = Stamp(millis: 1_700_000_000_000, counter: 3, replica: origin)
        let touches = [
            CompactedTouch(path: try! Path("/a"), origin: origin, sequence: 3),
            CompactedTouch(path: .root, origin: origin, sequence: 1),
        ]
        var announced = begin
        announced.stampFrontier = stamp
        announced.touchCount = 2
        let digest = StateDigest(of: try! Value(json: #"{"a":"x"}"#))
        let actions = feed(
            &pair,
            [
                .snapshotBegin(announced), .snapshotChunk([entry]), .snapshotTouches([touches[0]]),
                .snapshotTouches([touches[1]]), .snapshotEnd(digest),
            ])
        let expected = SyncSnapshot(
            value: try! Value(json: #"{"a":"x"}"#), frontier: VersionVector([origin: 3]), stampFrontier: stamp,
            touches: touches)
        #expect(actions.contains(.installSnapshot(expected, from: origin)))
        #expect(
            actions.messagesSent == [
                .snapshotAck(chunkCount: 1), .snapshotAck(chunkCount: 2), .snapshotAck(chunkCount: 3),
            ])
    }

    @Test func touchesBeforeTheLastEntryOrBeyondTheAnnouncedCountAreRefused() {
        let touch = CompactedTouch(path: try! Path("/a"), origin: origin, sequence: 3)
        var announced = begin
        announced.touchCount = 1
        var early = readyAcceptor()
        #expect(
            feed(&early, [.snapshotBegin(announced), .snapshotTouches([touch])]).errorSent?.code == .snapshotMismatch)
        var surplus = readyAcceptor()
        let actions = feed(
            &surplus, [.snapshotBegin(announced), .snapshotChunk([entry]), .snapshotTouches([touch, touch])])
        #expect(actions.errorSent?.code == .snapshotMismatch)
        var missing = readyAcceptor()
        let ended = feed(
            &missing,
            [
                .snapshotBegin(announced), .snapshotChunk([entry]),
                .snapshotEnd(StateDigest(of: try! Value(json: #"{"a":"x"}"#))),
            ])
        #expect(ended.errorSent?.code == .snapshotMismatch)
        var outside = readyAcceptor()
        #expect(feed(&outside, [.snapshotTouches([touch])]).errorSent?.code == .protocolViolation)
    }

    @Test func aSnapshotWithTheWrongDigestIsRefused() {
        var pair = readyAcceptor()
        let actions = feed(
            &pair, [.snapshotBegin(begin), .snapshotChunk([entry]), .snapshotEnd(StateDigest(rawValue: 1))])
        #expect(actions.errorSent?.code == .snapshotMismatch)
        #expect(!actions.contains { if case .installSnapshot = $0 { return true } else { return false } })
    }

    @Test func aSnapshotCarryingMoreThanItAnnouncedIsRefused() {
        var pair = readyAcceptor()
        let actions = feed(&pair, [.snapshotBegin(begin), .snapshotChunk([entry, entry])])
        #expect(actions.errorSent?.code == .snapshotMismatch)
    }

    @Test func aSnapshotEndingEarlyIsRefused() {
        var pair = readyAcceptor()
        var announced = begin
        announced.entryCount = 2
        let actions = feed(
            &pair, [.snapshotBegin(announced), .snapshotChunk([entry]), .snapshotEnd(StateDigest(of: .null))])
        #expect(actions.errorSent?.code == .snapshotMismatch)
        #expect(actions.errorSent?.message.contains("after 1 of 2 entries") == true)
    }

    @Test func aSnapshotBeyondTheLimitsIsRefusedBeforeAnyChunk() {
        var pair = readyAcceptor()
        var huge = begin
        huge.byteCount = SyncLimits.snapshotBytesMax + 1
        #expect(feed(&pair, [.snapshotBegin(huge)]).errorSent?.code == .limitExceeded)
    }

    @Test func aChunkOutsideASnapshotIsAProtocolViolation() {
        var pair = readyAcceptor()
        #expect(feed(&pair, [.snapshotChunk([entry])]).errorSent?.code == .protocolViolation)
    }

    @Test func opsInTheMiddleOfASnapshotAreAProtocolViolation() {
        var pair = readyAcceptor()
        let actions = feed(&pair, [.snapshotBegin(begin), .ops([Samples.ops[0]])])
        #expect(actions.errorSent?.code == .protocolViolation)
        #expect(actions.errorSent?.message == "ops arrived in the middle of a snapshot")
    }

    @Test func aSnapshotAckBeyondTheChunksSentIsAProtocolViolation() {
        var pair = readyAcceptor()
        #expect(feed(&pair, [.snapshotAck(chunkCount: 1)]).errorSent?.code == .protocolViolation)
    }
}
