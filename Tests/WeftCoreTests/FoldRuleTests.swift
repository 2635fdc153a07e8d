import PropertyBased
import Testing
import WeftTestSupport

@testable import WeftCore

/// The rules of each op kind, observed through the reference fold (blueprint §4).
@Suite struct FoldRuleTests {
    let alice = ReplicaID(rawValue: 0xA11CE)!
    let bob = ReplicaID(rawValue: 0xB0B)!

    func op(_ origin: ReplicaID, at millis: UInt64, sequence: UInt64, _ path: String, _ kind: OpKind) throws -> Op {
        try .make(kind, at: path, origin: origin, millis: millis, sequence: sequence)
    }

    func fold(_ ops: [Op], base: Value = .null, registry: FunctionRegistry = FunctionRegistry()) -> ReferenceFold.Result
    {
        ReferenceFold.fold(ops, base: base, registry: registry)
    }

    func json(_ text: String) throws -> Value { try Value(json: text) }

    func children(_ pairs: [(String, Value)]) throws -> [MergeChild] {
        try MergeChild.validated(pairs.map { MergeChild(relative: try Path($0.0), value: $0.1) })
    }

    // MARK: - Set

    @Test func aSetReplacesTheWholeSubtree() throws {
        let set = try op(alice, at: 1, sequence: 1, "/a", .set(try json(#"{"d":3}"#)))
        let result = fold([set], base: try json(#"{"a":{"b":1,"c":2},"z":0}"#))
        #expect(result.state == (try json(#"{"a":{"d":3},"z":0}"#)))
        #expect(result.outcomes[set.stamp] == .applied)
    }

    @Test func aNullSetDeletesTheNodeAndPrunesTheParentsItEmpties() throws {
        let delete = try op(alice, at: 1, sequence: 1, "/a/b/c", .set(.null))
        #expect(fold([delete], base: try json(#"{"a":{"b":{"c":1}},"z":0}"#)).state == (try json(#"{"z":0}"#)))
        #expect(fold([delete], base: try json(#"{"a":{"b":{"c":1}}}"#)).state == .null)
    }

    @Test func aSetUnderAScalarTurnsTheScalarIntoAnObject() throws {
        let set = try op(alice, at: 1, sequence: 1, "/a/b", .set(.int(1)))
        #expect(fold([set], base: try json(#"{"a":"text"}"#)).state == (try json(#"{"a":{"b":1}}"#)))
    }

    @Test func aNullSetUnderAScalarChangesNothing() throws {
        let base = try json(#"{"a":"text"}"#)
        let set = try op(alice, at: 1, sequence: 1, "/a/b", .set(.null))
        let result = fold([set], base: base)
        #expect(result.state == base)
        #expect(result.outcomes[set.stamp] == .applied)
    }

    // MARK: - Merge

    @Test func aMergeSetsTheListedChildrenAndKeepsTheOthers() throws {
        let merge = try op(
            alice, at: 1, sequence: 1, "/u",
            .merge(try children([("score", .int(2)), ("profile/city", .string("Lyon")), ("city", .null)])))
        let result = fold([merge], base: try json(#"{"u":{"name":"a","score":1,"city":"x"}}"#))
        #expect(result.state == (try json(#"{"u":{"name":"a","score":2,"profile":{"city":"Lyon"}}}"#)))
    }

    @Test func aMergeOfNullsCanEmptyTheNode() throws {
        let merge = try op(alice, at: 1, sequence: 1, "/u", .merge(try children([("a", .null), ("b", .null)])))
        #expect(fold([merge], base: try json(#"{"u":{"a":1,"b":2}}"#)).state == .null)
    }

    // MARK: - Increment

    @Test func incrementingANullNodeCountsItAsFrom() throws {
        let increment = try op(alice, at: 1, sequence: 1, "/n", .increment(by: .int(2), from: .int(10)))
        #expect(fold([increment]).state == (try json(#"{"n":12}"#)))
        let fromDouble = try op(alice, at: 1, sequence: 1, "/n", .increment(by: .int(2), from: .double(0.5)))
        #expect(fold([fromDouble]).state == .object(["n": .double(2.5)]))
    }

    /// The engine's in-order increment walks the tree once; under a scalar, or on a non-number, it
    /// takes the general road. Each case, applied in order, lands where the fold lands.
    @Test func inOrderIncrementsMatchTheFoldUnderScalarsAndOnNonNumbers() throws {
        let cases: [[Op]] = [
            [
                try op(alice, at: 1, sequence: 1, "/a", .set(.int(5))),
                try op(alice, at: 2, sequence: 2, "/a/b", .increment(by: .int(2), from: .int(10))),
            ],
            [
                try op(alice, at: 1, sequence: 1, "/a", .set(.string("x"))),
                try op(alice, at: 2, sequence: 2, "/a", .increment(by: .int(2), from: .int(0))),
            ],
            [
                try op(alice, at: 1, sequence: 1, "/a/b", .set(.double(1.5))),
                try op(alice, at: 2, sequence: 2, "/a/b", .increment(by: .int(2), from: .int(0))),
                try op(
                    alice, at: 3, sequence: 3, "/a/b", .increment(by: .double(.greatestFiniteMagnitude), from: .int(0))),
                try op(
                    alice, at: 4, sequence: 4, "/a/b", .increment(by: .double(.greatestFiniteMagnitude), from: .int(0))),
            ],
        ]
        for ops in cases {
            let expected = fold(ops)
            let engine = MergeEngine()
            let report = engine.apply(ops)
            #expect(engine.state == expected.state)
            for op in ops { #expect(report.outcomes[op.stamp] == expected.outcomes[op.stamp]) }
        }
    }

    @Test func incrementingANumberAddsTheStep() throws {
        let ops = try [1, 2, 3].map {
            try op(alice, at: $0, sequence: $0, "/n", .increment(by: .int(5), from: .int(100)))
        }
        #expect(fold(ops, base: try json(#"{"n":1}"#)).state == (try json(#"{"n":16}"#)))
        let half = try op(alice, at: 1, sequence: 1, "/n", .increment(by: .double(0.5), from: .int(0)))
        #expect(fold([half], base: try json(#"{"n":1}"#)).state == .object(["n": .double(1.5)]))
    }

    @Test func anIntegerOverflowBecomesADouble() throws {
        let increment = try op(alice, at: 1, sequence: 1, "/n", .increment(by: .int(1), from: .int(0)))
        let result = fold([increment], base: .object(["n": .int(.max)]))
        #expect(result.state == .object(["n": .double(0x1p63)]))
        #expect(result.outcomes[increment.stamp] == .applied)
    }

    @Test(arguments: [#""text""#, "true", #"{"x":1}"#])
    func incrementingSomethingElseIsRejectedAndChangesNothing(current: String) throws {
        let base = Value.object(["n": try json(current), "z": .int(0)])
        let increment = try op(alice, at: 1, sequence: 1, "/n", .increment(by: .int(1), from: .int(0)))
        let result = fold([increment], base: base)
        #expect(result.state == base)
        #expect(result.outcomes[increment.stamp] == .rejected(.notANumber(try Path("/n"))))
    }

    @Test func anIncrementThatWouldNotBeFiniteIsRejected() throws {
        let base = Value.object(["n": .double(.greatestFiniteMagnitude)])
        let increment = try op(
            alice, at: 1, sequence: 1, "/n", .increment(by: .double(.greatestFiniteMagnitude), from: .int(0)))
        let result = fold([increment], base: base)
        #expect(result.state == base)
        #expect(result.outcomes[increment.stamp] == .rejected(.nonFinite(try Path("/n"))))
    }

    @Test func concurrentIncrementsAllCountAfterTheLastSet() throws {
        let ops = [
            try op(alice, at: 1, sequence: 1, "/n", .increment(by: .int(1), from: .int(0))),
            try op(bob, at: 2, sequence: 1, "/n", .set(.int(100))),
            try op(alice, at: 3, sequence: 2, "/n", .increment(by: .int(2), from: .int(0))),
            try op(bob, at: 3, sequence: 2, "/n", .increment(by: .int(3), from: .int(0))),
        ]
        #expect(fold(ops).state == (try json(#"{"n":105}"#)))
    }

    // MARK: - Order and duplicates

    @Test func theFoldAppliesOpsByStampWhateverTheirArrivalOrderAndDuplicates() throws {
        let first = try op(bob, at: 1, sequence: 1, "/x", .set(.int(1)))
        let second = try op(alice, at: 2, sequence: 1, "/x", .set(.int(2)))
        let tie = try op(bob, at: 2, sequence: 2, "/y", .set(.int(3)))
        let expected = try json(#"{"x":2,"y":3}"#)
        #expect(fold([second, first, tie, first, second]).state == expected)
        #expect(fold([tie, first, second]).state == expected)
    }

    @Test func randomArrivalOrdersWithDuplicatesGiveTheSameState() async {
        await propertyCheck(count: 200, input: seeds) { seed in
            var random = RandomCore(seed: seed)
            var ops: [Op] = []
            for sequence in 1...UInt64(random.rng.int(in: 1...12)) {
                let kind: OpKind
                switch random.rng.below(3) {
                case 0: kind = .set(random.value())
                case 1: kind = .merge(random.mergeChildren(below: .root))
                default: kind = .increment(by: random.number(), from: random.number())
                }
                let stamp = Stamp(millis: random.rng.below(5), counter: UInt16(sequence), replica: alice)
                ops.append(Op(stamp: stamp, sequence: sequence, path: random.path(depthMax: 2), kind: kind))
            }
            let reference = ReferenceFold.fold(ops, registry: FunctionRegistry())
            var arrived = ops + ops.filter { _ in random.rng.chance(0.3) }
            random.rng.shuffle(&arrived)
            let refolded = ReferenceFold.fold(arrived, registry: FunctionRegistry())
            #expect(refolded.state == reference.state)
            #expect(refolded.outcomes == reference.outcomes)
        }
    }

    // MARK: - Batch

    @Test func aBatchAppliesEveryPartUnderOneStamp() throws {
        let batch = try op(
            alice, at: 1, sequence: 1, "/",
            .batch([
                .set(try Path("/a"), .int(1)),
                .merge(try Path("/m"), try children([("x", .int(1)), ("y/z", .int(2))])),
                .increment(try Path("/n"), by: .int(5), from: .int(10)),
            ]))
        let result = fold([batch], base: try json(#"{"keep":true}"#))
        #expect(result.state == (try json(#"{"a":1,"keep":true,"m":{"x":1,"y":{"z":2}},"n":15}"#)))
        #expect(result.outcomes[batch.stamp] == .applied)
    }

    @Test func aRejectedPartLeavesTheStateExactlyAsItWas() throws {
        let base = try json(#"{"a":5,"s":"str","keep":{"x":1},"deep":{"v":{"w":1}}}"#)
        let batch = try op(
            alice, at: 1, sequence: 1, "/",
            .batch([
                .set(try Path("/a/b"), .int(1)),  // turns the scalar /a into an object
                .merge(try Path("/keep"), try children([("x", .null), ("y", .int(2))])),
                .set(try Path("/deep/v/w"), .null),  // prunes /deep entirely
                .set(try Path("/new/leaf"), .int(1)),
                .increment(try Path("/n"), by: .int(1), from: .int(0)),  // accepted on its own
                .increment(try Path("/s"), by: .int(1), from: .int(0)),  // rejected: a string
            ]))
        let result = fold([batch], base: base)
        #expect(result.outcomes[batch.stamp] == .rejected(.notANumber(try Path("/s"))))
        #expect(result.state == base)
        #expect(StateDigest(of: result.state) == StateDigest(of: base))
    }

    @Test func aRejectedBatchThatReplacedTheRootRestoresIt() throws {
        let base = try json(#"{"a":{"b":1},"s":1}"#)
        let batch = try op(
            alice, at: 1, sequence: 1, "/",
            .batch([
                .set(try Path("/a/b/c"), .int(1)),
                .set(.root, try json(#"{"s":"now a string"}"#)),
                .increment(try Path("/s"), by: .int(1), from: .int(0)),
            ]))
        let result = fold([batch], base: base)
        #expect(result.outcomes[batch.stamp] == .rejected(.notANumber(try Path("/s"))))
        #expect(result.state == base)
    }

    @Test func randomRejectedBatchesLeaveNoTrace() async {
        await propertyCheck(count: 500, input: seeds) { seed in
            var random = RandomCore(seed: seed)
            var base = random.value(depthMax: 3)
            base.write(.string("trap"), at: ["trap"])
            var parts = (0..<random.rng.int(in: 0...5)).map { _ in random.write() }
            parts.append(.increment(try Path("/trap"), by: .int(1), from: .int(0)))
            random.rng.shuffle(&parts)
            let batch = Op(
                stamp: Stamp(millis: 1, counter: 0, replica: alice), sequence: 1, path: .root, kind: .batch(parts))
            let result = ReferenceFold.fold([batch], base: base, registry: FunctionRegistry())
            if case .rejected = result.outcomes[batch.stamp] {
                #expect(result.state == base)
            } else {
                // Applied parts behave as the same writes folded one by one.
                #expect(result.outcomes[batch.stamp] == .applied)
                var sequential = base
                for part in parts {
                    let single: OpKind
                    switch part {
                    case .set(_, let value): single = .set(value)
                    case .merge(_, let children): single = .merge(children)
                    case .increment(_, let by, let from): single = .increment(by: by, from: from)
                    }
                    let one = Op(stamp: batch.stamp, sequence: 1, path: part.path, kind: single)
                    sequential = ReferenceFold.fold([one], base: sequential, registry: FunctionRegistry()).state
                }
                #expect(result.state == sequential)
            }
        }
    }

    // MARK: - Transaction

    @Test func aTransactionIsRejectedWhenAnUnseenOpTouchedItsSubtreeBeforeIt() throws {
        let unseen = try op(bob, at: 100, sequence: 1, "/t/x", .set(.int(1)))
        let transaction = try op(
            alice, at: 200, sequence: 1, "/t", .transaction(read: VersionVector(), result: .int(7)))
        let result = fold([transaction, unseen])
        #expect(result.outcomes[transaction.stamp] == .rejected(.staleRead(try Path("/t"))))
        #expect(result.state == (try json(#"{"t":{"x":1}}"#)))
    }

    @Test func anUnseenWriteToAnAncestorAlsoMakesTheReadStale() throws {
        let unseen = try op(bob, at: 100, sequence: 1, "/", .set(try json(#"{"t":5}"#)))
        let transaction = try op(
            alice, at: 200, sequence: 1, "/t", .transaction(read: VersionVector(), result: .int(7)))
        #expect(fold([unseen, transaction]).outcomes[transaction.stamp] == .rejected(.staleRead(try Path("/t"))))
    }

    @Test func aTransactionIsAcceptedWhenItSawEverythingBeforeIt() throws {
        let seen = try op(bob, at: 100, sequence: 1, "/t/x", .set(.int(1)))
        let own = try op(alice, at: 150, sequence: 1, "/t/y", .set(.int(2)))
        let read = VersionVector([bob: 1, alice: 1])
        let transaction = try op(alice, at: 200, sequence: 2, "/t", .transaction(read: read, result: .int(7)))
        let result = fold([seen, own, transaction])
        #expect(result.outcomes[transaction.stamp] == .applied)
        #expect(result.state == (try json(#"{"t":7}"#)))
    }

    @Test func unseenOpsElsewhereOrLaterInStampOrderDoNotMatter() throws {
        let elsewhere = try op(bob, at: 100, sequence: 1, "/other", .set(.int(1)))
        let transaction = try op(
            alice, at: 200, sequence: 1, "/t", .transaction(read: VersionVector(), result: .int(7)))
        let later = try op(bob, at: 300, sequence: 2, "/t/x", .set(.int(9)))
        let result = fold([later, transaction, elsewhere])
        #expect(result.outcomes[transaction.stamp] == .applied)
        #expect(result.state == (try json(#"{"other":1,"t":{"x":9}}"#)))
    }

    // MARK: - Call

    /// Withdraws `amount` from the balance at the node, refusing to go below zero.
    var bank: FunctionRegistry {
        var registry = FunctionRegistry()
        registry.register(name: "withdraw", version: 1) { balance, arguments in
            guard case .int(let current) = balance, case .int(let amount) = arguments["amount"], amount <= current
            else { return nil }
            return .int(current - amount)
        }
        return registry
    }

    @Test func aCallIsReExecutedAtItsPlaceSoTheInvariantHolds() throws {
        let deposit = try op(bob, at: 1, sequence: 1, "/balance", .set(.int(10)))
        let call = FunctionCall(name: "withdraw", version: 1, arguments: try json(#"{"amount":7}"#))
        let first = try op(alice, at: 2, sequence: 1, "/balance", .call(call))
        let second = try op(bob, at: 3, sequence: 2, "/balance", .call(call))
        let result = fold([second, first, deposit], registry: bank)
        #expect(result.state == (try json(#"{"balance":3}"#)))
        #expect(result.outcomes[first.stamp] == .applied)
        #expect(result.outcomes[second.stamp] == .rejected(.refusedByFunction(name: "withdraw")))
    }

    @Test func aCallSeesTheStateAtItsPlaceNotWhenItArrived() throws {
        let call = FunctionCall(name: "withdraw", version: 1, arguments: try json(#"{"amount":7}"#))
        let withdraw = try op(alice, at: 5, sequence: 1, "/balance", .call(call))
        let earlyDeposit = try op(bob, at: 1, sequence: 1, "/balance", .set(.int(10)))
        let lateTopUp = try op(bob, at: 9, sequence: 2, "/balance", .increment(by: .int(100), from: .int(0)))
        let result = fold([withdraw, lateTopUp, earlyDeposit], registry: bank)
        #expect(result.state == (try json(#"{"balance":103}"#)))
        #expect(result.outcomes[withdraw.stamp] == .applied)
    }

    @Test func aCallOfAMissingFunctionWaitsAndChangesNothing() throws {
        let base = try json(#"{"balance":10}"#)
        let unknown = try op(
            alice, at: 1, sequence: 1, "/balance", .call(FunctionCall(name: "audit", version: 1, arguments: .null)))
        let newer = try op(
            alice, at: 2, sequence: 2, "/balance", .call(FunctionCall(name: "withdraw", version: 2, arguments: .null)))
        let result = fold([unknown, newer], base: base, registry: bank)
        #expect(result.outcomes[unknown.stamp] == .waiting)
        #expect(result.outcomes[newer.stamp] == .waiting)
        #expect(result.state == base)
    }

    @Test func aWaitingCallDoesNotMakeALaterTransactionStale() throws {
        let waiting = try op(
            bob, at: 1, sequence: 1, "/t", .call(FunctionCall(name: "audit", version: 1, arguments: .null)))
        let transaction = try op(alice, at: 2, sequence: 1, "/t", .transaction(read: VersionVector(), result: .int(1)))
        #expect(fold([waiting, transaction]).outcomes[transaction.stamp] == .applied)
    }

    @Test func whatAFunctionReturnsIsNormalizedBeforeItIsStored() throws {
        var registry = FunctionRegistry()
        registry.register(name: "sloppy", version: 1) { _, _ in
            .object(["gone": .null, "empty": .object([:]), "kept": .object(["inner": .object([:]), "v": .int(1)])])
        }
        registry.register(name: "hollow", version: 1) { _, _ in .object(["a": .object(["b": .null])]) }
        let sloppy = try op(
            alice, at: 1, sequence: 1, "/f", .call(FunctionCall(name: "sloppy", version: 1, arguments: .null)))
        #expect(fold([sloppy], registry: registry).state == (try json(#"{"f":{"kept":{"v":1}}}"#)))
        let hollow = try op(
            alice, at: 1, sequence: 1, "/f", .call(FunctionCall(name: "hollow", version: 1, arguments: .null)))
        let result = fold([hollow], base: try json(#"{"f":1,"z":2}"#), registry: registry)
        #expect(result.state == (try json(#"{"z":2}"#)))
        #expect(StateDigest(of: result.state) == StateDigest(of: try json(#"{"z":2}"#)))
    }

    @Test func aFunctionReturningWhatNoWriteMayHoldIsRejectedAndWritesNothing() throws {
        // Its result went into the tree as returned: an infinite number, which no store reads back,
        // or a key no path can name.
        let deep = (0..<CoreLimits.pathDepthMax).reduce(Value.int(1)) { inner, _ in .object(["d": inner]) }
        let results: [(name: String, value: Value, reason: String)] = [
            ("infinite", .double(.infinity), "not finite"),
            ("nan", .object(["x": .double(.nan)]), "not finite"),
            ("badKey", .object([Key(unchecked: "a.b"): .int(1)]), "a.b"),
            ("tooDeep", deep, "deeper than 32"),
        ]
        var registry = FunctionRegistry()
        for result in results { registry.register(name: result.name, version: 1) { _, _ in result.value } }
        for (sequence, result) in results.enumerated() {
            let call = try op(
                alice, at: 1, sequence: UInt64(sequence + 1), "/f",
                .call(FunctionCall(name: result.name, version: 1, arguments: .null)))
            let folded = fold([call], base: try json(#"{"f":1}"#), registry: registry)
            guard case .rejected(.invalidFunctionResult(result.name, let reason))? = folded.outcomes[call.stamp] else {
                Issue.record("\(result.name): \(String(describing: folded.outcomes[call.stamp]))")
                continue
            }
            #expect(reason.contains(result.reason), "\(result.name): \(reason)")
            #expect(folded.state == (try json(#"{"f":1}"#)), "\(result.name) wrote nothing")
        }
    }

    @Test func aFunctionsNegativeZeroIsStoredAsZero() throws {
        var registry = FunctionRegistry()
        registry.register(name: "negate", version: 1) { value, _ in .double(-(Number(value)?.doubleValue ?? 0)) }
        let call = try op(
            alice, at: 1, sequence: 1, "/f", .call(FunctionCall(name: "negate", version: 1, arguments: .null)))
        let folded = fold([call], base: try json(#"{"f":0.0}"#), registry: registry)
        guard case .double(let stored) = folded.state["f"] else {
            Issue.record("\(folded.state)")
            return
        }
        #expect(stored == 0 && stored.sign == .plus)
    }
}
