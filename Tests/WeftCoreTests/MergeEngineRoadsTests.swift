import PropertyBased
import Testing
import WeftTestSupport

@testable import WeftCore

/// The roads are chosen in one place, and the shortcut roads are exact: switched off, the in-order road
/// and the re-fold alone land on the same state and outcomes, batch after batch.
@Suite struct MergeEngineRoadsTests {
    static let alice = ReplicaID(rawValue: 0xA11CE) ?? ReplicaID(rawValue: 1)!

    static func op(_ millis: UInt64, _ path: String, _ kind: OpKind) -> Op {
        .make(kind, at: (try? Path(path)) ?? .root, origin: alice, millis: millis, sequence: millis)
    }

    /// The probe of `late` in an index that already holds `earlier` ops (stamped after it, for a late op).
    static func probe(of late: Op, after earlier: [Op]) -> PathIndex.Probe {
        let index = PathIndex()
        for op in earlier { index.insert(op) }
        return index.insert(late)
    }

    static let one = OpKind.increment(by: .int(1), from: .int(0))

    @Test("An op that no later op touches takes the in-order road, whatever its kind")
    func anOpInOrderTakesTheInOrderRoad() {
        let kinds: [OpKind] = [
            .set(.int(1)), Self.one, .transaction(read: VersionVector(), result: .int(2)),
            .merge([MergeChild(relative: Path(uncheckedKeys: ["a"]), value: .int(1))]),
            .batch([.set(Path(uncheckedKeys: ["x"]), .int(1)), .set(Path(uncheckedKeys: ["y"]), .int(2))]),
        ]
        for kind in kinds {
            let op = Self.op(5, "/c", kind)
            let probe = Self.probe(of: op, after: [Self.op(1, "/c", .set(.int(0)))])
            #expect(MergeRoad.choose(for: op, probe: probe, takesShortcuts: true) == .inOrder)
            #expect(MergeRoad.choose(for: op, probe: probe, takesShortcuts: false) == .inOrder)
        }
    }

    @Test("A late op takes the shortcut road of its kind, or the re-fold when shortcuts are off")
    func aLateOpTakesTheShortcutRoadOfItsKind() {
        let later = [Self.op(9, "/c", .set(.int(0))), Self.op(9, "/d", .set(.int(0)))]
        let cases: [(OpKind, String, MergeRoad)] = [
            (Self.one, "/c", .counterShortcut),
            (.set(.int(1)), "/c", .hiddenWrite),
            (.merge([MergeChild(relative: Path(uncheckedKeys: ["c"]), value: .int(1))]), "/", .hiddenWrite),
            (
                .merge([
                    MergeChild(relative: Path(uncheckedKeys: ["c"]), value: .int(1)),
                    MergeChild(relative: Path(uncheckedKeys: ["e"]), value: .int(1)),
                ]), "/", .writeByWrite
            ),
            (.transaction(read: VersionVector(), result: .int(2)), "/c", .lateTransaction),
            (.batch([.set(Path(uncheckedKeys: ["c"]), .int(1)), .set(Path(uncheckedKeys: ["d"]), .int(2))]), "/", .writeByWrite),
            (.batch([.increment(Path(uncheckedKeys: ["c"]), by: .int(1), from: .int(0))]), "/", .refold),
            (.call(FunctionCall(name: "transfer", version: 1, arguments: .null)), "/c", .refold),
        ]
        for (kind, path, road) in cases {
            let op = Self.op(5, path, kind)
            let probe = Self.probe(of: op, after: later)
            #expect(probe.conflicts, "\(kind)")
            #expect(MergeRoad.choose(for: op, probe: probe, takesShortcuts: true) == road, "\(kind)")
            #expect(MergeRoad.choose(for: op, probe: probe, takesShortcuts: false) == .refold, "\(kind)")
        }
        #expect(MergeRoad.allCases.filter(\.isShortcut).count == 4)
    }

    /// Applies the same batches to an engine with every road and one with the in-order road and the
    /// re-fold only; both must agree after every batch, hold their invariants, and end on the fold.
    static func expectSameRoadsResult(_ ops: [Op], registry: FunctionRegistry, seed: Int) {
        let expected = ReferenceFold.fold(ops, registry: registry)
        let full = MergeEngine(registry: registry)
        let plain = MergeEngine(registry: registry)
        plain.options.takesShortcuts = false
        var rng = SeededGenerator(seed: UInt64(seed) ^ 0x0AD5)
        for batch in MergeEnginePropertyTests.deliveries(ops, rng: &rng) {
            full.apply(batch)
            plain.apply(batch)
            expectInvariants(full)
            expectInvariants(plain)
            #expect(full.state == plain.state, "seed \(seed)")
            // Every op known so far has one outcome whatever road decided it (nil: not delivered yet).
            let differing = ops.filter { full.outcome(of: $0.stamp) != plain.outcome(of: $0.stamp) }
            #expect(differing.isEmpty, "seed \(seed): \(differing.map(\.stamp))")
        }
        #expect(plain.state == expected.state, "seed \(seed)")
        for op in ops {
            #expect(plain.outcome(of: op.stamp) == expected.outcomes[op.stamp], "seed \(seed)")
            #expect(full.outcome(of: op.stamp) == expected.outcomes[op.stamp], "seed \(seed)")
        }
        #expect(plain.statistics.counterShortcuts == 0)
        #expect(plain.statistics.hiddenWrites == 0)
    }

    @Test("In-order and re-fold alone equal the full engine and the fold on the workload's ops")
    func inOrderAndRefoldAloneEqualTheFullEngineOnTheWorkload() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            await Task.yield()  // CPU-bound cases: the run's other tests go between them
            let (ops, _) = MergeEnginePropertyTests.makeOps(seed: UInt64(seed), count: 60 + seed % 140)
            Self.expectSameRoadsResult(ops, registry: Workload.registry, seed: seed)
        }
    }

    @Test("In-order and re-fold alone equal the full engine and the fold on one counter's traffic")
    func inOrderAndRefoldAloneEqualTheFullEngineOnCounterTraffic() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            await Task.yield()  // CPU-bound cases: the run's other tests go between them
            let ops = MergeEngineCounterWindowTests.counterTraffic(seed: UInt64(seed), count: 40 + seed % 80)
            Self.expectSameRoadsResult(ops, registry: FunctionRegistry(), seed: seed)
        }
    }

    @Test("The shortcut roads take most late ops of the workload that the plain engine re-folds")
    func theShortcutRoadsSpareReFolds() {
        let (ops, _) = MergeEnginePropertyTests.makeOps(seed: 7, count: 2_000)
        let full = MergeEngine(registry: Workload.registry)
        let plain = MergeEngine(registry: Workload.registry)
        plain.options.takesShortcuts = false
        for op in ops.reversed() {
            full.apply([op])
            plain.apply([op])
        }
        #expect(full.state == plain.state)
        #expect(full.statistics.counterShortcuts + full.statistics.hiddenWrites > 0)
        #expect(full.statistics.refolds < plain.statistics.refolds)
        // Alone in its batch, every op takes one of the two roads.
        #expect(plain.statistics.inOrder + plain.statistics.refolds == ops.count)
    }
}
