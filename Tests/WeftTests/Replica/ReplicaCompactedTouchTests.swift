import Foundation
import Testing
import WeftCore
import WeftStore

@_spi(Engine) @testable import Weft

/// The transaction rule counts ops already folded into the base, across a restart: a replica that
/// compacted, closed and reopened decides a late transaction as one that never restarted, and as the
/// reference fold does.
@Suite(.timeLimit(.minutes(5))) struct ReplicaCompactedTouchTests {
    private static let start: UInt64 = 1_700_000_000_000

    /// Remote ops: `a` writes inside `/doc`, `b` writes elsewhere; both are then compacted.
    private static let early = [
        Sample.remote(0xA, sequence: 1, millis: start + 10, path: "/doc/x", .set(.int(1))),
        Sample.remote(0xB, sequence: 1, millis: start + 20, path: "/other", .set(.int(5))),
        Sample.remote(0xA, sequence: 2, millis: start + 30, path: "/doc/y", .set(.int(2))),
    ]

    /// Late ops, stamped after the frontier: a transaction of `b` over `/doc` that saw none of `a`'s
    /// ops (an op it had not seen touched `/doc` before it: rejected), and one of `a` that saw all.
    private static let late = [
        Sample.remote(
            0xB, sequence: 2, millis: start + 40, path: "/doc",
            .transaction(read: VersionVector([Sample.replica(0xB): 1]), result: Sample.json(#"{"z":9}"#))),
        Sample.remote(
            0xA, sequence: 3, millis: start + 50, path: "/doc/x",
            .transaction(
                read: VersionVector([Sample.replica(0xA): 2, Sample.replica(0xB): 2]), result: .int(10))),
    ]

    /// Applies the early ops, marks them stable and compacts them.
    private static func compactEarlyOps(_ replica: Replica) async throws {
        try replica.applyRemote(early)
        replica.markStable(through: early[2].stamp)
        let report = try await replica.compact()
        #expect(report.opsFolded == 3)
    }

    @Test(arguments: ReplicaKind.allCases)
    func aReopenedReplicaRejectsALateTransactionAsOneThatNeverRestarted(kind: ReplicaKind) async throws {
        let expected = ReferenceFold.fold(Self.early + Self.late, registry: Workload.registry)
        let rejected = try #require(expected.outcomes[Self.late[0].stamp])
        guard case .rejected = rejected else {
            Issue.record("the reference fold applies the blind transaction: \(rejected)")
            return
        }
        #expect(expected.outcomes[Self.late[1].stamp] == .applied)

        // One replica never restarts.
        let steady = try ReplicaFixture(kind, seed: 11)
        steady.clock.now = Self.start + 100
        try await Self.compactEarlyOps(steady.replica)
        let steadyReport = try steady.replica.applyRemote(Self.late)

        // The other compacts, shuts down, and opens its file again before the late ops arrive.
        let restarted = try ReplicaFixture(kind, seed: 12)
        restarted.clock.now = Self.start + 100
        try await Self.compactEarlyOps(restarted.replica)
        try await restarted.reopen()
        #expect(restarted.replica.logOpCount == 0, "the early ops left the log")
        let restartedReport = try restarted.replica.applyRemote(Self.late)

        for op in Self.late {
            #expect(steadyReport.outcomes[op.stamp] == expected.outcomes[op.stamp], "\(op)")
            #expect(restartedReport.outcomes[op.stamp] == expected.outcomes[op.stamp], "\(op)")
        }
        #expect(steady.replica.snapshot() == expected.state)
        #expect(restarted.replica.snapshot() == expected.state)
        #expect(restarted.replica.digest == steady.replica.digest)

        // The touches reached the file, and a second restart still decides the same way.
        try await restarted.reopen()
        #expect(restarted.replica.snapshot() == expected.state)
        await restarted.replica.shutdown()
        let store = try restarted.openStore()
        let touches = try store.compactedTouches()
        #expect(touches.contains(CompactedTouch(path: Sample.path("/doc/x"), origin: Sample.replica(0xA), sequence: 1)))
        #expect(touches.contains(CompactedTouch(path: Sample.path("/doc/y"), origin: Sample.replica(0xA), sequence: 2)))
        #expect(touches.contains(CompactedTouch(path: Sample.path("/other"), origin: Sample.replica(0xB), sequence: 1)))
        try store.close()
        await steady.finish()
        await restarted.finish()
    }
}
