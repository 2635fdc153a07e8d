/// A deterministic generator of realistic op traffic from several replicas: sets, merges, pushes,
/// counter increments, batches, transactions and registered `transfer` calls over a small path space
/// with hot keys. Used by the property tests, `weft bench` and the simulator; the same seed gives the
/// same ops everywhere.
///
/// ```swift
/// var workload = Workload(seed: 7, replicas: 4)
/// let ops = (0..<1000).map { _ in workload.next() }
/// let state = ReferenceFold.fold(ops, registry: Workload.registry).state
/// ```
public struct Workload: Sendable {
    /// Relative weights of each kind of op.
    public struct Mix: Sendable, Hashable {
        public var sets = 30
        public var merges = 10
        public var pushes = 10
        public var increments = 30
        public var counterResets = 2
        public var batches = 8
        public var transactions = 6
        public var calls = 4
        /// Guarded batches (batches that read one to three paths, `OpKind.guardedBatch`). None by
        /// default, so that the traffic of every existing seed stays as it was; tests and simulator runs
        /// that exercise them set a weight.
        public var guardedBatches = 0

        public init() {}

        var total: Int {
            sets + merges + pushes + increments + counterResets + batches + transactions + calls + guardedBatches
        }
    }

    /// Shape of the path space.
    public struct Shape: Sendable, Hashable {
        /// Number of item objects (`/items/i0`, …).
        public var items = 40
        /// Number of counters (`/counters/c0`, …).
        public var counters = 6
        /// Number of accounts in each group that `transfer` calls move money between.
        public var accounts = 4
        /// Number of account groups (`/accounts` itself when 1, else `/accounts/g0`, …); each transfer is
        /// called on one group, as an app calls a function on the subtree it guards.
        public var accountGroups = 1
        /// Share of counter traffic (increments, batch increments, transactions) aimed at account
        /// balances; 0 leaves the accounts to `transfer` calls alone.
        public var accountIncrementShare = 0.15
        /// Share of writes that go to the first few (hot) items and counters.
        public var hotShare = 0.5
        public var mix = Mix()

        public init() {}
    }

    struct Writer: Sendable {
        var clock: HybridClock
        var sequence: UInt64 = 0
    }

    var rng: SeededGenerator
    var writers: [Writer]
    /// Millisecond time of the simulated wall clock.
    var wallMillis: UInt64
    public let shape: Shape
    /// Every op made so far, per writer (for transactions' read vectors).
    var made: [[Stamp]]

    /// A workload of `replicas` writers whose ids and traffic follow from `seed`.
    public init(seed: UInt64, replicas: Int, shape: Shape = Shape(), startMillis: UInt64 = 1_700_000_000_000) {
        precondition(replicas >= 1, "a workload needs a writer")
        rng = SeededGenerator(seed: seed)
        var writers: [Writer] = []
        for _ in 0..<replicas { writers.append(Writer(clock: HybridClock(replica: ReplicaID.random(using: &rng)))) }
        self.writers = writers
        self.wallMillis = startMillis
        self.shape = shape
        self.made = Array(repeating: [], count: replicas)
    }

    /// The replica ids of the writers.
    public var replicaIDs: [ReplicaID] { writers.map(\.clock.replica) }

    /// The registry with the functions the workload calls: `transfer` v1 moves an integer amount between
    /// two accounts under the node it is called on, refusing to drive a balance below zero.
    public static let registry: FunctionRegistry = {
        var registry = FunctionRegistry()
        registry.register(name: "transfer", version: 1, Workload.transfer)
        return registry
    }()

    /// The `transfer` function: arguments `{"from": key, "to": key, "amount": int}`.
    public static let transfer: FunctionRegistry.Function = { accounts, arguments in
        guard case .string(let fromText) = arguments["from"], case .string(let toText) = arguments["to"],
            case .int(let amount) = arguments["amount"], amount > 0, fromText != toText
        else { return nil }
        let from = Key(unchecked: fromText)
        let to = Key(unchecked: toText)
        let balance: Int64
        switch accounts[from] {
        case .int(let value): balance = value
        case .null: balance = 0
        default: return nil
        }
        guard balance >= amount else { return nil }
        var result = accounts
        let target: Int64
        switch accounts[to] {
        case .int(let value): target = value
        case .null: target = 0
        default: return nil
        }
        let (sum, overflow) = target.addingReportingOverflow(amount)
        guard !overflow else { return nil }
        result.write(.int(balance - amount), at: [from][...])
        result.write(.int(sum), at: [to][...])
        return result
    }

