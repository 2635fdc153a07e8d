import Testing
import WeftCore

@testable import WeftSync

/// What a peer's acks (and its hello, the first of them) claim to hold of this replica's own ops is counted no further than this
/// replica wrote: a peer that claimed a million of them made every write to come acknowledged, and
/// stable, before anyone held it.
@Suite struct SyncSessionAcknowledgementTests {
    func recorded(_ actions: [SyncAction]) -> [VersionVector] {
        actions.compactMap { action in
            if case .recordAcknowledgement(let acknowledgement, _) = action { return acknowledgement.versionVector }
            return nil
        }
    }

    @Test func anAckClaimingMoreOfOurOwnOpsThanWeWroteIsCountedAsWhatWeWrote() {
        var harness = Harness(nodeCount: 2)
        _ = harness.write(node: 0, .set(.int(1)), at: "/a")
        harness.connect(0, 1)
        harness.run()
        let me = Harness.replica(0)
        let third = Harness.replica(7)
        let lie = Acknowledgement(versionVector: VersionVector([me: 1_000_000, third: 40]))
        let actions = harness.endpoints[0].session.onBytesReceived(
            MessageCodec.encode(.ack(lie)), source: harness.logs[0], now: harness.now)
        // Our own origin is capped at what we wrote; another origin's claim stays (it may hold more than we
        // do, and knowing those ops exist bounds our compaction).
        #expect(recorded(actions) == [VersionVector([me: 1, third: 40])])
    }
}
