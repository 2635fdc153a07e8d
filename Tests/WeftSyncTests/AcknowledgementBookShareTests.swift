import Testing
import WeftCore
@testable import WeftSync

/// A peer limited to a share acknowledges the projections it holds: a member for the stable frontier (its
/// next ops are stamped above what it acked), never an acknowledger (a placeholder is no copy of an op).
@Suite struct AcknowledgementBookShareTests {
    static let hub = ReplicaID(rawValue: 1)!
    static let whole = ReplicaID(rawValue: 2)!
    static let leaf = ReplicaID(rawValue: 3)!

    @Test func aLeafHoldsTheStableFrontierBackAndAcknowledgesNothing() {
        var book = AcknowledgementBook(local: Self.hub, members: [Self.hub, Self.whole])
        let local = VersionVector([Self.hub: 10, Self.leaf: 4])
        book.record(Acknowledgement(versionVector: local), from: Self.whole)
        #expect(book.stableFrontier(local: local) == local)
        // The leaf holds the hub's first 6 ops (their projections) and 7 of its own, 3 still on their way.
        book.recordShare(Acknowledgement(versionVector: VersionVector([Self.hub: 6, Self.leaf: 7])), from: Self.leaf)
        #expect(book.members.contains(Self.leaf))
        #expect(book.stableFrontier(local: local) == VersionVector([Self.hub: 6, Self.leaf: 4]))
        // The leaf's own ops this replica lacks are known to exist (the stamp frontier stops below them).
        #expect(book.known(local: local)[Self.leaf] == 7)
        // Its acks make none of the hub's ops acknowledged.
        #expect(book.acknowledgers(origin: Self.hub, sequence: 5) == [Self.whole])
        var alone = AcknowledgementBook(local: Self.hub, members: [Self.hub], peersRequired: 1)
        alone.recordShare(Acknowledgement(versionVector: VersionVector([Self.hub: 6])), from: Self.leaf)
        #expect(alone.acknowledgedThrough(origin: Self.hub) == 0)
        #expect(alone.level(origin: Self.hub, sequence: 5, local: VersionVector([Self.hub: 6])) == .stable)
    }
}
