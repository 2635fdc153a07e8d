import WeftCore

/// The writes of a run: which replica writes what, and when. Drawn from ``Workload`` (sets, merges,
/// pushes, increments, counter resets, batches, transactions and `transfer` calls over hot keys),
/// plus a small bank whose accounts only `transfer` calls touch.
///
/// Ops are stamped when they are written, by the writing replica's own clock: the workload's stamps
/// only give each op its shape.
struct WritePlan {
    /// One write: at `tick`, replica `writer` writes an op of `kind` at `path`.
    struct Write {
        let index: Int
        let tick: UInt64
        let writer: Int
        let path: Path
        let kind: OpKind
        /// A relation change, planned when it is written (then `path` and `kind` are its fallback).
        var relation: RelationWorkload.Step? = nil
    }

    /// The replica ids, one per workload writer.
    let replicaIDs: [ReplicaID]
    /// The kept writes, by tick.
    let writes: [Write]

    /// The bank: accounts that only `transfer` calls touch, after each replica's funding `set`.
    enum Bank {
        static let path = try! Path("/bank")
        static let accounts: [Key] = ["b0", "b1", "b2", "b3"]
        static let balanceInitial: Int64 = 50
        /// Sum of the balances after any funding, which every transfer keeps.
        static var total: Int64 { balanceInitial * Int64(accounts.count) }
        /// Share of writes that are bank transfers.
        static let transferShare = 0.05

        static var funding: OpKind {
            .set(.object(Dictionary(uniqueKeysWithValues: accounts.map { ($0, Value.int(balanceInitial)) })))
        }
    }

    init(scenario: Scenario) {
        var workloadSeed = RandomStream.workload.generator(seed: scenario.seed)
        var workload = Workload(seed: workloadSeed.next(), replicas: scenario.workloadWriters)
        var rng = RandomStream.writes.generator(seed: scenario.seed)
        var relationRNG = RandomStream.relations.generator(seed: scenario.seed)
        let relationShare = scenario.relationShare ?? 0
        replicaIDs = workload.replicaIDs
        let writerOf = Dictionary(uniqueKeysWithValues: replicaIDs.enumerated().map { ($0.element, $0.offset) })
        var ticks = (0..<scenario.opCount).map { _ in rng.below(scenario.ticksFault) }
        ticks.sort()
        var funded = Set<Int>()
        var all: [Write] = []
        all.reserveCapacity(scenario.opCount)
        for index in 0..<scenario.opCount {
            let op = workload.next()
            guard let writer = writerOf[op.origin] else { preconditionFailure("workload op of an unknown writer") }
            var path = op.path
            var kind = op.kind
            if funded.insert(writer).inserted {
                (path, kind) = (Bank.path, Bank.funding)
            } else if rng.chance(Bank.transferShare) {
                (path, kind) = (Bank.path, WritePlan.transfer(rng: &rng))
            }
            var write = Write(index: index, tick: ticks[index], writer: writer, path: path, kind: kind)
            // A relation change replaces a workload op other than a funding (from its own stream, so
            // that the other draws stay as they were).
            if relationShare > 0, relationRNG.chance(relationShare), path != Bank.path {
                let step = RelationWorkload.draw(rng: &relationRNG)
                write = Write(
                    index: index, tick: ticks[index], writer: writer, path: RelationWorkload.root,
                    kind: .set(.null), relation: step)
            }
            // The share leaf writes only in its share (after every draw: the others' writes stay the same).
            if let leaf = scenario.shareLeaf, leaf.replica == writer { write = leaf.remap(write) }
            all.append(write)
        }
        if let kept = scenario.keptWrites {
            writes = kept.map { all[$0] }
        } else {
            writes = all
        }
    }

    static func transfer(rng: inout SeededGenerator) -> OpKind {
        let from = Bank.accounts[Int(rng.below(UInt64(Bank.accounts.count)))]
        let to = Bank.accounts[Int(rng.below(UInt64(Bank.accounts.count)))]
        let arguments = Value.object([
            "from": .string(from.text), "to": .string(to.text), "amount": .int(Int64(1 + rng.below(30))),
        ])
        return .call(FunctionCall(name: "transfer", version: 1, arguments: arguments))
    }

    /// The op a replica makes of `write`: its own stamp and sequence; a push gets a push id made
    /// from that stamp, and a transaction records what the replica had seen (`read`).
    static func op(of write: Write, stamp: Stamp, sequence: UInt64, read: @autoclosure () -> VersionVector) -> Op {
        var path = write.path
        var kind = write.kind
        if path.depth == 2, path.keys[0] == "chat", case .set = kind {
            path = (try? Path(keys: ["chat", PushID.make(from: stamp)])) ?? path
        }
        if case .transaction(_, let result) = kind { kind = .transaction(read: read(), result: result) }
        return Op(stamp: stamp, sequence: sequence, path: path, kind: kind)
    }
}
