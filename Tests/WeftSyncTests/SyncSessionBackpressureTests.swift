import Testing
import WeftCore
@testable import WeftSync

@Suite struct SyncSessionBackpressureTests {
    static func log(node: Int, ops count: Int) -> MemoryOpLog {
        var log = MemoryOpLog(replica: Harness.replica(node))
        for index in 0..<count { try! log.write(.set(.int(Int64(index))), at: "/items/i\(index % 50)") }
        return log
    }

    func opsFrameBytes(_ actions: [SyncAction]) -> Int {
        actions.messagesSent.reduce(0) { total, message in
            guard case .ops = message else { return total }
            return total + MessageCodec.encode(message).count
        }
    }

    @Test func theSenderStopsWhenTheWindowIsFullUntilAnAckFreesIt() {
        let window = SyncLimits.windowBytesMin
        var pair = ConnectedPair(initiatorLog: Self.log(node: 0, ops: 500)) { configuration, _ in
            configuration.windowBytes = window
            configuration.batchBytesMax = 200
        }
        var toAcceptor = pair.handshake().initiator
        let firstBurst = opsFrameBytes(toAcceptor)
        #expect(firstBurst >= window)
        #expect(firstBurst < window + 200 + 64)
        #expect(pair.initiator.unacknowledgedBytes == firstBurst)

        // The log did not move and no ack came: nothing more goes out.
        #expect(pair.initiator.onLocalOpsAppended(source: pair.initiatorLog, now: 1001).bytesSent.isEmpty)

        var rounds = 0
        while pair.acceptorLog.versionVector != pair.initiatorLog.versionVector {
            rounds += 1
            let received = pair.acceptor.onBytesReceived(toAcceptor.bytesSent, source: pair.acceptorLog, now: 1002)
            #expect(!received.messagesSent.contains { $0.type == .ack }, "nothing is acked before it is merged")
            pair.acceptorLog.apply(received.opsToApply)
            let acked = pair.acceptor.onLocalOpsAppended(source: pair.acceptorLog, now: 1003)
            #expect(acked.messagesSent.map(\.type) == [.ack])
            toAcceptor = pair.initiator.onBytesReceived(acked.bytesSent, source: pair.initiatorLog, now: 1004)
            #expect(pair.initiator.unacknowledgedBytes < window + 200 + 64)
            #expect(rounds < 100)
            if rounds >= 100 { break }
        }
        #expect(rounds > 5)
        #expect(StateDigest(of: pair.acceptorLog.state) == StateDigest(of: pair.initiatorLog.state))
    }

    @Test func theSenderStopsAtTheFrameLimitToo() {
        var pair = ConnectedPair(initiatorLog: Self.log(node: 0, ops: 50)) { configuration, _ in
            configuration.windowFramesMax = 3
            configuration.batchOpsMax = 2
        }
        let actions = pair.handshake().initiator
        let batches = actions.messagesSent.filter { $0.type == .ops }
        #expect(batches.count == 3)
    }

    @Test func theOpFramesOfOneReadBecomeOneBatchToApply() throws {
        var pair = ConnectedPair(initiatorLog: Self.log(node: 0, ops: 30)) { configuration, _ in
            configuration.batchOpsMax = 10
        }
        let sent = pair.handshake().initiator
        #expect(sent.messagesSent.filter { $0.type == .ops }.count == 3)
        var byFrame = pair.acceptor
        let together = pair.acceptor.onBytesReceived(sent.bytesSent, source: pair.acceptorLog, now: 1001)
        let batches = together.filter { if case .applyOps = $0 { return true } else { return false } }
        #expect(batches.count == 1)
        #expect(together.opsToApply.map(\.sequence) == Array(1...30))
        // Frame by frame, each read gives its own batch: the same ops in the same order.
        var frames = FrameDecoder()
        frames.append(sent.bytesSent)
        var separate: [Op] = []
        var separateBatches = 0
        while let frame = try frames.nextFrame() {
            let actions = byFrame.onBytesReceived(frame.encoded(), source: pair.acceptorLog, now: 1001)
            separateBatches += actions.filter { if case .applyOps = $0 { return true } else { return false } }.count
            separate += actions.opsToApply
        }
        #expect(separateBatches == 3)
        #expect(separate == together.opsToApply)
    }

    @Test func anAckThatCoversOnlyEarlyOpsReleasesOnlyTheirFrames() {
        var pair = ConnectedPair(initiatorLog: Self.log(node: 0, ops: 30)) { configuration, _ in
            configuration.batchOpsMax = 10
        }
        let sent = pair.handshake().initiator
        #expect(sent.messagesSent.filter { $0.type == .ops }.count == 3)
        let before = pair.initiator.unacknowledgedBytes
        let partial = Acknowledgement(versionVector: VersionVector([Harness.replica(0): 15]))
        let actions = pair.initiator.onBytesReceived(
            MessageCodec.encode(.ack(partial)), source: pair.initiatorLog, now: 1)
        #expect(actions.contains(.recordAcknowledgement(partial, from: Harness.replica(1))))
        let released = before - pair.initiator.unacknowledgedBytes
        #expect(released > 0)
        #expect(pair.initiator.unacknowledgedBytes > 0)
        #expect(pair.initiator.peerAcknowledged?[Harness.replica(0)] == 15)
    }

