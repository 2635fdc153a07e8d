import PropertyBased
import Testing

@testable import WeftCore

/// Re-folds keep snapshots of their regions spaced by age, so that an op however late finds one close
/// before it instead of falling back to the base and replaying its region's whole log.
@Suite struct SnapshotThinningTests {
    static let replica = ReplicaID(rawValue: 7)!

    /// Snapshots stamped at the given stamp times (their values name the time, to check which stayed).
    static func snapshots(at times: [UInt64]) -> [(stamp: Stamp, value: Value)] {
        times.map { (Stamp(time: $0, replica: replica), Value.int(Int64($0))) }
    }

    @Test func thinningKeepsAnAscendingSubsetWithTheNewestThird() async {
        await propertyCheck(
            count: 300, input: Gen.int(in: 0...Int(Int32.max))
        ) { seed in
            var rng = SeededGenerator(seed: UInt64(seed))
            var time: UInt64 = rng.below(1 << 40)
            var times: [UInt64] = []
            for _ in 0..<rng.below(200) {
                time += 1 + rng.below(rng.chance(0.2) ? 1 << 30 : 1 << 12)
                times.append(time)
            }
            let limit = 3 + Int(rng.below(60))
            let kept = MergeEngine.thinned(Self.snapshots(at: times), to: limit).map(\.stamp.time)
            #expect(kept.count <= limit, "seed \(seed)")
            #expect(zip(kept, kept.dropFirst()).allSatisfy { $0 < $1 }, "seed \(seed)")
            #expect(Set(kept).isSubset(of: Set(times)), "seed \(seed)")
            let dense = min(times.count, limit / 3)
            #expect(Array(kept.suffix(dense)) == Array(times.suffix(dense)), "seed \(seed)")
            // A list that fits is thinned only where its spacing is denser than its age.
            if times.count <= limit / 3 { #expect(kept == times, "seed \(seed)") }
        }
    }

    /// Rounds of re-folds each append the snapshots they kept and thin the list, as the engine does:
    /// they reach back through most of the history, and from any time since the oldest kept, the latest
    /// one at or before it lies no further back than about twice its distance to the newest (plus the
    /// spacing of the snapshots).
    @Test func aLateOpFindsASnapshotWithinTwiceItsLateness() async {
        await propertyCheck(count: 40, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            var rng = SeededGenerator(seed: UInt64(seed) ^ 0x7417)
            let spacing = 1 + rng.below(1 << 20)
            var kept: [(stamp: Stamp, value: Value)] = []
            let first: UInt64 = 1 << 32
            var time = first
            for _ in 0..<(200 + rng.below(600)) {
                var added: [UInt64] = []
                for _ in 0...rng.below(40) {
                    time += spacing
                    added.append(time)
                }
                kept = MergeEngine.thinned(kept + Self.snapshots(at: added), to: CoreLimits.snapshotsPerNodeMax)
            }
            let times = kept.map(\.stamp.time)
            guard let oldest = times.first, let newest = times.last else {
                Issue.record("nothing kept, seed \(seed)")
                return
            }
            // They still reach back through most of the history (keeping the newest alone covered the
            // last few rounds).
            #expect(oldest - first <= (newest - first) / 4, "seed \(seed)")
            for step in 0...400 {
                let probe = oldest + (newest - oldest) / 400 * UInt64(step)
                guard let before = times.last(where: { $0 <= probe }) else { continue }
                #expect(probe - before <= 2 * (newest - probe) + spacing, "seed \(seed), probe \(probe)")
            }
            #expect(times.count <= CoreLimits.snapshotsPerNodeMax)
        }
    }

    /// On hot keys with many writers, ops arrive later and later behind the others (each origin's stream
    /// drifts as the streams are interleaved at random): re-folds must replay about their lateness, not
    /// their region's whole log. Here, keeping only the newest 32 snapshots replayed 384,789 ops for the
    /// 60,000 merged, and snapshots spaced by age 119,799 (at 1M ops: 306M against 11.7M).
    @Test func reFoldsOnHotKeysReplayAboutTheirLateness() {
        var workload = Workload(seed: 11, replicas: 8)
        let ops = (0..<60_000).map { _ in workload.next() }
        var rng = SeededGenerator(seed: 0x407)
        var streams: [[Op]] = Array(repeating: [], count: 8)
        let origins = workload.replicaIDs
        for op in ops { streams[origins.firstIndex(of: op.origin) ?? 0].append(op) }
        var queues = streams.map { $0[...] }
        var arrival: [Op] = []
        while !queues.isEmpty {
            let pick = Int(rng.below(UInt64(queues.count)))
            if let op = queues[pick].popFirst() { arrival.append(op) }
            if queues[pick].isEmpty { queues.remove(at: pick) }
        }
        let engine = MergeEngine(registry: Workload.registry)
        var start = 0
        while start < arrival.count {
            engine.apply(Array(arrival[start..<min(start + 1_000, arrival.count)]))
            start += 1_000
        }
        #expect(engine.state == ReferenceFold.fold(ops, registry: Workload.registry).state)
        let replayed = engine.statistics.replayedOps
        #expect(replayed < 4 * ops.count, "replayed \(replayed) ops for \(ops.count) merged")
    }
}

/// A snapshot shares its region's value, so the next writes there copy every object on their paths:
/// re-folds keep snapshots of a large region only as often as its size allows, and count its nodes only
/// as far as they need to.
@Suite struct SnapshotCostTests {
    /// A value with four top children (few enough for any rule on the top object alone) holding
    /// `nodes` nodes or a few more: objects of nine scalars.
    static func wide(nodes: Int) -> Value {
        var top: [Key: Value] = [:]
        for part in 0..<4 {
            var records: [Key: Value] = [:]
            for record in 0..<max(1, nodes / 40) {
                var fields: [Key: Value] = [:]
                for field in 0..<9 { fields[Key(unchecked: "f\(field)")] = .int(Int64(record * 10 + field)) }
                records[Key(unchecked: "r\(record)")] = .object(fields)
            }
            top[Key(unchecked: "p\(part)")] = .object(records)
        }
        return .object(top)
    }

