import WeftCore

/// `weft bench merge`: remote ops applied to the merge engine in memory, shuffled, in batches, against
/// the reference fold of the same ops in the same run.
enum MergeBench {
    /// The order ops arrive in.
    enum Order {
        /// Each origin's ops in sequence order, the origins' streams interleaved at random (as sync
        /// delivers them).
        case interleaved
        /// Every op shuffled (the worst case).
        case fullShuffle
        /// Every op in stamp order: none is late, so only the in-order road is measured.
        case stampOrder

        var description: String {
            switch self {
            case .interleaved: return "origins interleaved at random"
            case .fullShuffle: return "fully shuffled"
            case .stampOrder: return "in stamp order"
            }
        }
    }

    struct Options {
        var ops = 1_000_000
        var batch = 1_000
        var replicas = 8
        var seed: UInt64 = 1
        var order = Order.interleaved
        /// The workload's own small path space with hot keys instead of the benchmark's wide one.
        var hotKeys = false
    }

    /// Arrival order as sync produces it: each origin's ops in sequence order, the origins' streams
    /// interleaved at random.
    static func interleave(_ ops: [Op], rng: inout SeededGenerator) -> [Op] {
        var streams: [ReplicaID: [Op]] = [:]
        for op in ops { streams[op.origin, default: []].append(op) }
        var queues = streams.keys.sorted().map { streams[$0]!.sorted { $0.sequence < $1.sequence }[...] }
        var result: [Op] = []
        result.reserveCapacity(ops.count)
        while !queues.isEmpty {
            let pick = Int(rng.below(UInt64(queues.count)))
            result.append(queues[pick].removeFirst())
            if queues[pick].isEmpty { queues.remove(at: pick) }
        }
        return result
    }

    /// The workload shape of the benchmark: a large path space with a hot tail, all op kinds; or, with
    /// `hotKeys`, the workload's own small one, where half the traffic goes to a few keys.
    static func shape(hotKeys: Bool) -> Workload.Shape {
        var shape = Workload.Shape()
        if hotKeys { return shape }
        shape.items = 20_000
        shape.counters = 200
        shape.accounts = 8
        shape.accountGroups = 2_000
        shape.hotShare = 0.1
        return shape
    }

    static func run(_ options: Options, progress: BenchProgress) -> [Measurement] {
        progress.step("generating \(options.ops) ops from \(options.replicas) replicas (seed \(options.seed))")
        var workload = Workload(seed: options.seed, replicas: options.replicas, shape: shape(hotKeys: options.hotKeys))
        var ops = (0..<options.ops).map { _ in workload.next() }
        var rng = SeededGenerator(seed: options.seed ^ 0x5EED)
        switch options.order {
        case .interleaved: ops = interleave(ops, rng: &rng)
        case .fullShuffle: rng.shuffle(&ops)
        case .stampOrder: ops.sort { $0.stamp < $1.stamp }
        }
        let order = options.order.description + (options.hotKeys ? ", hot keys" : "")

        progress.step("reference fold (baseline)")
        var foldDigest = StateDigest(of: .null)
        let foldSeconds = measureSeconds("reference fold", progress: progress) {
            foldDigest = StateDigest(of: ReferenceFold.fold(ops, registry: Workload.registry).state)
        }

        progress.step("merge engine, batches of \(options.batch)")
        let engine = MergeEngine(registry: Workload.registry, capturesChanges: true)
        var applied = 0
        let engineSeconds = measureSeconds("merge engine", progress: progress) {
            var start = 0
            while start < ops.count {
                let end = min(start + options.batch, ops.count)
                engine.apply(Array(ops[start..<end]))
                start = end
                applied = end
                if applied % (options.ops / 10 == 0 ? 1 : options.ops / 10) == 0 {
                    progress.step("  \(applied)/\(ops.count) ops")
                }
            }
        }
        let matches = engine.digest == foldDigest
        progress.step("digest \(engine.digest) \(matches ? "equals" : "DIFFERS FROM") the reference fold's")
        let stats = engine.statistics
        progress.step(
            "roads: \(stats.inOrder) in order, \(stats.counterShortcuts) counter shortcuts, \(stats.hiddenWrites) hidden, "
                + "\(stats.refolds) re-folds (\(stats.cutRefolds) cut short) replaying \(stats.replayedOps) ops (\(stats.redecidedOps) decided again, "
                + "\(stats.batchedIntoRefolds) batched in; \(stats.checkpointStarts) regions from snapshots or checkpoints; "
                + "largest \(stats.replayedOpsMax) at \(stats.largestRegion?.description ?? "-"))")
        let count = Double(ops.count)
        return [
            Measurement(
                suite: "merge", name: "engine ops/s (\(order), batches of \(options.batch))",
                value: count / engineSeconds, unit: "ops/s",
                baseline: count / foldSeconds),
            Measurement(suite: "merge", name: "reference fold ops/s", value: count / foldSeconds, unit: "ops/s"),
            Measurement(suite: "merge", name: "digest equals reference fold", value: matches ? 1 : 0, unit: "bool"),
        ]
    }
}
