import Testing
import WeftCore

@testable import WeftStore

/// The store under the merge engine, as the replica will drive it: every apply becomes one group
/// commit (new ops, base preserves and subtree writes of the changed nodes); compactions fold the base.
/// Run against both stores.
@Suite struct StoreMergeEngineTests {
    /// One group commit for what `report` says the engine just did.
    private func batch(for ops: [Op], report: ApplyReport, engine: MergeEngine, local: ReplicaID) -> StoreBatch {
        var batch = StoreBatch()
        var seen = Set<Stamp>()
        for op in ops where report.outcomes[op.stamp] != nil && seen.insert(op.stamp).inserted {
            batch.ops.append(OpRecord(op, status: op.origin == local ? .durable : nil))
        }
        let paths = Array(Set(report.changes.map(\.path)))
        batch.basePreserves = paths
        batch.treeWrites = paths.map { StoreBatch.TreeWrite(path: $0, value: engine.value(at: $0)) }
        return batch
    }

    /// A compaction up to `frontier`: the engine folds, the store records the new base of each override.
    private func compaction(
        to frontier: Stamp, engine: MergeEngine, store: any Store
    ) throws -> StoreBatch {
        engine.compact(upTo: frontier)
        var batch = StoreBatch()
        batch.frontier = frontier
        if engine.opCount == 0 {
            batch.baseWrites = [.releaseAll]
        } else {
            for override in try store.baseOverrides() {
                let base = engine.base.value(at: override.path)
                let same = base == engine.state.value(at: override.path)
                batch.baseWrites.append(same ? .release(override.path) : .set(override.path, base))
            }
        }
        return batch
    }

    private func expectAgreement(_ store: any Store, _ engine: MergeEngine, _ note: String) throws {
        #expect(try store.readTree() == engine.state, "tree, \(note)")
        #expect(try store.readBase(at: .root) == engine.base, "base, \(note)")
        #expect(try store.opCount() == engine.opCount, "op count, \(note)")
        #expect(store.logMarks.frontier == engine.frontier, "frontier, \(note)")
    }

    @Test(arguments: StoreKind.allCases, [1, 2, 3] as [UInt64])
    func aStoreDrivenByTheMergeEngineHoldsItsStateBaseAndLog(kind: StoreKind, seed: UInt64) throws {
        var workload = Workload(seed: seed, replicas: 3)
        let local = workload.replicaIDs[0]
        let fixture = try StoreFixture(kind, replica: local.rawValue)
        let engine = MergeEngine(registry: Workload.registry)
        var generator = SeededGenerator(seed: seed &* 31)
        var made: [Op] = []
        for round in 0..<30 {
            var ops = (0..<25).map { _ in workload.next() }
            made += ops
            // Late and duplicate delivery: some older ops come again.
            ops += (0..<5).compactMap { _ in made.randomElement(using: &generator) }
            ops.shuffle(using: &generator)
            let report = engine.apply(ops)
            try fixture.store.commit(batch(for: ops, report: report, engine: engine, local: local))
            if round % 7 == 6 {
                let stamps = engine.sortedOps().map(\.stamp)
                let frontier = round == 27 ? stamps[stamps.count - 1] : stamps[stamps.count / 2]
                try fixture.store.commit(try compaction(to: frontier, engine: engine, store: fixture.store))
            }
            try expectAgreement(fixture.store, engine, "round \(round)")
        }
        try fixture.reopen()
        try expectAgreement(fixture.store, engine, "after reopening")
        // The stored base and log fold to the stored tree: the definition of the state.
        let stored = try fixture.store.allOps().map(\.op)
        #expect(stored == engine.sortedOps())
        let folded = ReferenceFold.fold(
            stored, base: try fixture.store.readBase(at: .root), registry: Workload.registry)
        #expect(folded.state == (try fixture.store.readTree()))
        let own = try fixture.store.ops(from: local, after: 0, limit: StoreLimits.opsPerQueryMax)
        #expect(own.allSatisfy { $0.status == .durable })
    }
}
