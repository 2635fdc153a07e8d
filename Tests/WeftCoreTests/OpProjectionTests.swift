import PropertyBased
import Testing

@testable import WeftCore

/// A share made of whole subtrees, for tests: inside at or below a prefix, above a prefix's ancestors.
struct PrefixShare: ReadShare {
    let prefixes: [Path]

    init(_ texts: [String]) { prefixes = texts.map { (try? Path($0)) ?? .root } }

    func relation(to path: Path) -> ShareRelation {
        if prefixes.contains(where: { $0.isAncestorOrSelf(of: path) }) { return .inside }
        if prefixes.contains(where: { path.isAncestorOrSelf(of: $0) }) { return .above }
        return .outside
    }
}

/// What a hub sends a replica limited to a share (`OpProjection`): each kind of op inside, outside and
/// straddling the share, the decisions it carries, the codec of partial ops, and a property: the share of
/// the hub's fold equals the fold of the projected ops.
@Suite struct OpProjectionTests {
    static let hub = ReplicaID(rawValue: 0x4B)!
    static let other = ReplicaID(rawValue: 0x07)!
    static let leaf = ReplicaID(rawValue: 0x1E)!
    /// The share of `/stores/leaf1/**`.
    static let share = PrefixShare(["/stores/leaf1"])

    /// What a decision carried as applied says its op had seen: every origin, to the end.
    static let seen = VersionVector([hub: OpProjection.everySequence, other: OpProjection.everySequence])

    static func path(_ text: String) -> Path { (try? Path(text)) ?? .root }

    static func json(_ text: String) -> Value { (try? Value(json: text)) ?? .null }

    static func op(
        _ sequence: UInt64, _ path: String, _ kind: OpKind, origin: ReplicaID = hub, millis: UInt64? = nil
    ) -> Op {
        Op(
            stamp: Stamp(millis: millis ?? 100 + sequence, counter: 0, replica: origin), sequence: sequence,
            path: Self.path(path), kind: kind)
    }

    static func projected(_ op: Op, outcome: Outcome? = nil) -> Op? {
        switch OpProjection.project(op, into: share, outcome: outcome, seen: Self.seen) {
        case .whole: return op
        case .partial(let cut): return cut
        case .undecided: return nil
        }
    }

    // MARK: - Kinds

    @Test("an op inside the share goes whole, and one outside goes as a placeholder writing nothing")
    func insideAndOutside() throws {
        let inside = Self.op(1, "/stores/leaf1/stock", .set(.int(3)))
        #expect(OpProjection.project(inside, into: Self.share, outcome: nil, seen: Self.seen) == .whole)
        let outside = Self.op(2, "/stores/leaf2/stock", .set(.int(4)))
        let placeholder = try #require(Self.projected(outside))
        #expect(placeholder.stamp == outside.stamp && placeholder.sequence == 2 && placeholder.isPartial)
        #expect(OpProjection.isWithheld(placeholder))
        #expect(placeholder.anchors.isEmpty, "nothing of the share was touched: no path is named")
        let folded = ReferenceFold.fold([inside, placeholder], registry: FunctionRegistry())
        #expect(folded.state == Self.json(#"{"stores":{"leaf1":{"stock":3}}}"#))
    }

