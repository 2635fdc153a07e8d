import Testing
import WeftCore

@testable import WeftStore

/// Identity, clock, peers and membership, run against both stores.
@Suite struct StoreIdentityTests {
    @Test(arguments: StoreKind.allCases)
    func aNewStoreHasTheGivenReplicaAndAStartingClock(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind, replica: 0xBEEF)
        let identity = fixture.store.identity
        #expect(identity.replica == Sample.replica(0xBEEF))
        #expect(identity.clockTime == 0)
        #expect(identity.schemaVersion == SQLiteSchema.version)
        #expect(identity.instance == .original)
        #expect(identity.instanceToken.bytes.count == StoreLimits.instanceTokenBytes)
        try fixture.store.requireOriginal()
    }

    @Test(arguments: StoreKind.allCases)
    func theClockOnlyMovesForwardAndSurvivesAReopen(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        var batch = StoreBatch()
        batch.clockTime = 5_000 << 16
        try fixture.store.commit(batch)
        batch.clockTime = 4_000 << 16
        try fixture.store.commit(batch)
        #expect(fixture.store.identity.clockTime == 5_000 << 16)
        let token = fixture.store.identity.instanceToken
        try fixture.reopen()
        #expect(fixture.store.identity.clockTime == 5_000 << 16)
        #expect(fixture.store.identity.instanceToken == token)
        #expect(fixture.store.identity.replica == fixture.replica)
    }

    @Test(arguments: StoreKind.allCases)
    func peerVectorsAndMembersAreReplacedAndSurviveAReopen(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        let a = Sample.replica(0xA), b = Sample.replica(0xB), c = Sample.replica(0xC)
        var batch = StoreBatch()
        batch.peerVectors = [a: VersionVector([a: 3, b: 1]), b: VersionVector([b: 7])]
        batch.members = [c, a, b, a]
        try fixture.store.commit(batch)

        var update = StoreBatch()
        update.peerVectors = [a: VersionVector([a: 4, b: 2, c: 1])]
        update.members = [a, b]
        try fixture.store.commit(update)
        try fixture.reopen()
        #expect(try fixture.store.peerVectors() == [a: VersionVector([a: 4, b: 2, c: 1]), b: VersionVector([b: 7])])
        #expect(try fixture.store.members() == [a, b])
    }

    @Test(arguments: StoreKind.allCases)
    func reidentifyingGivesANewIdAndTokenAndFreezesTheOldStatuses(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind, replica: 1)
        let own = (1...3 as ClosedRange<UInt64>).map { Sample.setOp(origin: 1, sequence: $0, millis: 10 * $0) }
        var batch = Sample.batch(own, status: .durable)
        batch.statusChanges = [.acknowledgedThrough(sequence: 2)]
        try fixture.store.commit(batch)
        let before = fixture.store.identity

        try fixture.store.reidentify(newID: Sample.replica(2))
        let after = fixture.store.identity
        #expect(after.replica == Sample.replica(2))
        #expect(after.instanceToken != before.instanceToken)
        #expect(after.clockTime == before.clockTime)
        #expect(fixture.store.logMarks.acknowledgedThrough == 0)
        let old = try fixture.store.ops(from: Sample.replica(1), after: 0, limit: 10).map(\.status)
        #expect(old == [.acknowledged, .acknowledged, .durable])

        try fixture.reopen()
        #expect(fixture.store.identity.replica == Sample.replica(2))
        #expect(fixture.store.identity.instance == .original)
    }
}
