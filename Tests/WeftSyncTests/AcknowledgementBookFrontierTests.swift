import Testing
import WeftCore
@testable import WeftSync

@Suite struct AcknowledgementBookFrontierTests {
    let me = Harness.replica(0)
    let hub = Harness.replica(1)
    let peerA = Harness.replica(2)
    let peerB = Harness.replica(3)

    func ack(_ entries: [ReplicaID: UInt64], stable: [ReplicaID: UInt64] = [:]) -> Acknowledgement {
        Acknowledgement(versionVector: VersionVector(entries), stableFrontier: VersionVector(stable))
    }

    @Test func theStableFrontierIsTheMinimumOverEveryMember() {
        var book = AcknowledgementBook(local: me, members: [me, peerA, peerB])
        let local = VersionVector([me: 10, peerA: 4])
        book.record(ack([me: 7, peerA: 4]), from: peerA)
        book.record(ack([me: 5, peerA: 9]), from: peerB)
        #expect(book.stableFrontier(local: local) == VersionVector([me: 5, peerA: 4]))
    }

    @Test func aMemberThatNeverAcknowledgedHoldsTheFrontierBack() {
        var book = AcknowledgementBook(local: me, members: [me, peerA, peerB])
        book.record(ack([me: 7]), from: peerA)
        #expect(book.stableFrontier(local: VersionVector([me: 10])) == VersionVector())
        book.removeMember(peerB)
        #expect(book.stableFrontier(local: VersionVector([me: 10])) == VersionVector([me: 7]))
    }

    @Test func aReplicaThatKnowsNoOtherMemberHasNothingStable() {
        // Offline first: a replica writing before it ever met its group cannot call its ops stable (they
        // would count as acknowledged, and a snapshot install could not stamp them again).
        var book = AcknowledgementBook(local: me, members: [me])
        #expect(book.stableFrontier(local: VersionVector([me: 51])) == VersionVector())
        #expect(book.level(origin: me, sequence: 1, local: VersionVector([me: 51])) == .unacknowledged)
        book.addMember(hub)
        #expect(book.stableFrontier(local: VersionVector([me: 51])) == VersionVector())
        book.record(ack([me: 51]), from: hub)
        #expect(book.stableFrontier(local: VersionVector([me: 51])) == VersionVector([me: 51]))
    }

    @Test func acknowledgementsOnlyGrow() {
        var book = AcknowledgementBook(local: me, members: [me, peerA])
        book.record(ack([me: 7]), from: peerA)
        book.record(ack([me: 3]), from: peerA)
        #expect(book.acknowledged[peerA] == VersionVector([me: 7]))
    }

    @Test func aHubsAcknowledgementAloneMakesAnOpAcknowledged() {
        var book = AcknowledgementBook(local: me, members: [me, hub, peerA], hubs: [hub])
        let local = VersionVector([me: 10])
        #expect(book.level(origin: me, sequence: 3, local: local) == .unacknowledged)
        book.record(ack([me: 5]), from: hub)
        #expect(book.level(origin: me, sequence: 3, local: local) == .acknowledged)
        #expect(book.level(origin: me, sequence: 6, local: local) == .unacknowledged)
        // Every member this replica knows holds it, but a replica with a hub takes stability from the
        // hub alone: the hub may have members this one never heard of.
        book.record(ack([me: 4]), from: peerA)
        #expect(book.level(origin: me, sequence: 3, local: local) == .acknowledged)
        book.record(ack([me: 5], stable: [me: 4]), from: hub)
        #expect(book.level(origin: me, sequence: 3, local: local) == .stable)
        #expect(book.level(origin: me, sequence: 5, local: local) == .acknowledged)
    }

    @Test func withoutAHubTheRequiredNumberOfPeersMustAcknowledge() {
        var book = AcknowledgementBook(local: me, members: [me, peerA, peerB, hub], peersRequired: 2)
        let local = VersionVector([me: 10])
        book.record(ack([me: 5]), from: peerA)
        #expect(book.level(origin: me, sequence: 5, local: local) == .unacknowledged)
        book.record(ack([me: 5]), from: peerB)
        #expect(book.level(origin: me, sequence: 5, local: local) == .acknowledged)
        #expect(book.acknowledgers(origin: me, sequence: 5) == [peerA, peerB])
    }

    @Test func aLeafLearnsTheStableFrontierFromItsHub() {
        var book = AcknowledgementBook(local: me, members: [me, hub, peerA], hubs: [hub])
        book.record(ack([me: 8, peerA: 3], stable: [me: 6, peerA: 2]), from: hub)
        #expect(book.stableFrontier(local: VersionVector([me: 8, peerA: 3])) == VersionVector([me: 6, peerA: 2]))
        #expect(book.level(origin: peerA, sequence: 2, local: VersionVector([me: 8, peerA: 3])) == .stable)
    }