    @Test("a set above the share goes cut down to the share, keeping its node")
    func setAbove() throws {
        let set = Self.op(1, "/stores", .set(Self.json(#"{"leaf1":{"a":1},"leaf2":{"b":2},"count":7}"#)))
        let cut = try #require(Self.projected(set))
        #expect(cut.isPartial && cut.path == Self.path("/stores"))
        #expect(cut.kind == .set(Self.json(#"{"leaf1":{"a":1}}"#)))
        // A scalar above the share holds none of it: the share is emptied.
        let scalar = try #require(Self.projected(Self.op(2, "/", .set(.int(5)))))
        #expect(scalar.kind == .set(.null) && scalar.isPartial)
    }

    @Test("a merge keeps the children in the share, cuts those above it, and drops the others")
    func mergeStraddling() throws {
        let children = try MergeChild.validated([
            MergeChild(relative: Self.path("/leaf1/a"), value: .int(1)),
            MergeChild(relative: Self.path("/leaf2/b"), value: .int(2)),
        ])
        let merge = Self.op(1, "/stores", .merge(children))
        let cut = try #require(Self.projected(merge))
        #expect(cut.kind == .merge([MergeChild(relative: Self.path("/leaf1/a"), value: .int(1))]))
        let rootMerge = Self.op(
            2, "/", .merge([MergeChild(relative: Self.path("/stores"), value: Self.json(#"{"leaf1":1,"leaf3":3}"#))]))
        let cutRoot = try #require(Self.projected(rootMerge))
        #expect(cutRoot.kind == .merge([MergeChild(relative: Self.path("/stores"), value: Self.json(#"{"leaf1":1}"#))]))
        let away = Self.op(3, "/stores", .merge([MergeChild(relative: Self.path("/leaf2"), value: .int(1))]))
        #expect(try OpProjection.isWithheld(#require(Self.projected(away))))
    }

    @Test("an increment above the share is withheld but keeps its node as a touch")
    func incrementAbove() throws {
        let increment = Self.op(1, "/stores", .increment(by: .int(1), from: .int(0)))
        let placeholder = try #require(Self.projected(increment))
        #expect(OpProjection.isWithheld(placeholder))
        #expect(placeholder.anchors == [Self.path("/stores")])
    }

    @Test("a transaction above the share carries the hub's decision, and is undecided without it")
    func transactionAbove() throws {
        let result = Self.json(#"{"leaf1":{"n":1},"leaf2":{"n":2}}"#)
        let transaction = Self.op(1, "/stores", .transaction(read: VersionVector(), result: result))
        #expect(OpProjection.project(transaction, into: Self.share, outcome: nil, seen: Self.seen) == .undecided)
        let applied = try #require(Self.projected(transaction, outcome: .applied))
        // Applied: its result in the share, as a guarded batch that had seen what the hub holds, so the
        // leaf applies it; it still touches /stores for the transactions after it.
        #expect(
            applied.kind
                == .guardedBatch(
                    read: Self.seen, reads: [Self.path("/stores")],
                    writes: [.set(Self.path("/stores"), Self.json(#"{"leaf1":{"n":1}}"#))]))
        #expect(applied.isPartial && applied.path == Self.path("/stores"))
        let rejected = try #require(Self.projected(transaction, outcome: .rejected(.staleRead(transaction.path))))
        #expect(OpProjection.isWithheld(rejected) && rejected.anchors == [Self.path("/stores")])
        // Inside the share the replica decides it itself: it goes whole.
        let inside = Self.op(2, "/stores/leaf1/n", .transaction(read: VersionVector(), result: .int(1)))
        #expect(OpProjection.project(inside, into: Self.share, outcome: nil, seen: Self.seen) == .whole)
    }

    @Test("a batch whose increment outside the share may reject it goes as the hub decided it")
    func batchWithIncrementOutside() throws {
        let writes: [Write] = [
            .set(Self.path("/stores/leaf1/order"), .string("o1")),
            .increment(Self.path("/stores/leaf2/stock"), by: .int(-1), from: .int(0)),
        ]
        let batch = Self.op(1, "/stores", .batch(writes))
        #expect(OpProjection.project(batch, into: Self.share, outcome: nil, seen: Self.seen) == .undecided)
        let applied = try #require(Self.projected(batch, outcome: .applied))
        let order = Self.path("/stores/leaf1/order")
        #expect(applied.kind == .guardedBatch(read: Self.seen, reads: [order], writes: [.set(order, .string("o1"))]))
        #expect(applied.path == order)
        let rejected = try #require(Self.projected(batch, outcome: .rejected(.notANumber(Self.path("/stores/leaf2/stock")))))
        #expect(OpProjection.isWithheld(rejected))
        // With the increment inside, the share decides: the batch goes cut, no outcome needed.
        let decidable = Self.op(
            2, "/stores",
            .batch([
                .increment(Self.path("/stores/leaf1/stock"), by: .int(-1), from: .int(0)),
                .set(Self.path("/stores/leaf2/x"), .int(1)),
            ]))
        let cut = try #require(Self.projected(decidable))
        #expect(cut.kind == .batch([.increment(Self.path("/stores/leaf1/stock"), by: .int(-1), from: .int(0))]))
    }

    @Test("a guarded batch reading outside the share carries the decision; reading inside it keeps its reads")
    func guardedBatches() throws {
        let (outsidePath, outsideKind) = try OpKind.guarded(
            read: VersionVector(), reads: [Self.path("/stores/leaf2/stock")],
            writes: [.set(Self.path("/stores/leaf1/order"), .int(1))])
        let readsOutside = Op(
            stamp: Stamp(millis: 101, counter: 0, replica: Self.hub), sequence: 1, path: outsidePath, kind: outsideKind)
        #expect(OpProjection.project(readsOutside, into: Self.share, outcome: nil, seen: Self.seen) == .undecided)
        let applied = try #require(Self.projected(readsOutside, outcome: .applied))
        let order = Self.path("/stores/leaf1/order")
        #expect(applied.kind == .guardedBatch(read: Self.seen, reads: [order], writes: [.set(order, .int(1))]))
        let (insidePath, insideKind) = try OpKind.guarded(
            read: VersionVector(), reads: [Self.path("/stores/leaf1/stock")],
            writes: [.set(Self.path("/stores/leaf1/order"), .int(1)), .set(Self.path("/stores/leaf2/order"), .int(2))])
        let readsInside = Op(
            stamp: Stamp(millis: 102, counter: 0, replica: Self.hub), sequence: 2, path: insidePath, kind: insideKind)
        let cut = try #require(Self.projected(readsInside))
        #expect(
            cut.kind
                == .guardedBatch(
                    read: VersionVector(), reads: [Self.path("/stores/leaf1/stock")],
                    writes: [.set(Self.path("/stores/leaf1/order"), .int(1))]))
        #expect(cut.path == Self.path("/stores/leaf1"))
    }

    // MARK: - Codec

    @Test("partial ops round-trip through the codec with their own format byte")
    func partialCodec() throws {
        let set = Self.op(1, "/stores", .set(Self.json(#"{"leaf1":{"a":1},"leaf2":2}"#)))
        let outside = Self.op(2, "/stores/leaf2", .increment(by: .int(1), from: .int(0)))
        for op in [try #require(Self.projected(set)), try #require(Self.projected(outside))] {
            let bytes = OpCodec.encode(op)
            #expect(bytes.first == OpCodec.partialFormat)
            let back = try OpCodec.decode(bytes)
            #expect(back == op && back.isPartial)
        }
        #expect(OpCodec.encode(set).first == OpCodec.format)
        #expect(try !OpCodec.decode(OpCodec.encode(set)).isPartial)
    }

    @Test("a whole op's encoding may not hold a guarded batch without reads or writes")
    func emptyGuardedBatchNeedsPartialFormat() throws {
        let placeholder = try #require(Self.projected(Self.op(1, "/stores/leaf2", .set(.int(1)))))
        var bytes = OpCodec.encode(placeholder)
        bytes[0] = OpCodec.format
        #expect(throws: CoreError.self) { try OpCodec.decode(bytes) }
    }

    // MARK: - Property

    /// Paths over a small space, so that ops collide in, above and beside the share.
    struct Generator {
        var random: RandomCore
        var sequences: [ReplicaID: UInt64] = [:]
        var made: [ReplicaID: UInt64] = [:]
        var millis: UInt64 = 1000

        static let levels: [[Key]] = [["s", "t"], ["a", "b"], ["x", "y"], ["p", "q"]]

        mutating func path(depth: ClosedRange<Int> = 0...4, under prefix: [Key] = []) -> Path {
            let depth = max(random.rng.int(in: depth), prefix.count)
            var keys = prefix
            while keys.count < depth { keys.append(Self.levels[keys.count][Int(random.rng.below(2))]) }
            return Path(uncheckedKeys: keys)
        }

        mutating func value(depth: Int) -> Value {
            if depth >= 4 || random.rng.chance(0.5) { return .int(Int64(random.rng.int(in: -3...9))) }
            var children: [Key: Value] = [:]
            for key in Self.levels[depth] where random.rng.chance(0.6) { children[key] = value(depth: depth + 1) }
            return children.isEmpty ? .int(1) : .object(children)
        }

        mutating func write(under prefix: [Key]) -> Write {
            switch random.rng.below(3) {
            case 0:
                let path = path(under: prefix)
                return .set(path, value(depth: path.depth))
            case 1:
                let path = path(depth: 0...3, under: prefix)
                let key = Self.levels[path.depth][Int(random.rng.below(2))]
                return .merge(path, [MergeChild(relative: Path(uncheckedKeys: [key]), value: value(depth: path.depth + 1))])
            default:
                return .increment(path(under: prefix), by: .int(1), from: .int(0))
            }
        }

        /// One op of `origin`, written under `prefix` (the leaf writes only in its share).
        mutating func op(origin: ReplicaID, under prefix: [Key], seen: VersionVector) -> Op {
            let sequence = (sequences[origin] ?? 0) + 1
            sequences[origin] = sequence
            millis += UInt64(random.rng.int(in: 1...3))
            let stamp = Stamp(millis: millis, counter: 0, replica: origin)
            var read = seen
            read.advance(origin: origin, to: sequence - 1)
            let path: Path
            let kind: OpKind
            switch random.rng.below(7) {
            case 0, 1:
                path = self.path(under: prefix)
                kind = .set(value(depth: path.depth))
            case 2:
                path = self.path(depth: 0...3, under: prefix)
                let keys = Self.levels[path.depth].filter { _ in random.rng.chance(0.7) }
                let children = (keys.isEmpty ? [Self.levels[path.depth][0]] : keys).map {
                    MergeChild(relative: Path(uncheckedKeys: [$0]), value: value(depth: path.depth + 1))
                }
                kind = .merge(children)
            case 3:
                path = self.path(under: prefix)
                kind = .increment(by: .int(1), from: .int(0))
            case 4:
                let writes = (0..<random.rng.int(in: 1...3)).map { _ in write(under: prefix) }
                path = writes.dropFirst().reduce(writes[0].path) { $0.commonAncestor(with: $1.path) }
                kind = .batch(writes)
            case 5:
                path = self.path(under: prefix)
                kind = .transaction(read: read, result: value(depth: path.depth))
            default:
                let writes = (0..<random.rng.int(in: 1...2)).map { _ in write(under: prefix) }
                let reads = (0..<random.rng.int(in: 1...2)).map { _ in self.path(under: prefix) }
                if let guarded = try? OpKind.guarded(read: read, reads: reads, writes: writes) {
                    (path, kind) = guarded
                } else {
                    path = writes[0].path
                    kind = .batch(writes)
                }
            }
            return Op(stamp: stamp, sequence: sequence, path: path, kind: kind)
        }
    }

    @Test("the fold of the projected ops is the share of the hub's fold, and holds nothing outside it")
    func projectedFoldEqualsShare() async {
        let share = PrefixShare(["/s/a", "/s/b/x"])
        let origins = [Self.hub, Self.other, Self.leaf]
        await propertyCheck(count: 150, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            Self.checkShare(seed: seed, share: share, origins: origins)
        }
    }

    @Test("a leaf converges on the hub's share when late ops stamped earlier flip carried decisions")
    func revisedDecisionsConverge() async {
        let share = PrefixShare(["/s/a", "/s/b/x"])
        let origins = [Self.hub, Self.other, Self.leaf, Self.late]
        var total = Relay.Counts()
        await propertyCheck(count: 200, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            let counts = Self.checkRevisions(seed: seed, share: share, origins: origins)
            total.carried += counts.carried
            total.revised += counts.revised
            total.flipped += counts.flipped
        }
        // The property is about flips: the cases must hold some (and decisions carried to start with).
        #expect(total.carried > 0 && total.revised > 0 && total.flipped > 0, "\(total)")
    }

    /// An origin that first reaches the hub late in a case, so that decisions carried before name it not.
    static let late = ReplicaID(rawValue: 0x5C)!

    /// One case: ops of four origins reach the hub in a shuffled order (so that ops stamped earlier arrive
    /// later, and an origin appears after decisions were carried). The leaf's engine ends on the share of
    /// the hub's.
    static func checkRevisions(seed: Int, share: PrefixShare, origins: [ReplicaID]) -> Relay.Counts {
        var generator = Generator(random: RandomCore(seed: UInt64(seed)))
        var ops: [Op] = []
        for _ in 0..<generator.random.rng.int(in: 2...24) {
            let origin = origins[Int(generator.random.rng.below(UInt64(origins.count)))]
            var seen = VersionVector()
            for (made, count) in generator.sequences where count > 0 {
                seen.advance(origin: made, to: generator.random.rng.below(count + 1))
            }
            let prefix: [Key] = origin == Self.leaf ? ["s", "a"] : []
            ops.append(generator.op(origin: origin, under: prefix, seen: seen))
        }
        var arrivals = ops
        generator.random.rng.shuffle(&arrivals)
        var relay = Relay(share: share)
        for op in arrivals { relay.arrive(op, seed: seed) }
        #expect(relay.leaf.state == share.restrict(relay.hub.state, at: .root), "seed \(seed)")
        expectInvariants(relay.leaf)
        return relay.counts
    }

    /// A hub and a leaf limited to `share`, as a hub's session relays ops: after each op reaches the hub,
    /// the leaf gets first the carried decisions that changed (revisions), then the new op, each
    /// projected with the hub's outcome (and a call's result) and every origin the hub knows seen.
    struct Relay {
        struct Counts {
            var carried = 0
            var revised = 0
            var flipped = 0
        }

        let share: PrefixShare
        let hub: MergeEngine
        var leaf = MergeEngine()
        var carried: [Stamp: (op: Op, sent: Op)] = [:]
        var counts = Counts()

        init(share: PrefixShare, hub: MergeEngine = MergeEngine()) {
            self.share = share
            self.hub = hub
        }

        mutating func arrive(_ op: Op, seed: Int) {
            hub.apply([op])
            var seen = VersionVector(hub.versionVector.entries.mapValues { _ in OpProjection.everySequence })
            seen.advance(origin: OpProjectionTests.leaf, to: OpProjection.everySequence)
            var revisions: [Op] = []
            for (stamp, decision) in carried {
                guard let outcome = hub.outcome(of: stamp),
                    case .partial(let now) = OpProjection.project(
                        decision.op, into: share, outcome: outcome, seen: seen, result: hub.result(ofCall: stamp)),
                    now != decision.sent
                else { continue }
                revisions.append(now)
                if OpProjection.isWithheld(now) != OpProjection.isWithheld(decision.sent) { counts.flipped += 1 }
                carried[stamp] = (decision.op, now)
            }
            if !revisions.isEmpty {
                counts.revised += revisions.count
                do {
                    if let revision = try leaf.revising(revisions, baseVector: VersionVector()) {
                        leaf = revision.engine
                    }
                } catch {
                    Issue.record("seed \(seed): a revision was refused: \(error)")
                }
            }
            var asked = false
            let hub = self.hub
            let outcome: () -> Outcome? = {
                asked = true
                return hub.outcome(of: op.stamp)
            }
            let result = hub.result(ofCall: op.stamp)
            switch OpProjection.project(op, into: share, outcome: outcome(), seen: seen, result: result) {
            case .whole: leaf.apply([op])
            case .partial(let cut):
                leaf.apply([cut])
                if asked {
                    carried[op.stamp] = (op, cut)
                    counts.carried += 1
                }
            case .undecided: Issue.record("seed \(seed): op \(op.sequence) of \(op.origin) undecided")
            }
        }
    }

    @Test("a call above the share reaches the leaf as the hub's result, revised when a late op changes it")
    func callAboveTheShare() throws {
        var registry = FunctionRegistry()
        // Doubles every integer below the node: the leaf could not run it (it lacks /s/b).
        registry.register(name: "double", version: 1) { value, _ in Self.doubled(value) }
        let share = PrefixShare(["/s/a"])
        var relay = Relay(share: share, hub: MergeEngine(registry: registry))
        let call = OpKind.call(FunctionCall(name: "double", version: 1, arguments: .null))
        relay.arrive(Self.op(1, "/s", .set(Self.json(#"{"a":{"x":1},"b":2}"#))), seed: 0)
        relay.arrive(Self.op(2, "/s", call, millis: 103), seed: 0)
        #expect(relay.hub.state == Self.json(#"{"s":{"a":{"x":2},"b":4}}"#))
        #expect(relay.leaf.state == Self.json(#"{"s":{"a":{"x":2}}}"#), "the hub's result, cut to the share")
        // Stamped before the call, it reaches the hub after it: the call doubles 5 now.
        relay.arrive(Self.op(1, "/s/a/x", .set(.int(5)), origin: Self.other, millis: 102), seed: 0)
        #expect(relay.hub.state == Self.json(#"{"s":{"a":{"x":10},"b":4}}"#))
        #expect(relay.leaf.state == share.restrict(relay.hub.state, at: .root))
        #expect(relay.counts.carried == 1 && relay.counts.revised == 1)
        // A call still waiting for its function goes as a placeholder (it wrote nothing yet).
        let waiting = Self.op(4, "/s", .call(FunctionCall(name: "unknown", version: 1, arguments: .null)))
        #expect(try OpProjection.isWithheld(#require(Self.projected(waiting, outcome: .waiting))))
        #expect(OpProjection.carriesDecision(waiting, into: share))
    }

    static func doubled(_ value: Value) -> Value {
        switch value {
        case .int(let number): return .int(number * 2)
        case .object(let children): return .object(children.mapValues(doubled))
        default: return value
        }
    }

    /// One case of the property: ops of three origins (the leaf writing only in its share), folded on
    /// the hub and, projected with the hub's outcomes, on the leaf.
    static func checkShare(seed: Int, share: PrefixShare, origins: [ReplicaID]) {
        var generator = Generator(random: RandomCore(seed: UInt64(seed)))
        var ops: [Op] = []
        for _ in 0..<generator.random.rng.int(in: 1...24) {
            let origin = origins[Int(generator.random.rng.below(3))]
            // Each origin saw a random part of what was made so far.
            var seen = VersionVector()
            for (made, count) in generator.sequences where count > 0 {
                seen.advance(origin: made, to: generator.random.rng.below(count + 1))
            }
            let prefix: [Key] = origin == Self.leaf ? ["s", "a"] : []
            ops.append(generator.op(origin: origin, under: prefix, seen: seen))
        }
        let hubFold = ReferenceFold.fold(ops, registry: FunctionRegistry())
        var sent: [Op] = []
        for op in ops {
            let seen = VersionVector(generator.sequences.mapValues { _ in OpProjection.everySequence })
            switch OpProjection.project(op, into: share, outcome: hubFold.outcomes[op.stamp], seen: seen) {
            case .whole: sent.append(op)
            case .partial(let cut): sent.append(cut)
            case .undecided: Issue.record("op \(op.sequence) of \(op.origin) undecided with its outcome given")
            }
        }
        let leafFold = ReferenceFold.fold(sent, registry: FunctionRegistry())
        #expect(leafFold.state == share.restrict(hubFold.state, at: .root), "seed \(seed)")
        #expect(share.restrict(leafFold.state, at: .root) == leafFold.state, "seed \(seed): a value outside the share")
        // The leaf's own engine, the ops arriving in another order, lands on the same state.
        var shuffled = sent
        generator.random.rng.shuffle(&shuffled)
        let engine = MergeEngine()
        for op in shuffled { engine.apply([op]) }
        expectInvariants(engine)
        #expect(engine.state == leafFold.state, "seed \(seed)")
    }
}
