import PropertyBased
import Testing

@testable import WeftCore

/// The guarded batch (`OpKind.guardedBatch`): a batch that applies only if nothing its origin had not
/// seen touched what it read. The rule in the fold, the engine against the fold on every road, and the
/// codec.
@Suite struct GuardedBatchRuleTests {
    static let alice = ReplicaID(rawValue: 0xA11CE)!
    static let bob = ReplicaID(rawValue: 0xB0B)!

    static func path(_ text: String) -> Path { (try? Path(text)) ?? .root }

    static func op(_ origin: ReplicaID, _ sequence: UInt64, _ millis: UInt64, _ path: String, _ kind: OpKind) -> Op {
        Op(stamp: Stamp(millis: millis, counter: 0, replica: origin), sequence: sequence, path: Self.path(path), kind: kind)
    }

    /// A guarded batch by alice, stamped at `millis`, having seen bob up to `seenBob`.
    static func guarded(
        _ sequence: UInt64, _ millis: UInt64, seenBob: UInt64, reads: [String], writes: [Write]
    ) throws -> Op {
        let read = VersionVector([alice: sequence - 1, bob: seenBob])
        let (path, kind) = try OpKind.guarded(read: read, reads: reads.map(Self.path), writes: writes)
        return Op(stamp: Stamp(millis: millis, counter: 0, replica: alice), sequence: sequence, path: path, kind: kind)
    }

    /// Folds `ops`, and checks that an engine given them in every rotation, with and without
    /// shortcuts, lands on the fold.
    static func fold(_ ops: [Op], sourceLocation: SourceLocation = #_sourceLocation) -> ReferenceFold.Result {
        let expected = ReferenceFold.fold(ops, registry: FunctionRegistry())
        for shift in ops.indices {
            for shortcuts in [true, false] {
                let engine = MergeEngine()
                engine.options.takesShortcuts = shortcuts
                for op in ops[shift...] + ops[..<shift] { engine.apply([op]) }
                expectInvariants(engine, sourceLocation: sourceLocation)
                #expect(engine.state == expected.state, sourceLocation: sourceLocation)
                for op in ops {
                    #expect(engine.outcome(of: op.stamp) == expected.outcomes[op.stamp], sourceLocation: sourceLocation)
                }
            }
        }
        return expected
    }

    // MARK: - The rule

    @Test("a guarded batch is rejected, writing nothing, when an unseen op touched any path it read")
    func staleWhenAReadPathChanged() throws {
        let setup = Self.op(Self.alice, 1, 1, "/stock/a", .set(.int(3)))
        let unseen = Self.op(Self.bob, 1, 2, "/stock/a/reserved", .set(.bool(true)))
        let batch = try Self.guarded(
            2, 5, seenBob: 0, reads: ["/stock/a", "/orders"],
            writes: [.increment(Self.path("/stock/a/count"), by: .int(-1), from: .int(0)), .set(Self.path("/orders/o1"), .string("a"))])
        let result = Self.fold([setup, unseen, batch])
        #expect(result.outcomes[batch.stamp] == Outcome.rejected(.staleRead(batch.path)))
        #expect(result.state == (try Value(json: #"{"stock":{"a":{"reserved":true}}}"#)))
        // Above a read path counts too: a set of /stock.
        let above = Self.op(Self.bob, 1, 2, "/stock", .set(.int(0)))
        #expect(Self.fold([setup, above, batch]).outcomes[batch.stamp] == Outcome.rejected(.staleRead(batch.path)))
    }

    @Test("a guarded batch applies when the unseen ops touched only paths it did not read, or came after it")
    func validWhenOnlyUnrelatedPathsChanged() throws {
        let unrelated = Self.op(Self.bob, 1, 2, "/stock/b", .set(.int(9)))
        let after = Self.op(Self.bob, 2, 8, "/stock/a", .set(.int(1)))
        let batch = try Self.guarded(
            1, 5, seenBob: 0, reads: ["/stock/a"], writes: [.set(Self.path("/stock/a"), .int(2)), .set(Self.path("/log/x"), .int(1))])
        let result = Self.fold([unrelated, after, batch])
        #expect(result.outcomes[batch.stamp] == Outcome.applied)
        #expect(result.state == (try Value(json: #"{"stock":{"a":1,"b":9},"log":{"x":1}}"#)))
    }

    @Test("a seen op keeps it valid; a valid one with a failing part is rejected as a batch")
    func seenOpsAndFailingParts() throws {
        let seen = Self.op(Self.bob, 1, 2, "/n", .set(.string("text")))
        let batch = try Self.guarded(
            1, 5, seenBob: 1, reads: ["/n"], writes: [.set(Self.path("/m"), .int(1)), .increment(Self.path("/n"), by: .int(1), from: .int(0))])
        let result = Self.fold([seen, batch])
        #expect(result.outcomes[batch.stamp] == Outcome.rejected(.notANumber(Self.path("/n"))))
        #expect(result.state == Value.object(["n": .string("text")]))
    }