    /// The next op, from a writer chosen at random.
    public mutating func next() -> Op {
        let writer = Int(rng.below(UInt64(writers.count)))
        return next(from: writer)
    }

    /// The next op of one writer.
    public mutating func next(from writer: Int) -> Op {
        wallMillis += rng.below(3)
        let skew = UInt64(writer) * 7
        let stamp: Stamp
        do {
            stamp = try writers[writer].clock.next(wallMillis: wallMillis + skew)
        } catch {
            preconditionFailure("workload clock exhausted: \(error)")
        }
        writers[writer].sequence += 1
        let sequence = writers[writer].sequence
        made[writer].append(stamp)
        let (path, kind) = makeKind(writer: writer, stamp: stamp)
        return Op(stamp: stamp, sequence: sequence, path: path, kind: kind)
    }

    mutating func makeKind(writer: Int, stamp: Stamp) -> (Path, OpKind) {
        var roll = Int(rng.below(UInt64(shape.mix.total)))
        let mix = shape.mix
        if roll < mix.sets { return (itemPath(field: true), .set(randomValue(depth: 0))) }
        roll -= mix.sets
        if roll < mix.merges { return (itemPath(field: false), .merge(randomChildren())) }
        roll -= mix.merges
        if roll < mix.pushes {
            let key = Key(unchecked: PushID.make(from: stamp))
            return (Path(uncheckedKeys: ["chat", key]), .set(.string("m\(rng.below(1000))")))
        }
        roll -= mix.pushes
        if roll < mix.increments { return (counterPath(), randomIncrement()) }
        roll -= mix.increments
        if roll < mix.counterResets { return (counterPath(), .set(.int(Int64(rng.below(100))))) }
        roll -= mix.counterResets
        if roll < mix.batches {
            let batch = randomBatch()
            guard case .batch(let writes) = batch, let first = writes.first?.path else { return (.root, batch) }
            return (writes.dropFirst().reduce(first) { $0.commonAncestor(with: $1.path) }, batch)
        }
        roll -= mix.batches
        if roll < mix.transactions {
            let path = rng.chance(0.5) ? itemPath(field: true) : counterPath()
            return (path, .transaction(read: readVector(writer: writer), result: randomValue(depth: 1)))
        }
        roll -= mix.transactions
        if roll < mix.guardedBatches { return randomGuardedBatch(writer: writer) }
        let from = "a\(rng.below(UInt64(shape.accounts)))"
        let to = "a\(rng.below(UInt64(shape.accounts)))"
        let arguments = Value.object([
            "from": .string(from), "to": .string(to), "amount": .int(Int64(1 + rng.below(20))),
        ])
        return (accountGroup(), .call(FunctionCall(name: "transfer", version: 1, arguments: arguments)))
    }

    mutating func hotIndex(_ count: Int) -> Int {
        rng.chance(shape.hotShare) ? Int(rng.below(UInt64(min(2, count)))) : Int(rng.below(UInt64(count)))
    }

    mutating func itemPath(field: Bool) -> Path {
        var keys: [Key] = ["items", "i\(hotIndex(shape.items))"]
        if field {
            let fields: [Key] = ["name", "score", "tags", "deep"]
            keys.append(fields[Int(rng.below(UInt64(fields.count)))])
            if keys.last == "deep", rng.chance(0.5) { keys.append("x\(rng.below(3))") }
        }
        return Path(uncheckedKeys: keys)
    }

    mutating func accountGroup() -> Path {
        guard shape.accountGroups > 1 else { return Path(uncheckedKeys: ["accounts"]) }
        return Path(uncheckedKeys: ["accounts", "g\(hotIndex(shape.accountGroups))"])
    }

