import PropertyBased
import Testing

@testable import WeftCore

/// The counter shortcut for a late increment: later increments add up in any order, and a later whole
/// write of the counter ends the increment's effect, unless an op in between or a transaction anywhere
/// after it decides differently with the increment in place. The engine must land on the reference fold
/// either way; these tests also check which road it took.
@Suite struct MergeEngineCounterWindowTests {
    typealias Origin = MergeEngineCutTests.Origin

    static let one = OpKind.increment(by: .int(1), from: .int(0))
    static let quarter = OpKind.increment(by: .double(0.25), from: .int(0))
    /// A read vector that holds the first op of origins 1 and 3.
    static let sawBoth = VersionVector([Origin(1).id: 1, Origin(3).id: 1])

    @Test func aLateIncrementHiddenByALaterSetTakesTheShortcut() throws {
        var a = Origin(1)
        var c = Origin(3)
        // A double increment makes the counter a double: order-free integer sums no longer apply, but
        // the set at 20 ends the late increment's effect.
        var ops = [try a.op(at: 10, "/counters/c", Self.one), try a.op(at: 11, "/counters/c", Self.quarter)]
        for millis in 12...19 { ops.append(try a.op(at: UInt64(millis), "/counters/c", Self.one)) }
        ops.append(try a.op(at: 20, "/counters/c", .set(.int(5))))
        for millis in 21...25 { ops.append(try a.op(at: UInt64(millis), "/counters/c", Self.one)) }
        ops.append(try c.op(at: 15, "/counters/c", Self.one))
        let engine = MergeEngine(registry: FunctionRegistry())
        expectFoldOneByOne(ops, engine: engine)
        #expect(engine.state.value(at: try Path("/counters/c")) == .int(10))
        #expect(engine.statistics.counterShortcuts == 1)
        #expect(engine.statistics.refolds == 0)
    }

    @Test func aTransactionThatHadSeenTheLateIncrementHidesIt() throws {
        var a = Origin(1)
        var c = Origin(3)
        let late = try c.op(at: 5, "/counters/c", Self.one)
        var ops = [try a.op(at: 1, "/counters/c", Self.quarter)]
        for millis in 6...9 { ops.append(try a.op(at: UInt64(millis), "/counters/c", Self.one)) }
        ops.append(
            try a.op(
                at: 12, "/counters/c", .transaction(read: VersionVector([a.id: a.sequence, c.id: 1]), result: .int(3))))
        ops.append(try a.op(at: 13, "/counters/c", Self.one))
        ops.append(late)
        let engine = MergeEngine(registry: FunctionRegistry())
        expectFoldOneByOne(ops, engine: engine)
        #expect(engine.state.value(at: try Path("/counters/c")) == .int(4))
        #expect(engine.statistics.counterShortcuts == 1)
        #expect(engine.statistics.refolds == 0)
    }

    @Test func aTransactionAfterTheWholeWriteThatHadNotSeenTheIncrementIsRejected() throws {
        var a = Origin(1)
        var b = Origin(2)
        var c = Origin(3)
        var ops = [try a.op(at: 1, "/counters/c", Self.quarter)]
        for millis in 6...9 { ops.append(try a.op(at: UInt64(millis), "/counters/c", Self.one)) }
        ops.append(try a.op(at: 10, "/counters/c", .set(.int(0))))
        // Past the set, but its origin had not seen c's op stamped 5: the rule rejects it now.
        let stale = try b.op(
            at: 15, "/counters/c", .transaction(read: VersionVector([a.id: a.sequence]), result: .int(100)))
        ops.append(stale)
        ops.append(try c.op(at: 5, "/counters/c", Self.one))
        let engine = MergeEngine(registry: FunctionRegistry())
        expectFoldOneByOne(ops, engine: engine)
        #expect(engine.outcome(of: stale.stamp) == .rejected(.staleRead(try Path("/counters/c"))))
        #expect(engine.state.value(at: try Path("/counters/c")) == .int(0))
        #expect(engine.statistics.counterShortcuts == 0)
    }

