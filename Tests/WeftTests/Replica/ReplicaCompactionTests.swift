import Foundation
import Testing
import WeftCore
import WeftStore

@_spi(Engine) @testable import Weft

/// Compaction: stable ops fold into the base, in memory and in the file, without changing the state.
@Suite(.timeLimit(.minutes(5))) struct ReplicaCompactionTests {
    @Test(arguments: ReplicaKind.allCases)
    func compactionKeepsTheStateAndDigestAndShrinksTheFile(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        let replica = fixture.replica
        let payload = Value.string(String(repeating: "p", count: 300))
        var last: WriteReceipt?
        for index in 0..<3_000 {
            last = try replica.submit(path: Sample.path("/docs/d\(index % 20)/body"), kind: .set(payload))
            try replica.submit(
                path: Sample.path("/counters/c\(index % 3)"), kind: .increment(by: .int(1), from: .int(0)))
        }
        try await replica.flush()
        let digest = replica.digest
        let vector = replica.versionVector

        replica.markStable(through: try #require(last).stamp)
        let report = try await replica.compact()
        #expect(report.opsFolded == 5_999)
        #expect(report.bytesAfter < report.bytesBefore / 10, "\(report.bytesBefore) → \(report.bytesAfter) bytes")
        #expect(replica.digest == digest)
        #expect(replica.versionVector == vector)
        #expect(replica.ops(from: replica.replicaID, after: 0, limit: 10).isEmpty, "compacted ops are gone")
        #expect(replica.ops(from: replica.replicaID, after: 5_999, limit: 10).map(\.sequence) == [6_000])

        try await fixture.reopen()
        let reopened = fixture.replica
        #expect(reopened.digest == digest)
        #expect(reopened.versionVector == vector, "the version vector of the base is kept")
        let next = try reopened.submit(path: Sample.path("/counters/c0"), kind: .increment(by: .int(1), from: .int(0)))
        #expect(reopened.versionVector[reopened.replicaID] == 6_001)
        try await next.wait(for: .durable)
        #expect(reopened.value(at: Sample.path("/counters/c0")) == .int(1_001))
        await reopened.shutdown()
        let store = try fixture.openStore()
        #expect(try store.opCount() == 2)
        #expect(try Sample.foldOfStore(store) == (try store.readTree()))
        try store.close()
        await fixture.finish()
    }

    /// Ops above the frontier keep their effect on top of the new base, whatever order they came in.
    @Test(arguments: ReplicaKind.allCases, [1, 2] as [UInt64])
    func aCompactionInTheMiddleOfTheLogKeepsWhatFollowsReplayable(kind: ReplicaKind, seed: UInt64) async throws {
        let fixture = try ReplicaFixture(kind, seed: seed + 100)
        let replica = fixture.replica
        var workload = Workload(seed: seed, replicas: 3)
        var generator = SeededGenerator(seed: seed &* 13)
        fixture.clock.now = 1_700_000_100_000
        var delivered: [Op] = []
        for round in 0..<12 {
            var ops = (0..<40).map { _ in workload.next() }
            ops.shuffle(using: &generator)
            delivered += ops
            try replica.applyRemote(ops)
            for index in 0..<5 {
                let path = Sample.path("/local/r\(index)")
                let kind = OpKind.increment(by: .int(1), from: .int(0))
                let receipt = try replica.submit(path: path, kind: kind)
                delivered.append(
                    Op(stamp: receipt.stamp, sequence: UInt64(round * 5 + index + 1), path: path, kind: kind))
            }
            if round % 4 == 3 {
                let stamps = delivered.map(\.stamp).sorted()  // the middle of what this replica knows
                replica.markStable(through: stamps[stamps.count / 2])
                try await replica.compact(vacuum: round == 11)
            }
        }
        let state = replica.snapshot()
        #expect(state == ReferenceFold.fold(delivered, registry: Workload.registry).state)
        await replica.shutdown()
        let store = try fixture.openStore()
        #expect(try store.readTree() == state)
        #expect(try Sample.foldOfStore(store) == state, "base plus log folds to the tree")
        try store.close()

        let reopened = try fixture.open()
        #expect(reopened.snapshot() == state)
        // A late op above the frontier still merges where the fold says.
        let late = workload.next()
        try reopened.applyRemote([late])
        #expect(reopened.snapshot() == ReferenceFold.fold(delivered + [late], registry: Workload.registry).state)
        await reopened.shutdown()
        await fixture.finish()
    }

    /// A call waiting for a function this replica lacks stays in the log with every op after it, so it
    /// still runs at its place in stamp order once the function is registered, also after a reopen.
    @Test(arguments: ReplicaKind.allCases)
    func compactionStopsBelowAWaitingCall(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        let now = fixture.clock.now
        let ops = [
            Sample.remote(5, sequence: 1, millis: now - 40, path: "/n", .set(.int(1))),
            Sample.remote(
                5, sequence: 2, millis: now - 30, path: "/n",
                .call(FunctionCall(name: "double", version: 1, arguments: .null))),
            Sample.remote(5, sequence: 3, millis: now - 20, path: "/n", .increment(by: .int(1), from: .int(0))),
            Sample.remote(5, sequence: 4, millis: now - 10, path: "/m", .set(.int(5))),
        ]
        let double: FunctionRegistry.Function = { node, _ in
            guard case .int(let value) = node else { return nil }
            return .int(value * 2)
        }
        try fixture.replica.applyRemote(ops)
        fixture.replica.markStable(through: ops[3].stamp)
        let report = try await fixture.replica.compact()
        #expect(report.opsFolded == 1)
        #expect(report.frontier == ops[0].stamp)
        if kind == .sqlite {
            try await fixture.reopen()
        }
        try fixture.replica.register(name: "double", version: 1, double)
        var registry = FunctionRegistry()
        registry.register(name: "double", version: 1, double)
        #expect(fixture.replica.snapshot() == ReferenceFold.fold(ops, registry: registry).state)
        #expect(fixture.replica.value(at: Sample.path("/n")) == .int(3))
        await fixture.finish()
    }

    /// A call that waited in the file and applies when the replica opens with its function: the file's
    /// tree follows, so a compaction that finds the base equal to the state there keeps the call's effect.
    /// The load applied it in memory only; the compaction then released the region to the stale tree,
    /// and the next open lost the call (and a peer that had the function kept it: the replicas differed).
    @Test(arguments: ReplicaKind.allCases)
    func aCallAppliedWhenTheReplicaOpensWithItsFunctionSurvivesCompaction(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        let now = fixture.clock.now
        let ops = [
            Sample.remote(5, sequence: 1, millis: now - 30, path: "/n", .set(.int(1))),
            Sample.remote(
                5, sequence: 2, millis: now - 20, path: "/n",
                .call(FunctionCall(name: "double", version: 1, arguments: .null))),
            Sample.remote(5, sequence: 3, millis: now - 10, path: "/n", .increment(by: .int(1), from: .int(0))),
        ]
        let double: FunctionRegistry.Function = { node, _ in node.intValue.map { .int($0 * 2) } }
        try fixture.replica.applyRemote(ops)
        #expect(fixture.replica.value(at: Sample.path("/n")) == .int(2))
        fixture.options.functions.register(name: "double", version: 1, double)
        try await fixture.reopen()
        try await fixture.replica.waitUntilLoaded()
        #expect(fixture.replica.value(at: Sample.path("/n")) == .int(3))
        fixture.replica.markStable(through: ops[2].stamp)
        #expect(try await fixture.replica.compact().opsFolded == 3)
        try await fixture.reopen()
        try await fixture.replica.waitUntilLoaded()
        #expect(fixture.replica.value(at: Sample.path("/n")) == .int(3))
        await fixture.replica.shutdown()
        let store = try fixture.openStore()
        #expect(try store.readTree() == ["n": 3])
        #expect(try store.readBase(at: .root) == ["n": 3])
        try store.close()
        await fixture.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func nothingIsCompactedBeforeAFrontierIsStable(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        try fixture.replica.submit(path: Sample.path("/a"), kind: .set(.int(1)))
        let report = try await fixture.replica.compact()
        #expect(report.opsFolded == 0)
        #expect(report.frontier == nil)
        await fixture.finish()
    }

    /// A frontier past every stamp this replica's clock has seen folds no further than that: the next
    /// write is stamped above the compaction, becomes durable and survives a reopen.
    @Test(arguments: ReplicaKind.allCases)
    func aFrontierAheadOfTheClockLeavesLaterWritesAboveTheCompaction(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        let replica = fixture.replica
        try await replica.submit(path: Sample.path("/a"), kind: .set(.int(1))).wait(for: .durable)
        replica.markStable(through: Stamp(millis: fixture.clock.now + 10_000, counter: 0, replica: replica.replicaID))
        let report = try await replica.compact()
        #expect(report.opsFolded == 1)
        let next = try replica.submit(path: Sample.path("/b"), kind: .set(.int(2)))
        #expect(try #require(report.frontier) < next.stamp)
        try await next.wait(for: .durable)
        #expect(replica.snapshot() == Sample.json(#"{"a":1,"b":2}"#))

        try await fixture.reopen()
        #expect(fixture.replica.snapshot() == Sample.json(#"{"a":1,"b":2}"#))
        try await fixture.replica.submit(path: Sample.path("/c"), kind: .set(.int(3))).wait(for: .durable)
        #expect(fixture.replica.snapshot() == Sample.json(#"{"a":1,"b":2,"c":3}"#))
        await fixture.finish()
    }

    /// A file whose stored frontier lies past its stored clock (written by a version that compacted
    /// ahead of the clock) reopens with its clock above the frontier, so that its writes can be stored.
    @Test(arguments: ReplicaKind.allCases)
    func aStoredFrontierAheadOfTheStoredClockRaisesTheClockOnOpen(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        let frontier = Stamp(millis: fixture.clock.now + 10_000, counter: 0, replica: fixture.replica.replicaID)
        await fixture.replica.shutdown()
        let store = try fixture.openStore()
        var batch = StoreBatch()
        batch.frontier = frontier
        try store.commit(batch)
        try store.close()

        let reopened = try fixture.open()
        let write = try reopened.submit(path: Sample.path("/a"), kind: .set(.int(1)))
        #expect(frontier < write.stamp)
        try await write.wait(for: .durable)
        #expect(reopened.snapshot() == Sample.json(#"{"a":1}"#))
        await reopened.shutdown()
        await fixture.finish()
    }

    /// The vacuum runs after the compaction's commit: when it fails, the error says the compaction
    /// stands (the file only keeps its free pages), and the replica goes on writing.
    @Test(arguments: ReplicaKind.allCases)
    func aVacuumThatFailsAfterTheCompactionSaysTheCompactionWasCommitted(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        await fixture.replica.shutdown()
        let store = GatedStore(try fixture.openStore())
        let replica = try Replica.open(store: store, options: fixture.options)
        let write = try replica.submit(path: Sample.path("/a"), kind: .set(.int(1)))
        try await write.wait(for: .durable)
        replica.markStable(through: write.stamp)
        store.vacuumFailure = .diskFull(path: "weft.sqlite", operation: "vacuuming")
        let error = await #expect(throws: WeftError.self) { try await replica.compact() }
        #expect(error?.code == .diskFull)
        #expect(error?.message.contains("folded 1 op") == true, "\(String(describing: error))")
        #expect(error?.message.contains("committed") == true)
        #expect(replica.compactableOpCount() == 0, "the compaction stands")
        try await replica.submit(path: Sample.path("/b"), kind: .set(.int(2))).wait(for: .durable)
        #expect(replica.snapshot() == Sample.json(#"{"a":1,"b":2}"#))
        await replica.shutdown()
        await fixture.finish()
    }

    @Test func regionsChosenForABigBaseStaySmall() throws {
        var base = Value.null
        for user in 0..<500 { base.write(Sample.json(#"{"a":1,"b":2}"#), at: Sample.path("/users/u\(user)")) }
        base.write(.int(1), at: Sample.path("/small"))
        let regions = PreservedRegions()
        #expect(regions.claim(Sample.path("/users/u3/a"), base: base) == Sample.path("/users/u3"))
        #expect(regions.claim(Sample.path("/users/u3/b"), base: base) == nil)
        #expect(regions.claim(Sample.path("/small/x"), base: base) == Sample.path("/small"))
        #expect(regions.claim(Sample.path("/new/deep/path"), base: base) == Sample.path("/new"))
        #expect(regions.claim(Sample.path("/users"), base: base) == Sample.path("/users"))
        #expect(regions.covers(Sample.path("/users/u400/a")))
        let empty = PreservedRegions()
        #expect(empty.claim(Sample.path("/a/b/c"), base: .null) == .root)
        #expect(empty.covers(Sample.path("/anything")))
    }
}