    mutating func counterPath() -> Path {
        if shape.accountIncrementShare > 0, rng.chance(shape.accountIncrementShare) {
            return Path(uncheckedKeys: accountGroup().keys + ["a\(rng.below(UInt64(shape.accounts)))"])
        }
        return Path(uncheckedKeys: ["counters", "c\(hotIndex(shape.counters))"])
    }

    mutating func randomIncrement() -> OpKind {
        let by: Number = rng.chance(0.05) ? .double(Double(rng.below(8)) / 4) : .int(Int64(rng.below(15)) - 4)
        return .increment(by: by, from: rng.chance(0.8) ? .int(0) : .int(100))
    }

    mutating func randomValue(depth: Int) -> Value {
        switch rng.below(depth >= 2 ? 5 : 7) {
        case 0: return .null
        case 1: return .bool(rng.chance(0.5))
        case 2: return .int(Int64(rng.below(1000)) - 500)
        case 3: return .double(Double(rng.below(1000)) / 8)
        case 4: return .string("s\(rng.below(50))")
        default:
            var children: [Key: Value] = [:]
            for _ in 0..<(1 + rng.below(3)) { children["k\(rng.below(4))"] = randomValue(depth: depth + 1) }
            return Value.object(normalizing: children)
        }
    }

    mutating func randomChildren() -> [MergeChild] {
        let candidates = ["name", "score", "tags", "deep/x0", "deep/x1", "extra"]
        var chosen: [MergeChild] = []
        for candidate in candidates where rng.chance(0.4) {
            let relative = Path(uncheckedKeys: candidate.split(separator: "/").map { Key(unchecked: String($0)) })
            chosen.append(MergeChild(relative: relative, value: randomValue(depth: 1)))
        }
        if chosen.isEmpty { chosen.append(MergeChild(relative: Path(uncheckedKeys: ["name"]), value: .string("n"))) }
        // Candidates never overlap: "deep/x0" and "deep/x1" are siblings, "deep" itself is not listed.
        return chosen.sorted { $0.relative < $1.relative }
    }

    mutating func randomBatch() -> OpKind {
        var writes: [Write] = []
        for _ in 0..<(2 + rng.below(2)) {
            switch rng.below(3) {
            case 0: writes.append(.set(itemPath(field: true), randomValue(depth: 1)))
            case 1: writes.append(.merge(itemPath(field: false), randomChildren()))
            default:
                if case .increment(let by, let from) = randomIncrement() {
                    writes.append(.increment(counterPath(), by: by, from: from))
                }
            }
        }
        return .batch(writes)
    }

    /// A guarded batch: the writes of a random batch, guarded by one to three paths read among the
    /// items, their fields and the counters (often the nodes it writes, as a read-modify-write does).
    mutating func randomGuardedBatch(writer: Int) -> (Path, OpKind) {
        guard case .batch(let writes) = randomBatch() else { preconditionFailure("a random batch is a batch") }
        var reads: [Path] = []
        for _ in 0..<(1 + rng.below(3)) {
            switch rng.below(3) {
            case 0: reads.append(writes[Int(rng.below(UInt64(writes.count)))].path)
            case 1: reads.append(itemPath(field: rng.chance(0.5)))
            default: reads.append(counterPath())
            }
        }
        do {
            let (path, kind) = try OpKind.guarded(read: readVector(writer: writer), reads: reads, writes: writes)
            return (path, kind)
        } catch {
            preconditionFailure("a workload's guarded batch is valid: \(error)")
        }
    }

    /// A read vector as a writer would have it: all its own earlier ops, and a lagging prefix of others'.
    mutating func readVector(writer: Int) -> VersionVector {
        var entries: [ReplicaID: UInt64] = [:]
        for (index, stamps) in made.enumerated() {
            let id = writers[index].clock.replica
            if index == writer {
                entries[id] = UInt64(stamps.count - 1)
            } else if !stamps.isEmpty {
                let lag = rng.chance(0.5) ? 0 : rng.below(UInt64(min(stamps.count, 8)) + 1)
                entries[id] = UInt64(stamps.count) - lag
            }
        }
        return VersionVector(entries)
    }
}