    @Test func batchesAtTheCounterAddUpOrHideIt() throws {
        var a = Origin(1)
        var c = Origin(3)
        let counter = try Path("/counters/c")
        let text = try Path("/text")
        var ops = [
            try a.op(at: 1, "/text", .set(.string("not a number"))),
            try a.op(at: 2, "/counters/c", Self.quarter),
            try a.op(at: 6, "/counters/c", Self.one),
            // Applied, with an increment of the counter: the late increment moves what it sees.
            try a.op(
                at: 7, "/",
                .batch([.increment(counter, by: .int(2), from: .int(0)), .set(try Path("/other"), .int(1))])),
            // Rejected by its part at /text, which the counter does not reach: it writes nothing.
            try a.op(
                at: 8, "/",
                .batch([.increment(counter, by: .int(2), from: .int(0)), .increment(text, by: .int(1), from: .int(0))])),
            // Applied, and it sets the counter: the late increment's effect ends here.
            try a.op(at: 9, "/", .batch([.set(counter, .int(40)), .increment(counter, by: .int(2), from: .int(0))])),
            try a.op(at: 10, "/counters/c", Self.one),
        ]
        ops.append(try c.op(at: 5, "/counters/c", Self.one))
        let engine = MergeEngine(registry: FunctionRegistry())
        expectFoldOneByOne(ops, engine: engine)
        #expect(engine.state.value(at: counter) == .int(43))
        #expect(engine.statistics.counterShortcuts == 1)
        #expect(engine.statistics.refolds == 0)
    }

    @Test func anIntegerCounterMovesPastARejectedTransaction() throws {
        var a = Origin(1)
        var b = Origin(2)
        var c = Origin(3)
        var ops = [try a.op(at: 1, "/counters/c", Self.one), try a.op(at: 6, "/counters/c", Self.one)]
        // b had not seen a's op at 6: rejected, and it stays rejected with one more op it had not seen.
        ops.append(
            try b.op(at: 7, "/counters/c", .transaction(read: VersionVector([a.id: 1]), result: .string("x"))))
        ops.append(try a.op(at: 8, "/counters/c", Self.one))
        ops.append(try c.op(at: 5, "/counters/c", .increment(by: .int(10), from: .int(0))))
        let engine = MergeEngine(registry: FunctionRegistry())
        expectFoldOneByOne(ops, engine: engine)
        #expect(engine.state.value(at: try Path("/counters/c")) == .int(13))
        #expect(engine.statistics.counterShortcuts == 1)
        #expect(engine.statistics.refolds == 0)
    }

    @Test func theIncrementThatMeetsNullMovesToTheLateOne() throws {
        var a = Origin(1)
        var c = Origin(3)
        var ops = [try a.op(at: 6, "/counters/c", .increment(by: .int(1), from: .int(100)))]
        ops.append(try a.op(at: 7, "/counters/c", Self.quarter))
        ops.append(try a.op(at: 8, "/counters/c", .set(.int(0))))
        ops.append(try a.op(at: 9, "/counters/c", Self.one))
        // Hidden by the set at 8: it now meets null instead of the op at 6...
        ops.append(try c.op(at: 5, "/counters/c", .increment(by: .int(3), from: .int(50))))
        // ...which an even later arrival, also before it, must know.
        var d = Origin(4)
        ops.append(try d.op(at: 4, "/counters/c", .increment(by: .int(2), from: .int(7))))
        let engine = MergeEngine(registry: FunctionRegistry())
        expectFoldOneByOne(ops, engine: engine)
        #expect(engine.incrementsFromNull == [ops[5].stamp])
        #expect(engine.statistics.counterShortcuts == 2)
    }

