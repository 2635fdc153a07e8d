import Testing
import WeftCore

@testable import WeftStore

/// Statuses of our own ops, run against both stores.
@Suite struct StoreStatusTests {
    /// Our ops 1...5 and one op of another replica.
    private func seeded(_ kind: StoreKind) throws -> (StoreFixture, [Op], Op) {
        let fixture = try StoreFixture(kind, replica: 1)
        let own = (1...5 as ClosedRange<UInt64>).map { Sample.setOp(origin: 1, sequence: $0, millis: 100 * $0) }
        let remote = Sample.setOp(origin: 2, sequence: 1, millis: 150)
        var batch = Sample.batch(own, status: .durable)
        batch.ops.append(OpRecord(remote))
        try fixture.store.commit(batch)
        return (fixture, own, remote)
    }

    private func statuses(_ store: any Store) throws -> [OpStatus?] {
        try store.ops(from: store.identity.replica, after: 0, limit: 100).map(\.status)
    }

    @Test(arguments: StoreKind.allCases)
    func ourOpsKeepTheStatusTheyWereWrittenWithAndOthersHaveNone(kind: StoreKind) throws {
        let (fixture, _, remote) = try seeded(kind)
        #expect(try statuses(fixture.store) == Array(repeating: .durable, count: 5))
        #expect(try fixture.store.op(remote.stamp)?.status == nil)
    }

    @Test(arguments: StoreKind.allCases)
    func watermarksRaiseStatusesAndNeverMoveBack(kind: StoreKind) throws {
        let (fixture, _, remote) = try seeded(kind)
        var batch = StoreBatch()
        batch.statusChanges = [.acknowledgedThrough(sequence: 3)]
        try fixture.store.commit(batch)
        #expect(try statuses(fixture.store) == [.acknowledged, .acknowledged, .acknowledged, .durable, .durable])

        batch.statusChanges = [.stableThrough(sequence: 2), .acknowledgedThrough(sequence: 1)]
        try fixture.store.commit(batch)
        #expect(try statuses(fixture.store) == [.stable, .stable, .acknowledged, .durable, .durable])
        #expect(fixture.store.logMarks == LogMarks(frontier: nil, acknowledgedThrough: 3, stableThrough: 2))
        #expect(try fixture.store.op(remote.stamp)?.status == nil)

        try fixture.reopen()
        #expect(try statuses(fixture.store) == [.stable, .stable, .acknowledged, .durable, .durable])
    }

    @Test(arguments: StoreKind.allCases)
    func aRejectedOpStaysRejectedWhateverTheWatermarks(kind: StoreKind) throws {
        let (fixture, own, remote) = try seeded(kind)
        var batch = StoreBatch()
        batch.statusChanges = [
            .op(own[1].stamp, sequence: own[1].sequence, .rejected),
            .op(remote.stamp, sequence: remote.sequence, .rejected),
            .stableThrough(sequence: 5),
        ]
        try fixture.store.commit(batch)
        #expect(try statuses(fixture.store) == [.stable, .rejected, .stable, .stable, .stable])
        #expect(try fixture.store.op(remote.stamp)?.status == nil, "the ops of other replicas have no status")
    }

    @Test(arguments: StoreKind.allCases)
    func aStatusChangeForAnOpNoLongerInTheLogChangesNothing(kind: StoreKind) throws {
        let (fixture, _, _) = try seeded(kind)
        var batch = StoreBatch()
        batch.statusChanges = [.op(Sample.stamp(99_999, 1), sequence: 1, .acknowledged)]
        try fixture.store.commit(batch)
        #expect(try fixture.store.opCount() == 6)
        #expect(try statuses(fixture.store) == Array(repeating: .durable, count: 5))
    }
}