    /// A hub hears from every member itself: a leaf's announced frontier (made from the hub's own acks,
    /// by a leaf that does not know every member) raises nothing, and a member that has not acked still
    /// holds the frontier back. An announcement that came before the sender became a hub counts once it
    /// is one.
    @Test func onlyAHubsAnnouncedFrontierRaisesTheStableFrontier() {
        var book = AcknowledgementBook(local: me, members: [me, peerA, peerB])
        let local = VersionVector([me: 10])
        book.record(ack([me: 10], stable: [me: 10]), from: peerA)
        #expect(book.stableFrontier(local: local) == VersionVector())
        book.record(ack([me: 4]), from: peerB)
        #expect(book.stableFrontier(local: local) == VersionVector([me: 4]))
        book.record(ack([me: 10], stable: [me: 8]), from: hub)
        #expect(book.stableFrontier(local: local) == VersionVector([me: 4]))
        book.addHub(hub)
        #expect(book.stableFrontier(local: local) == VersionVector([me: 8]))
    }
}

@Suite struct AcknowledgementBookLevelTests {
    let me = Harness.replica(0)
    let hub = Harness.replica(1)
    let peerA = Harness.replica(2)
    let peerB = Harness.replica(3)

    @Test func acknowledgedThroughFollowsAHubOrTheRequiredNumberOfPeers() {
        var book = AcknowledgementBook(local: me, members: [me], peersRequired: 2)
        #expect(book.acknowledgedThrough(origin: me) == 0)
        book.record(Acknowledgement(versionVector: VersionVector([me: 9])), from: peerA)
        #expect(book.acknowledgedThrough(origin: me) == 0)
        book.record(Acknowledgement(versionVector: VersionVector([me: 4])), from: peerB)
        #expect(book.acknowledgedThrough(origin: me) == 4)
        book.addHub(hub)
        book.record(Acknowledgement(versionVector: VersionVector([me: 6])), from: hub)
        #expect(book.acknowledgedThrough(origin: me) == 6)
        #expect(book.members == [me, hub])
    }

    @Test func knownRaisesTheLocalVectorByEveryAcknowledgement() {
        var book = AcknowledgementBook(local: me, members: [me, peerA])
        book.record(Acknowledgement(versionVector: VersionVector([me: 2, peerB: 7])), from: peerA)
        #expect(book.known(local: VersionVector([me: 5])) == VersionVector([me: 5, peerB: 7]))
    }

    @Test func anAnnouncedFrontierNeverExceedsTheLocalLog() {
        var book = AcknowledgementBook(local: me, members: [me, hub], hubs: [hub])
        book.record(
            Acknowledgement(versionVector: VersionVector([me: 3]), stableFrontier: VersionVector([me: 3, peerA: 8])),
            from: hub)
        #expect(book.stableFrontier(local: VersionVector([me: 3, peerA: 5])) == VersionVector([me: 3, peerA: 5]))
    }

    /// A leaf compacts no further than its hub announced it compacted; a hub, or a peer of a mesh,
    /// compacts freely.
    @Test func aLeafsCompactionIsCappedByItsHubsAnnouncedStamp() {
        let early = Stamp(millis: 1_000, counter: 0, replica: hub)
        let late = Stamp(millis: 2_000, counter: 0, replica: hub)
        #expect(AcknowledgementBook(local: me, members: [me, peerA]).compactionCap == .unlimited)
        #expect(AcknowledgementBook(local: hub, members: [hub, me], hubs: [hub]).compactionCap == .unlimited)
        var leaf = AcknowledgementBook(local: me, members: [me, hub], hubs: [hub])
        #expect(leaf.compactionCap == .nothing, "the hub has not compacted yet")
        leaf.record(Acknowledgement(versionVector: VersionVector(), compactionStamp: late), from: hub)
        #expect(leaf.compactionCap == .upTo(late))
        leaf.record(Acknowledgement(versionVector: VersionVector(), compactionStamp: early), from: hub)
        #expect(leaf.compactionCap == .upTo(late), "announcements only grow")
        leaf.record(Acknowledgement(versionVector: VersionVector(), compactionStamp: late), from: peerA)
        leaf.addHub(peerA)
        leaf.record(Acknowledgement(versionVector: VersionVector(), compactionStamp: early), from: peerA)
        #expect(leaf.compactionCap == .upTo(late), "the least of its hubs: peerA announced late first")
        #expect(CompactionCap.upTo(early).capping(late) == early)
        #expect(CompactionCap.nothing.capping(late) == nil)
        #expect(CompactionCap.unlimited.capping(late) == late)
    }
}