    /// When the op after a late increment is not an increment, what the counter held before the late
    /// one comes from the counter's own op before it (passing over rejected ones, which wrote nothing):
    /// a late increment on a non-number is rejected, one
    /// on null starts from its `from`, one on a number is hidden by a whole write or moves the counter by
    /// its step, all without a re-fold.
    @Test func theOpBeforeTheLateIncrementTellsWhatItMet() throws {
        let counter = try Path("/counters/c")
        let text = try Path("/text")
        // (ops before the late one, ops after it, expected counter, expected outcome of the late one)
        let cases: [(before: [(UInt64, String, OpKind)], after: [(UInt64, String, OpKind)], Value, Outcome)] = [
            // A text set before it, a set after: rejected, and nothing moves.
            (
                [(1, "/counters/c", .set(.string("x")))], [(10, "/counters/c", .set(.int(7)))], .int(7),
                .rejected(.notANumber(counter))
            ),
            // An increment rejected on text before it: the text is still there.
            (
                [(1, "/counters/c", .set(.string("x"))), (2, "/counters/c", Self.one)],
                [(10, "/counters/c", .set(.int(7)))], .int(7), .rejected(.notANumber(counter))
            ),
            // A batch setting a number, then a transaction that had seen the late increment.
            (
                [(1, "/", .batch([.set(counter, .int(4)), .set(text, .int(1))]))],
                [(10, "/counters/c", .transaction(read: Self.sawBoth, result: .int(9)))],
                .int(9), .applied
            ),
            // A merge child of a number, then a batch adding to it: the counter moves by the late step.
            (
                [(1, "/", .merge([MergeChild(relative: counter, value: .int(4))]))],
                [(10, "/", .batch([.increment(counter, by: .int(2), from: .int(0)), .set(text, .int(1))]))],
                .int(9), .applied
            ),
            // Nothing before it: it meets null, and a set hides it.
            ([], [(10, "/counters/c", .set(.int(7)))], .int(7), .applied),
            // A number, then a batch rejected on the text elsewhere, which wrote nothing: passed over.
            (
                [
                    (1, "/text", .set(.string("x"))), (2, "/counters/c", .set(.int(4))),
                    (
                        3, "/",
                        .batch([
                            .increment(counter, by: .int(1), from: .int(0)),
                            .increment(text, by: .int(1), from: .int(0)),
                        ])
                    ),
                ],
                [(10, "/counters/c", .set(.int(7)))], .int(7), .applied
            ),
            // A number, then a stale transaction (its origin had not seen the number): passed over too.
            (
                [
                    (1, "/counters/c", .set(.int(4))),
                    (2, "/counters/c", .transaction(read: VersionVector(), result: .string("t"))),
                ],
                [(10, "/", .batch([.increment(counter, by: .int(2), from: .int(0)), .set(text, .int(1))]))],
                .int(9), .applied
            ),
        ]
        for (before, after, expected, outcome) in cases {
            var a = Origin(1)
            var c = Origin(3)
            var ops = try before.map { try a.op(at: $0.0, $0.1, $0.2) }
            ops += try after.map { try a.op(at: $0.0, $0.1, $0.2) }
            let late = try c.op(at: 5, "/counters/c", .increment(by: .int(3), from: .int(50)))
            ops.append(late)
            let engine = MergeEngine(registry: FunctionRegistry())
            expectFoldOneByOne(ops, engine: engine)
            #expect(engine.state.value(at: counter) == expected)
            #expect(engine.outcome(of: late.stamp) == outcome)
            #expect(engine.incrementsFromNull == (before.isEmpty ? [late.stamp] : []))
            #expect(engine.statistics.counterShortcuts == 1)
            #expect(engine.statistics.refolds == 0)
        }
    }

    /// A late increment that meets null must be hidden by the very next op: an increment after it that
    /// met null meets a number now, and must lose its mark.
    @Test func aLateIncrementOnNullBeforeAnotherThatMetNullIsRefolded() throws {
        var a = Origin(1)
        var c = Origin(3)
        let counter = try Path("/counters/c")
        var ops = [try a.op(at: 1, "/text", .set(.string("x")))]
        // Rejected by its part at /text: it writes nothing.
        ops.append(
            try a.op(
                at: 6, "/",
                .batch([
                    .increment(counter, by: .int(2), from: .int(0)),
                    .increment(try Path("/text"), by: .int(1), from: .int(0)),
                ])))
        let metNull = try a.op(at: 7, "/counters/c", .increment(by: .int(1), from: .int(100)))
        ops.append(metNull)
        ops.append(try a.op(at: 10, "/counters/c", .set(.int(7))))
        let late = try c.op(at: 5, "/counters/c", .increment(by: .int(3), from: .int(50)))
        ops.append(late)
        let engine = MergeEngine(registry: FunctionRegistry())
        expectFoldOneByOne(ops, engine: engine)
        #expect(engine.incrementsFromNull == [late.stamp])
        #expect(engine.statistics.counterShortcuts == 0)
    }