    @Test("the op's path, read paths and anchors: nested reads are dropped, reads sorted, and limits hold")
    func construction() throws {
        let (path, kind) = try OpKind.guarded(
            read: VersionVector(), reads: [Self.path("/b/c"), Self.path("/a"), Self.path("/b"), Self.path("/a/x")],
            writes: [.set(Self.path("/b/d"), .int(1))])
        #expect(path == .root)
        guard case .guardedBatch(_, let reads, _) = kind else {
            Issue.record("not a guarded batch")
            return
        }
        #expect(reads == [Self.path("/a"), Self.path("/b")])
        let op = Op(stamp: Stamp(millis: 1, counter: 0, replica: Self.alice), sequence: 1, path: path, kind: kind)
        #expect(op.anchors == [Self.path("/b/d"), Self.path("/a"), Self.path("/b")])
        #expect(op.isGuarded && op.hasSeveralAnchors && op.readsState && op.hasBatchWrites)
        #expect(op.guardsPath(relatedTo: Self.path("/a/y/z")) && !op.guardsPath(relatedTo: Self.path("/c")))
        #expect(op.hasAnchor(relatedTo: Self.path("/a/q")))
        #expect(coreError { try OpKind.guarded(read: VersionVector(), reads: [Self.path("/a")], writes: []) } != nil)
        #expect(coreError { try OpKind.guarded(read: VersionVector(), reads: [], writes: [.set(Self.path("/a"), .int(1))]) } != nil)
        let tooMany = (0...CoreLimits.guardedReadsMax).map { Path(uncheckedKeys: [Key(unchecked: "k\($0)")]) }
        #expect(coreError { try OpKind.guarded(read: VersionVector(), reads: tooMany, writes: [.set(Self.path("/a"), .int(1))]) } != nil)
    }

    // MARK: - The engine against the fold

    static func guardedOps(seed: UInt64, count: Int, hot: Bool) -> [Op] {
        var rng = SeededGenerator(seed: seed)
        var shape = Workload.Shape()
        shape.mix.guardedBatches = 10
        if hot {
            shape.items = 3
            shape.counters = 2
        }
        var workload = Workload(seed: seed, replicas: 3 + Int(rng.below(3)), shape: shape)
        return (0..<count).map { _ in workload.next() }
    }

    @Test("with guarded batches in the workload, every road and the re-fold alone equal the fold")
    func everyRoadEqualsTheFold() async {
        await propertyCheck(count: 150, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            await Task.yield()  // CPU-bound cases: the run's other tests go between them
            let ops = Self.guardedOps(seed: UInt64(seed), count: 40 + seed % 100, hot: false)
            MergeEngineRoadsTests.expectSameRoadsResult(ops, registry: Workload.registry, seed: seed)
        }
    }

    @Test("on a few hot paths, guarded batches still fold alike on every road")
    func hotPathsEqualTheFold() async {
        await propertyCheck(count: 150, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            await Task.yield()  // CPU-bound cases: the run's other tests go between them
            let ops = Self.guardedOps(seed: UInt64(seed), count: 30 + seed % 70, hot: true)
            MergeEngineRoadsTests.expectSameRoadsResult(ops, registry: Workload.registry, seed: seed)
        }
    }

    @Test("the workload's guarded batches are both applied and rejected as stale")
    func theWorkloadExercisesBothOutcomes() {
        let ops = Self.guardedOps(seed: 11, count: 600, hot: true)
        let result = ReferenceFold.fold(ops, registry: Workload.registry)
        let guarded = ops.filter { if case .guardedBatch = $0.kind { true } else { false } }
        #expect(guarded.count > 20)
        #expect(guarded.contains { result.outcomes[$0.stamp] == .applied })
        #expect(guarded.contains { if case .rejected(.staleRead) = result.outcomes[$0.stamp] { true } else { false } })
    }

    // MARK: - Codec

    @Test("a guarded batch round-trips through the op codec")
    func codecRoundTrip() throws {
        let op = try Self.guarded(
            3, 5, seenBob: 4, reads: ["/a/b", "/c"],
            writes: [
                .set(Self.path("/a/b"), .object(["x": .int(1)])), .increment(Self.path("/n"), by: .double(0.5), from: .int(2)),
                .merge(Self.path("/m"), [MergeChild(relative: Self.path("p/q"), value: .string("v"))]),
            ])
        let bytes = OpCodec.encode(op)
        let back = try OpCodec.decode(bytes)
        #expect(back == op)
        #expect(OpCodec.encode(back) == bytes)
    }

    @Test("damaged guarded batches are refused with a typed error")
    func codecRefusesDamage() throws {
        let op = try Self.guarded(1, 5, seenBob: 0, reads: ["/a"], writes: [.set(Self.path("/a"), .int(1))])
        let bytes = OpCodec.encode(op)
        for cut in stride(from: 1, to: bytes.count, by: 3) {
            #expect(coreError { try OpCodec.decode(Array(bytes[..<cut])) } != nil)
        }
        // Reads out of order, nested, or none.
        func encoded(reads: [Path]) -> [UInt8] {
            var writer = ByteWriter()
            writer.write(byte: OpCodec.format)
            OpCodec.write(op.stamp, to: &writer)
            writer.write(varint: 1)
            OpCodec.write(Path.root, to: &writer)
            writer.write(byte: 7)
            OpCodec.write(VersionVector(), to: &writer)
            writer.write(varint: UInt64(reads.count))
            for path in reads { OpCodec.write(path, to: &writer) }
            writer.write(varint: 1)
            writer.write(byte: 1)
            OpCodec.write(Self.path("/a"), to: &writer)
            OpCodec.write(Value.int(1), to: &writer)
            return writer.bytes
        }
        #expect((try? OpCodec.decode(encoded(reads: [Self.path("/a"), Self.path("/b")]))) != nil)
        for reads in [[Self.path("/b"), Self.path("/a")], [Self.path("/a"), Self.path("/a/b")], [], [Self.path("/a"), Self.path("/a")]] {
            let error = coreError { try OpCodec.decode(encoded(reads: reads)) }
            guard case .malformedEncoding = error else {
                Issue.record("reads \(reads) were not refused as malformed")
                continue
            }
        }
    }
}