    @Test func countingNodesStopsAtTheLimitAndAgreesWithTheCount() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            var workload = Workload(seed: UInt64(seed), replicas: 2)
            var value = Value.null
            for _ in 0..<(seed % 60) {
                let op = workload.next()
                Fold.replay(op, outcome: .applied, to: &value, registry: Workload.registry)
            }
            let count = value.nodeCount
            for limit in [0, 1, count / 2, count - 1, count, count + 1, 10 * count] where limit >= 0 {
                #expect(
                    value.nodeCount(atMost: limit) == (count <= limit ? count : nil),
                    "seed \(seed), \(count) nodes, limit \(limit)")
            }
        }
    }

    @Test func aRegionIsSnapshottedAsOftenAsItsSizeAllows() {
        let engine = MergeEngine(registry: FunctionRegistry())
        let replica = ReplicaID(rawValue: 3)!
        let replayed = 20_000
        for size in [10, 200, 5_000, 40_000] {
            let value = Self.wide(nodes: size)
            let nodes = value.nodeCount
            let mini = Value.object(["r": value])
            let root = Path(uncheckedKeys: ["r"])
            var regions = [MergeEngine.Region(root: root, start: nil, value: nil, ready: true)]
            let roots = RootSet([root, Path(uncheckedKeys: ["s"])])
            for time in 1...replayed {
                let stamp = Stamp(time: UInt64(time), replica: replica)
                let op = Op(
                    stamp: stamp, sequence: UInt64(time), path: Path(uncheckedKeys: ["r", "p0"]), kind: .set(.int(1)))
                // Every other op as if collected for several regions: its region is found from its anchor.
                engine.keepSnapshots(
                    of: &regions, touched: time % 2 == 0 ? 0 : nil, by: op, in: roots, last: false, mini: mini)
            }
            let kept = regions[0].kept.count
            let affordable = replayed * CoreLimits.snapshotNodesPerOp / nodes
            if nodes <= CoreLimits.snapshotNodesSmall {
                #expect(kept == replayed / CoreLimits.snapshotSpacing, "\(nodes) nodes")
            } else {
                // At most one per `nodes / snapshotNodesPerOp` ops, and no sparser than half that: the
                // look-again interval doubles past the size once at most.
                #expect(kept <= affordable + 1, "\(nodes) nodes: kept \(kept)")
                #expect(kept >= affordable / 2 - 1, "\(nodes) nodes: kept \(kept)")
            }
            #expect(regions[0].kept.allSatisfy { $0.value == value })
        }
    }
}