    /// An op above or below the counter between its own op and the late increment may have changed what
    /// the counter held: the late increment is re-folded.
    @Test func aWriteAboveOrBelowTheCounterSinceItsOwnOpMeansARefold() throws {
        let between: [(String, OpKind)] = [
            ("/counters", .set(.object(["c": .string("x")]))),
            ("/counters/c/deep", .set(.int(1))),
        ]
        for (path, kind) in between {
            var a = Origin(1)
            var b = Origin(2)
            var c = Origin(3)
            var ops = [try a.op(at: 1, "/counters/c", Self.one), try b.op(at: 3, path, kind)]
            ops.append(try a.op(at: 10, "/counters/c", .set(.int(7))))
            ops.append(try c.op(at: 5, "/counters/c", Self.one))
            let engine = MergeEngine(registry: FunctionRegistry())
            expectFoldOneByOne(ops, engine: engine)
            #expect(engine.statistics.counterShortcuts == 0, "\(path)")
            #expect(engine.statistics.refolds == 1, "\(path)")
        }
    }

    /// A counter that holds doubles: a late increment moves it by its step when every number written
    /// there is a multiple of 2^-16 of modest size (doubles add those exactly, in any order), and is
    /// re-folded otherwise (0.1 rounds differently depending on what it is added to).
    @Test func aDoubleCounterMovesByTheLateStepWhenItsSumsAreExact() throws {
        for (step, exact) in [(Number.double(0.25), true), (.double(0.1), false), (.int(3), true)] {
            var a = Origin(1)
            var c = Origin(3)
            var ops = [try a.op(at: 1, "/counters/c", .set(.double(1.5)))]
            ops.append(try a.op(at: 6, "/counters/c", .increment(by: step, from: .int(0))))
            ops.append(try a.op(at: 7, "/counters/c", Self.quarter))
            ops.append(try c.op(at: 5, "/counters/c", .increment(by: .double(0.75), from: .int(0))))
            let engine = MergeEngine(registry: FunctionRegistry())
            expectFoldOneByOne(ops, engine: engine)
            #expect(engine.statistics.counterShortcuts == (exact ? 1 : 0), "\(step)")
            #expect(engine.statistics.refolds == (exact ? 0 : 1), "\(step)")
        }
        // A number written above the counter is not counted at the counter: no shortcut.
        var a = Origin(1)
        var c = Origin(3)
        let ops = [
            try a.op(at: 1, "/counters", .set(.object(["c": .double(0.5)]))),
            try a.op(at: 6, "/counters/c", Self.quarter), try c.op(at: 5, "/counters/c", Self.quarter),
        ]
        let engine = MergeEngine(registry: FunctionRegistry())
        expectFoldOneByOne(ops, engine: engine)
        #expect(engine.statistics.counterShortcuts == 0)
    }

    /// Random traffic on one counter and its neighbours, with every kind of op the window walk reads,
    /// delivered in random orders: the engine equals the fold whatever road each increment took.
    @Test func randomCounterTrafficEqualsTheReferenceFold() async {
        await propertyCheck(count: 500, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            await Task.yield()  // CPU-bound cases: the run's other tests go between them
            var rng = SeededGenerator(seed: UInt64(seed) ^ 0x5EED)
            expectFoldInRandomDeliveries(
                Self.counterTraffic(seed: UInt64(seed), count: 40 + seed % 80), registry: FunctionRegistry(),
                engines: 3, rng: &rng, label: "seed \(seed)")
        }
    }