    @Test func aReceiverRefusesASenderThatIgnoresTheAdvertisedWindow() {
        let source = Self.log(node: 0, ops: 200)
        var pair = ConnectedPair { configuration, side in
            if side == .acceptor { configuration.windowBytes = SyncLimits.windowBytesMin }
        }
        _ = pair.handshake()
        // A rogue sender pushes batch after batch; the owner of the acceptor never merges them.
        var last: [SyncAction] = []
        for start in stride(from: 0, to: 200, by: 10) {
            let ops = source.ops(from: Harness.replica(0), after: UInt64(start), limit: 10, bytesMax: .max)
            last = pair.acceptor.onBytesReceived(
                MessageCodec.encode(.ops(EncodedOps(ops))), source: pair.acceptorLog, now: 1)
            if pair.acceptor.phase == .closed { break }
        }
        #expect(pair.acceptor.closeError?.code == .limitExceeded)
        #expect(last.errorSent?.code == .limitExceeded)
    }

    @Test func anOpAfterAGapIsAProtocolViolation() {
        let source = Self.log(node: 0, ops: 20)
        var pair = ConnectedPair()
        _ = pair.handshake()
        let ops = source.ops(from: Harness.replica(0), after: 5, limit: 3, bytesMax: .max)
        let actions = pair.acceptor.onBytesReceived(
            MessageCodec.encode(.ops(EncodedOps(ops))), source: pair.acceptorLog, now: 1)
        #expect(actions.errorSent?.code == .protocolViolation)
        #expect(actions.errorSent?.message.contains("after a gap") == true)
        #expect(actions.opsToApply.isEmpty)
    }

    /// A frame that names one op of an origin twice (as a repeat, or again in a later run of that
    /// origin) breaks the increasing order the protocol fixes: receivers would keep whichever body they
    /// met first.
    @Test(arguments: [[1, 2, 3, 2], [1, 2, 3, 3], [1, 2, 1]])
    func aFrameRepeatingAnOpOfAnOriginIsAProtocolViolation(sequences: [Int]) {
        let source = Self.log(node: 0, ops: 5)
        let all = source.ops(from: Harness.replica(0), after: 0, limit: 5, bytesMax: .max)
        var pair = ConnectedPair()
        _ = pair.handshake()
        let ops = sequences.map { all[$0 - 1] }
        let actions = pair.acceptor.onBytesReceived(
            MessageCodec.encode(.ops(EncodedOps(ops))), source: pair.acceptorLog, now: 1)
        #expect(actions.errorSent?.code == .protocolViolation)
        #expect(actions.errorSent?.message.contains("increasing") == true)
        #expect(actions.opsToApply.isEmpty)
    }

    @Test func aFrameRepeatingAnOriginInASecondRunOfHigherOpsIsAccepted() {
        var first = Self.log(node: 0, ops: 4).ops(from: Harness.replica(0), after: 0, limit: 4, bytesMax: .max)
        let other = Self.log(node: 2, ops: 2).ops(from: Harness.replica(2), after: 0, limit: 2, bytesMax: .max)
        let tail = first.suffix(2)
        first.removeLast(2)
        var pair = ConnectedPair()
        _ = pair.handshake()
        let actions = pair.acceptor.onBytesReceived(
            MessageCodec.encode(.ops(EncodedOps(first + other + tail))), source: pair.acceptorLog, now: 1)
        #expect(actions.errorSent == nil)
        #expect(actions.opsToApply.count == 6)
    }

    @Test func opsAlreadyInTheLocalLogAreNotHandedToTheOwnerButStillAcked() {
        let source = Self.log(node: 0, ops: 10)
        var acceptorLog = MemoryOpLog(replica: Harness.replica(1))
        acceptorLog.apply(source.allOps)
        var pair = ConnectedPair(acceptorLog: MemoryOpLog(replica: Harness.replica(1)))
        _ = pair.handshake()
        pair.acceptorLog = acceptorLog
        let ops = source.ops(from: Harness.replica(0), after: 0, limit: 10, bytesMax: .max)
        let actions = pair.acceptor.onBytesReceived(
            MessageCodec.encode(.ops(EncodedOps(ops))), source: pair.acceptorLog, now: 1)
        #expect(actions.opsToApply.isEmpty)
        #expect(actions.messagesSent.map(\.type) == [.ack])
    }
}

@Suite struct WindowLedgerReleaseTests {
    let a = Harness.replica(0)
    let b = Harness.replica(1)

    @Test func aVectorReleasesTheOpsFramesItCoversWhereverTheyStand() {
        var ledger = WindowLedger()
        ledger.add(.ops([.init(origin: a, sequence: 5)]), bytes: 100)
        ledger.add(.ops([.init(origin: a, sequence: 9), .init(origin: b, sequence: 2)]), bytes: 50)
        ledger.add(.ops([.init(origin: b, sequence: 1)]), bytes: 10)
        ledger.add(.snapshotChunk(0), bytes: 7)
        #expect(ledger.hasOps(coveredBy: VersionVector([b: 1])))
        #expect(ledger.release(coveredBy: VersionVector([a: 5, b: 1])) == 2)
        #expect(ledger.bytes == 57)
        #expect(!ledger.hasOps(coveredBy: VersionVector([a: 8, b: 9])))
        #expect(ledger.release(snapshotChunksBelow: 1) == 1)
        #expect(ledger.release(coveredBy: VersionVector([a: 9, b: 2])) == 1)
        #expect(ledger.bytes == 0)
        #expect(ledger.frameCount == 0)
    }
}
