import Testing

@testable import WeftCore

/// `checkInvariants()` recomputes the summaries from the log: it passes on an engine left alone, and it
/// names the summary and the node when one is broken on purpose.
@Suite struct MergeEngineInvariantTests {
    /// An engine that took every road on the workload's ops: delivered backwards, one op at a time.
    static func engine() -> (engine: MergeEngine, ops: [Op]) {
        let (ops, _) = MergeEnginePropertyTests.makeOps(seed: 11, count: 400)
        let engine = MergeEngine(registry: Workload.registry)
        for op in ops.reversed() { engine.apply([op]) }
        return (engine, ops)
    }

    static func violation(of engine: MergeEngine) -> MergeInvariantViolation? {
        do {
            try engine.checkInvariants()
            return nil
        } catch {
            return error
        }
    }

    @Test("An engine left alone holds its invariants, before and after compaction")
    func anEngineLeftAloneHoldsItsInvariants() {
        let (engine, ops) = Self.engine()
        #expect(engine.statistics.refolds > 0)
        #expect(Self.violation(of: engine) == nil)
        let sorted = ops.sorted { $0.stamp < $1.stamp }
        engine.compact(upTo: sorted[199].stamp)
        #expect(Self.violation(of: engine) == nil)
    }

    @Test("A wrong count of calls at a node is named with the node")
    func aWrongCallCountIsFound() throws {
        let (engine, _) = Self.engine()
        let node = try #require(engine.index.node(at: ["accounts"][...]))
        node.callCount += 1
        let violation = try #require(Self.violation(of: engine))
        #expect(violation.summary == .callCount)
        #expect(violation.path == Path(uncheckedKeys: ["accounts"]))
        #expect(!violation.inCompactedIndex)
    }

    @Test("A greatest stamp below the one the log holds is found")
    func aLowSubtreeMaximumIsFound() throws {
        let (engine, ops) = Self.engine()
        let counter = try #require(ops.first { if case .increment = $0.kind { true } else { false } })
        let node = try #require(engine.index.node(at: counter.path.keys[...]))
        let first = try #require(node.ownFirst(after: Stamp(millis: 0, counter: 0, replica: counter.origin)))
        node.subtreeMax = first.stamp
        #expect(node.own.count > 1)
        let violation = try #require(Self.violation(of: engine))
        #expect(violation.summary == .subtreeMax)
        #expect(violation.path == counter.path)
    }

    @Test("A lost scalar mark is found")
    func aLostScalarMarkIsFound() throws {
        let (engine, ops) = Self.engine()
        let counter = try #require(ops.first { if case .increment = $0.kind { true } else { false } })
        let node = try #require(engine.index.node(at: counter.path.keys[...]))
        node.mayBeScalar = false
        #expect(Self.violation(of: engine)?.summary == .mayBeScalar)
    }

    @Test("A counter's magnitude that forgot a step is found")
    func aWrongIncrementMagnitudeIsFound() throws {
        let (engine, ops) = Self.engine()
        let counter = try #require(ops.first { if case .increment(.int, _) = $0.kind { true } else { false } })
        let node = try #require(engine.index.node(at: counter.path.keys[...]))
        node.incrementMagnitude = node.incrementMagnitude == 0 ? 1 : 0
        #expect(Self.violation(of: engine)?.summary == .incrementMagnitude)
    }

    @Test("The log's bookkeeping is checked too: its count and the marks of increments that met null")
    func theLogsBookkeepingIsChecked() throws {
        let (engine, ops) = Self.engine()
        engine.loggedCount += 1
        #expect(Self.violation(of: engine)?.summary == .loggedCount)
        engine.loggedCount -= 1
        let set = try #require(ops.first { if case .set = $0.kind { true } else { false } })
        engine.incrementsFromNull.insert(set.stamp)
        #expect(Self.violation(of: engine)?.summary == .incrementsFromNull)
        engine.incrementsFromNull.remove(set.stamp)
        #expect(Self.violation(of: engine) == nil)
    }

    @Test("A violation reads as a sentence naming the summary, the node and both values")
    func aViolationReadsAsASentence() {
        let violation = MergeInvariantViolation(
            summary: .descendantMax, path: Path(uncheckedKeys: ["a", "b"]), expected: "none", found: "t1")
        #expect(violation.description == "descendantMax at /a/b: expected none, found t1")
    }
}