    /// The same traffic, long enough that the counter holds more than ``PathIndex/Node/ownScanMax`` ops
    /// (it keeps its per-origin summary then), with the first half compacted while a quarter of the ops
    /// is still missing: the late ones, transactions among them, still land where the fold does.
    @Test func compactedCounterTrafficStillEqualsTheReferenceFold() async {
        await propertyCheck(count: 200, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            await Task.yield()  // CPU-bound cases: the run's other tests go between them
            let ops = Self.counterTraffic(seed: UInt64(seed), count: 120)
            let sorted = ops.sorted { $0.stamp < $1.stamp }
            let engine = MergeEngine(registry: FunctionRegistry())
            var rng = SeededGenerator(seed: UInt64(seed) ^ 0xC0DE)
            MergeEnginePropertyTests.deliver(Array(sorted[..<60]) + Array(sorted[90...]), rng: &rng, engine: engine)
            engine.compact(upTo: sorted[59].stamp)
            MergeEnginePropertyTests.deliver(Array(sorted[60..<90]), rng: &rng, engine: engine)
            let expected = ReferenceFold.fold(ops, registry: FunctionRegistry())
            #expect(engine.state == expected.state, "seed \(seed)")
            for op in sorted[60...] {
                #expect(engine.outcome(of: op.stamp) == expected.outcomes[op.stamp], "seed \(seed)")
            }
        }
    }

    /// Ops of three origins on `/c` (the counter), `/t` (text or number) and `/n`: increments of every
    /// size (integers near the shortcut's bound, doubles that round, huge doubles), sets of numbers and
    /// other values, transactions with lagging read vectors, batches that may fail at `/t`, and merges.
    static func counterTraffic(seed: UInt64, count: Int) -> [Op] {
        var rng = SeededGenerator(seed: seed)
        let origins = (1...3).map { ReplicaID(rawValue: UInt64($0) * 1_000_003) ?? ReplicaID(rawValue: 1)! }
        var made: [[Stamp]] = [[], [], []]
        var millis: [UInt64] = [0, 0, 0]
        let counter = Path(uncheckedKeys: ["c"])
        let text = Path(uncheckedKeys: ["t"])
        func step() -> Number {
            switch rng.below(10) {
            case 0: return .double([0.25, 0.1, -1.5, 1e300, 3e-5][Int(rng.below(5))])
            case 1: return .int([Int64(1) << 60, -(Int64(1) << 60), Int64.max / 2][Int(rng.below(3))])
            default: return .int(Int64(rng.below(9)) - 3)
            }
        }
        func scalar() -> Value {
            switch rng.below(5) {
            case 0: return .string("s")
            case 1: return .null
            case 2: return .double(1.5)
            default: return .int(Int64(rng.below(100)))
            }
        }
        var ops: [Op] = []
        for _ in 0..<count {
            let writer = Int(rng.below(3))
            millis[writer] += 1 + rng.below(4)
            let sequence = UInt64(made[writer].count + 1)
            let stamp = Stamp(millis: 1_000 + millis[writer], counter: UInt16(sequence), replica: origins[writer])
            made[writer].append(stamp)
            let kind: OpKind
            var path = counter
            switch rng.below(20) {
            case 0..<11: kind = .increment(by: step(), from: rng.chance(0.7) ? .int(0) : .int(100))
            case 11, 12: kind = .set(scalar())
            case 13, 14:
                var entries: [ReplicaID: UInt64] = [:]
                for (index, stamps) in made.enumerated() where !stamps.isEmpty {
                    entries[origins[index]] =
                        index == writer
                        ? UInt64(stamps.count - 1) : UInt64(stamps.count) - min(rng.below(4), UInt64(stamps.count))
                }
                kind = .transaction(read: VersionVector(entries.filter { $0.value > 0 }), result: scalar())
            case 15, 16:
                var writes: [Write] = [.increment(counter, by: step(), from: .int(0))]
                if rng.chance(0.5) { writes.append(.increment(text, by: .int(1), from: .int(0))) }
                if rng.chance(0.3) { writes.append(.set(counter, scalar())) }
                if rng.chance(0.3) { writes.append(.increment(counter, by: step(), from: .int(0))) }
                rng.shuffle(&writes)
                kind = .batch(writes)
                path = .root
            case 17:
                kind = .merge([
                    MergeChild(relative: counter, value: scalar()), MergeChild(relative: text, value: .int(1)),
                ])
                path = .root
            case 18:
                kind = .set(rng.chance(0.5) ? .string("text") : .int(0))
                path = text
            default:
                kind = .increment(by: step(), from: .int(0))
                path = Path(uncheckedKeys: ["n"])
            }
            ops.append(Op(stamp: stamp, sequence: sequence, path: path, kind: kind))
        }
        return ops
    }
}
