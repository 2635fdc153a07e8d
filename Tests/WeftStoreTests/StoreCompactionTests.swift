import Testing
import WeftCore

@testable import WeftStore

/// Compaction and the compacted base, run against both stores.
@Suite struct StoreCompactionTests {
    @Test(arguments: StoreKind.allCases)
    func compactionDeletesTheOpsAtOrBelowTheFrontierOnly(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        let ops = (1...10 as ClosedRange<UInt64>).map { Sample.setOp(origin: 4, sequence: $0, millis: 100 * $0) }
        try fixture.store.commit(Sample.batch(ops))
        var compact = StoreBatch()
        compact.frontier = ops[5].stamp
        try fixture.store.commit(compact)
        #expect(try fixture.store.allOps().map(\.op) == Array(ops[6...]))
        #expect(
            try fixture.store.ops(from: Sample.replica(4), after: 0, limit: 100).map(\.op.sequence) == [7, 8, 9, 10])
        #expect(fixture.store.logMarks.frontier == ops[5].stamp)

        // A frontier below the stored one changes nothing.
        compact.frontier = ops[1].stamp
        try fixture.store.commit(compact)
        #expect(fixture.store.logMarks.frontier == ops[5].stamp)
        try fixture.reopen()
        #expect(fixture.store.logMarks.frontier == ops[5].stamp)
        #expect(try fixture.store.opCount() == 4)
    }

    @Test(arguments: StoreKind.allCases)
    func withoutOverridesTheBaseIsTheTreeAndCostsNothing(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        try fixture.store.commit(Sample.treeBatch([("/a", Sample.json(#"{"b":1,"c":2}"#))]))
        #expect(try fixture.store.baseOverrides().isEmpty)
        #expect(try fixture.store.readBase(at: .root) == fixture.store.readTree())
        #expect(try fixture.store.readBase(at: Sample.path("/a/c")) == .int(2))
    }

    @Test(arguments: StoreKind.allCases)
    func aPreservedPathKeepsItsBaseWhileTheTreeMovesOn(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        try fixture.store.commit(Sample.treeBatch([("/a", Sample.json(#"{"b":1,"c":2}"#)), ("/z", .int(9))]))

        var first = Sample.treeBatch([("/a/b", .int(10))])
        first.basePreserves = [Sample.path("/a/b")]
        try fixture.store.commit(first)
        // A second write below an already preserved path must not overwrite the saved base.
        var second = Sample.treeBatch([("/a/b", .int(20)), ("/z", .null)])
        second.basePreserves = [Sample.path("/a/b"), Sample.path("/z")]
        try fixture.store.commit(second)

        #expect(try fixture.store.readTree() == Sample.json(#"{"a":{"b":20,"c":2}}"#))
        #expect(try fixture.store.readBase(at: .root) == Sample.json(#"{"a":{"b":1,"c":2},"z":9}"#))
        #expect(try fixture.store.readBase(at: Sample.path("/a")) == Sample.json(#"{"b":1,"c":2}"#))
        #expect(try fixture.store.readBase(at: Sample.path("/a/b")) == .int(1))
        #expect(try fixture.store.baseOverrides().map(\.path) == [Sample.path("/a/b"), Sample.path("/z")])

        // Preserving an ancestor folds the overrides below it into one.
        var third = StoreBatch()
        third.basePreserves = [.root]
        try fixture.store.commit(third)
        #expect(
            try fixture.store.baseOverrides() == [
                BaseOverride(path: .root, value: Sample.json(#"{"a":{"b":1,"c":2},"z":9}"#))
            ])
        try fixture.reopen()
        #expect(try fixture.store.readBase(at: Sample.path("/z")) == .int(9))
    }

    @Test(arguments: StoreKind.allCases)
    func preservingBelowAScalarSavesTheScalarThatTheWriteReplaces(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        try fixture.store.commit(Sample.treeBatch([("/a", .double(53.125)), ("/b", .int(1))]))
        var batch = Sample.treeBatch([("/a/x/y", .string("new"))])
        batch.basePreserves = [Sample.path("/a/x/y")]
        try fixture.store.commit(batch)
        #expect(try fixture.store.readTree() == Sample.json(#"{"a":{"x":{"y":"new"}},"b":1}"#))
        #expect(try fixture.store.baseOverrides() == [BaseOverride(path: Sample.path("/a"), value: .double(53.125))])
        #expect(try fixture.store.readBase(at: .root) == Sample.json(#"{"a":53.125,"b":1}"#))
    }

    @Test(arguments: StoreKind.allCases)
    func baseWritesSetMergeIntoCoveringOverridesAndReleaseBackToTheTree(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        try fixture.store.commit(Sample.treeBatch([("/a", Sample.json(#"{"b":1,"c":2}"#))]))
        var preserve = Sample.treeBatch([("/a", Sample.json(#"{"b":5}"#))])
        preserve.basePreserves = [Sample.path("/a")]
        try fixture.store.commit(preserve)

        var fold = StoreBatch()
        fold.baseWrites = [.set(Sample.path("/a/c"), .int(3)), .set(Sample.path("/q"), .string("new"))]
        try fixture.store.commit(fold)
        #expect(try fixture.store.readBase(at: .root) == Sample.json(#"{"a":{"b":1,"c":3},"q":"new"}"#))
        #expect(try fixture.store.baseOverrides().map(\.path) == [Sample.path("/a"), Sample.path("/q")])

        // Releasing a part of an override writes the tree's part into it.
        var releasePart = StoreBatch()
        releasePart.baseWrites = [.release(Sample.path("/a/b"))]
        try fixture.store.commit(releasePart)
        #expect(try fixture.store.readBase(at: Sample.path("/a")) == Sample.json(#"{"b":5,"c":3}"#))

        var releaseAll = StoreBatch()
        releaseAll.baseWrites = [.releaseAll]
        try fixture.store.commit(releaseAll)
        #expect(try fixture.store.baseOverrides().isEmpty)
        #expect(try fixture.store.readBase(at: .root) == fixture.store.readTree())
    }

    /// The flow a replica follows: ops above the frontier preserve the base; compaction folds the stable
    /// ones into it and releases what no unstable op touches any more.
    @Test(arguments: StoreKind.allCases)
    func aCompactionFoldsStableOpsIntoTheBaseInTheSameCommit(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        let ops = (1...4 as ClosedRange<UInt64>).map {
            Sample.setOp(origin: 1, sequence: $0, millis: 100 * $0, path: "/k\($0 % 2)", value: .int(Int64($0)))
        }
        for op in ops {
            var batch = Sample.batch([op], status: .durable)
            batch.basePreserves = [op.path]
            batch.treeWrites = [.init(path: op.path, value: try #require(setValue(op)))]
            try fixture.store.commit(batch)
        }
        #expect(try fixture.store.readBase(at: .root) == .null)
        #expect(try fixture.store.readTree() == Sample.json(#"{"k0":4,"k1":3}"#))

        // Ops 1 and 2 become stable: the base takes their effect; /k1's override remains for op 3.
        var compact = StoreBatch()
        compact.frontier = ops[1].stamp
        compact.baseWrites = [.set(Sample.path("/k1"), .int(1)), .set(Sample.path("/k0"), .int(2))]
        compact.statusChanges = [.stableThrough(sequence: 2)]
        try fixture.store.commit(compact)
        #expect(try fixture.store.opCount() == 2)
        #expect(try fixture.store.readBase(at: .root) == Sample.json(#"{"k0":2,"k1":1}"#))

        // The rest become stable: the log empties and the base is the tree again, with no override left.
        compact = StoreBatch()
        compact.frontier = ops[3].stamp
        compact.baseWrites = [.releaseAll]
        try fixture.store.commit(compact)
        #expect(try fixture.store.opCount() == 0)
        #expect(try fixture.store.baseOverrides().isEmpty)
        #expect(try fixture.store.readBase(at: .root) == Sample.json(#"{"k0":4,"k1":3}"#))
    }

    private func setValue(_ op: Op) -> Value? {
        if case .set(let value) = op.kind { return value }
        return nil
    }

    @Test(arguments: StoreKind.allCases)
    func compactionAndVacuumShrinkTheStore(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        let payload = Value.string(String(repeating: "x", count: 1_000))
        for chunk in 0..<10 {
            let ops = (1...200 as ClosedRange<UInt64>).map { index in
                let sequence = UInt64(chunk) * 200 + index
                return Sample.setOp(origin: 3, sequence: sequence, millis: sequence, value: payload)
            }
            try fixture.store.commit(Sample.batch(ops))
        }
        try fixture.store.checkpoint()
        let full = try fixture.store.bytesOnDisk()
        #expect(full > 2000 * 1_000)

        var compact = StoreBatch()
        compact.frontier = Sample.stamp(2000, 3)
        try fixture.store.commit(compact)
        try fixture.store.vacuum()
        let compacted = try fixture.store.bytesOnDisk()
        #expect(compacted < full / 10, "\(compacted) bytes after compaction, \(full) before")
        #expect(try fixture.store.opCount() == 0)
    }
}
