import Foundation
import WeftCore
import WeftSync

/// The simulator's memory of what every replica should hold, independent of the replicas' own
/// bookkeeping, and the continuous checks built on it.
///
/// It keeps every op ever made (by stamp and by origin and sequence), the set of ops each replica
/// received or made, the greatest stamp each replica knows, and the highest vector any peer
/// acknowledged. Each check returns the first broken property, or nil.
final class Checker {
    struct Slot: Hashable {
        let origin: ReplicaID
        let sequence: UInt64
    }

    let ids: [ReplicaID]
    let registry: FunctionRegistry
    // The tables below are touched for every op a replica makes or receives. One simulation drives its
    // checker from one thread and no method holds one of them while calling out, so they skip the
    // runtime's exclusivity bookkeeping.

    /// Every op made and not lost in a crash before it left its replica.
    @exclusivity(unchecked) private(set) var ops: [Stamp: Op] = [:]
    @exclusivity(unchecked) private var slots: [Slot: Stamp] = [:]
    /// The bytes each op of `ops` was made with (``OpCodec/encode(_:)``): an op received over the wire
    /// must arrive as exactly these.
    @exclusivity(unchecked) private var encodings: [Stamp: ArraySlice<UInt8>] = [:]
    /// The ops each replica holds (made, received, or read back from its disk).
    @exclusivity(unchecked) private(set) var known: [Set<Stamp>]
    /// The same, in the order they came, for sampling.
    @exclusivity(unchecked) private var knownOrder: [[Stamp]]
    /// An order-free hash of each `known` set.
    @exclusivity(unchecked) private(set) var knownHash: [UInt64]
    @exclusivity(unchecked) private var greatestStamp: [Stamp?]
    /// Every op covered by some acknowledgement a replica recorded.
    private(set) var acknowledged = VersionVector()
    private var rng: SeededGenerator
    var now: UInt64 = 0

    init(ids: [ReplicaID], registry: FunctionRegistry, seed: UInt64) {
        self.ids = ids
        self.registry = registry
        known = Array(repeating: [], count: ids.count)
        knownOrder = Array(repeating: [], count: ids.count)
        knownHash = Array(repeating: 0, count: ids.count)
        greatestStamp = Array(repeating: nil, count: ids.count)
        rng = RandomStream.checks.generator(seed: seed)
    }

    func failure(_ kind: SimulationFailure.Kind, _ replica: Int?, _ message: String) -> SimulationFailure {
        SimulationFailure(kind: kind, tick: now, replica: replica, message: message)
    }

    static func hash(_ stamp: Stamp) -> UInt64 {
        var z = stamp.time &+ stamp.replica.rawValue &* 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    private func insertKnown(_ stamp: Stamp, at replica: Int) -> Bool {
        guard known[replica].insert(stamp).inserted else { return false }
        knownOrder[replica].append(stamp)
        knownHash[replica] &+= Checker.hash(stamp)
        if greatestStamp[replica].map({ stamp > $0 }) ?? true { greatestStamp[replica] = stamp }
        return true
    }

    // MARK: - Events

    /// A replica made an op: its stamp must exceed every stamp it knows, and its origin and sequence
    /// must be new.
    /// `encoding` is the op's bytes when the replica encoded it already (else they are encoded here).
    func wrote(_ op: Op, encoding: ArraySlice<UInt8>? = nil, at replica: Int) -> SimulationFailure? {
        if let greatest = greatestStamp[replica], op.stamp <= greatest {
            return failure(.stampNotMonotonic, replica, "stamped \(op.stamp) after knowing \(greatest)")
        }
        // Each table is looked up and filled at once (after a failure the run stops, whatever they hold).
        let slot = Slot(origin: op.origin, sequence: op.sequence)
        if let other = slots.updateValue(op.stamp, forKey: slot) {
            return failure(.conflictingOps, replica, "sequence \(op.sequence) reused: \(other) then \(op.stamp)")
        }
        if ops.updateValue(op, forKey: op.stamp) != nil {
            return failure(.conflictingOps, replica, "stamp \(op.stamp) made twice")
        }
        encodings[op.stamp] = encoding ?? OpCodec.encode(op)[...]
        _ = insertKnown(op.stamp, at: replica)
        return nil
    }

    /// A replica merged ops from a peer: each must be an op some replica made, unaltered (byte for byte
    /// when `freshEncodings` gives the bytes the fresh ops arrived as); the ones the replica called known
    /// must be known.
    ///
    /// A replica limited to `share` receives ops cut to it: a partial op must stand for an op made under
    /// its origin and sequence and write nothing outside the share; a whole op must lie in the share.
    func received(
        _ ops: [Op], fresh: [Op], freshEncodings: [ArraySlice<UInt8>]? = nil, refused: Set<Stamp> = [],
        share: (any ReadShare)? = nil, at replica: Int
    ) -> SimulationFailure? {
        for (position, op) in fresh.enumerated() {
            if let share, let failure = checkCut(op, share: share, at: replica) { return failure }
            let unaltered: Bool
            if share != nil, op.isPartial {
                unaltered = true
            } else if let freshEncodings, let made = encodings[op.stamp] {
                unaltered = made.hasSameBytes(as: freshEncodings[position])
            } else if let original = self.ops[op.stamp] {
                unaltered = original == op
            } else {
                return failure(.conflictingOps, replica, "received \(op.stamp), which no replica made")
            }
            guard unaltered else { return failure(.conflictingOps, replica, "op \(op.stamp) arrived altered") }
            _ = insertKnown(op.stamp, at: replica)
        }
        if fresh.count < ops.count {
            // Refused ops (below the compaction frontier) change nothing and are not held.
            for op in ops where !known[replica].contains(op.stamp) && !refused.contains(op.stamp) {
                return failure(.conflictingOps, replica, "the engine claims \(op.stamp), which never reached it")
            }
        }
        return nil
    }

    /// An op sent to a replica limited to `share`: a cut of an op made (same origin, sequence and stamp)
    /// that writes nothing outside the share, or an op made that lies wholly in it.
    private func checkCut(_ op: Op, share: some ReadShare, at replica: Int) -> SimulationFailure? {
        guard let original = ops[op.stamp], original.origin == op.origin, original.sequence == op.sequence else {
            return failure(.conflictingOps, replica, "received \(op.stamp) cut to its share, which no replica made")
        }
        guard op.isPartial else {
            guard share.relation(to: op.path) == .inside else {
                return failure(.shareLeaked, replica, "op \(op.stamp) at \(op.path) reached the leaf whole")
            }
            return nil
        }
        if let leak = Checker.leak(of: op, share: share) {
            return failure(.shareLeaked, replica, "the cut of op \(op.stamp) writes outside the share: \(leak)")
        }
        return nil
    }

    /// Where a partial op writes something outside `share`, or nil.
    static func leak(of op: Op, share: some ReadShare) -> String? {
        func check(_ write: Write) -> String? {
            switch write {
            case .set(let path, let value):
                return share.restrict(value, at: path) == value ? nil : "a set at \(path)"
            case .merge(let path, let children):
                for child in children {
                    guard let at = try? path.appending(child.relative) else { return "a merge at \(path)" }
                    if share.restrict(child.value, at: at) != child.value { return "a merge of \(at)" }
                }
                return nil
            case .increment(let path, _, _):
                return share.relation(to: path) == .inside ? nil : "an increment at \(path)"
            }
        }
        switch op.kind {
        case .set(let value): return check(.set(op.path, value))
        case .merge(let children): return check(.merge(op.path, children))
        case .increment(let by, let from): return check(.increment(op.path, by: by, from: from))
        case .batch(let writes), .guardedBatch(_, _, let writes): return writes.lazy.compactMap(check).first
        default: return share.relation(to: op.path) == .inside ? nil : "a \(op.kind) at \(op.path)"
        }
    }

    /// A leaf took its hub's revised decisions: each is a cut of an op it holds.
    func revised(_ replaced: [Op], at replica: Int) -> SimulationFailure? {
        for op in replaced where !known[replica].contains(op.stamp) || !op.isPartial {
            return failure(
                .conflictingOps, replica, "revised \(op.stamp), which it does not hold as a carried decision")
        }
        return nil
    }

    /// A replica installed a snapshot of ops it lacked: it now knows every op the snapshot's vector
    /// covers, and its own ops in `restamped` replace, under their sequences, the ops it made before.
    func installed(_ vector: VersionVector, restamped: [Op], at replica: Int) -> SimulationFailure? {
        for (slot, stamp) in slots where slot.sequence <= vector[slot.origin] { _ = insertKnown(stamp, at: replica) }
        for op in restamped {
            let slot = Slot(origin: op.origin, sequence: op.sequence)
            guard let old = slots[slot], op.origin == ids[replica] else {
                return failure(.conflictingOps, replica, "stamped again \(op.stamp), which it never made")
            }
            for index in known.indices where known[index].contains(old) && index != replica {
                return failure(.conflictingOps, index, "holds \(old), which r\(replica) stamped again as \(op.stamp)")
            }
            guard self.ops[op.stamp] == nil else {
                return failure(.conflictingOps, replica, "stamp \(op.stamp) made twice")
            }
            self.ops[old] = nil
            self.ops[op.stamp] = op
            encodings[old] = nil
            encodings[op.stamp] = OpCodec.encode(op)[...]
            slots[slot] = op.stamp
            known[replica].remove(old)
            knownOrder[replica].removeAll { $0 == old }
            knownHash[replica] &-= Checker.hash(old)
            _ = insertKnown(op.stamp, at: replica)
        }
        return nil
    }

    /// A replica acknowledged `acknowledgement` to another; `durable` is what it had synced: the
    /// vector may not claim more, nor the stable frontier more than any member synced.
    func acknowledgement(
        _ acknowledgement: Acknowledgement, by peer: Int, durable: VersionVector, everyDurable: [VersionVector]
    ) -> SimulationFailure? {
        guard durable.covers(acknowledgement.versionVector) else {
            return failure(
                .acknowledgementBeyondDurable, peer,
                "acknowledged \(acknowledgement.versionVector) holding \(durable) durably")
        }
        for (member, vector) in everyDurable.enumerated() where !vector.covers(acknowledgement.stableFrontier) {
            return failure(
                .acknowledgementBeyondDurable, peer,
                "announced stable \(acknowledgement.stableFrontier) but r\(member) holds \(vector)")
        }
        acknowledged = acknowledged.merged(with: acknowledgement.versionVector)
        return nil
    }

    /// A replica's stable stamp frontier says every member durably holds every op stamped at or below
    /// it. An origin's stamps grow with its sequence, so per origin only the op after the least durable
    /// sequence among `holders` needs looking at.
    /// - Parameters:
    ///   - frontier: the stamp frontier `replica` marked stable.
    ///   - holders: each member's index and durable vector.
    ///   - origins: the origins whose ops the claim covers.
    func stableStamp(
        _ frontier: Stamp, claimedBy replica: Int, holders: [(index: Int, durable: VersionVector)], origins: [ReplicaID]
    ) -> SimulationFailure? {
        for origin in origins {
            guard let lowest = holders.min(by: { $0.durable[origin] < $1.durable[origin] }) else { return nil }
            let sequence = lowest.durable[origin] + 1
            guard let stamp = slots[Slot(origin: origin, sequence: sequence)], stamp <= frontier else { continue }
            return failure(
                .stableBeyondHeld, replica,
                "stable stamp frontier \(frontier) but r\(lowest.index) lacks op \(sequence) of \(origin), "
                    + "stamped \(stamp)")
        }
        return nil
    }

    /// A replica lost `lost` in a crash (ops it had not synced). Its own lost ops must not have
    /// left it; they are forgotten, as their sequences will be reused.
    func crashed(_ replica: Int, lost: [Op]) -> SimulationFailure? {
        for op in lost {
            if known[replica].remove(op.stamp) != nil { knownHash[replica] &-= Checker.hash(op.stamp) }
            guard op.origin == ids[replica] else { continue }
            for other in known.indices where other != replica && known[other].contains(op.stamp) {
                return failure(
                    .unsyncedOpEscaped, replica, "op \(op.sequence) (\(op.stamp)) was lost but r\(other) has it")
            }
            ops.removeValue(forKey: op.stamp)
            encodings.removeValue(forKey: op.stamp)
            slots.removeValue(forKey: Slot(origin: op.origin, sequence: op.sequence))
        }
        knownOrder[replica] = knownOrder[replica].filter { known[replica].contains($0) }
        return nil
    }

    /// A replica read `recovered` back after a crash; it must be exactly what it had synced
    /// (`durable`), unaltered, with a clock at least as late as every op, and its engine must equal
    /// the fold of it.
    func recovered(
        _ replica: Int, _ recovered: RecoveredLog, durable: VersionVector, state: Value
    ) -> SimulationFailure? {
        var log = ContiguousLog()
        for op in recovered.ops { log.add(op) }
        guard !log.hasGaps, log.vector == durable else {
            return failure(.recoveryMismatch, replica, "read back \(log.vector) after syncing \(durable)")
        }
        let stamps = Set(recovered.ops.map(\.stamp))
        guard stamps == known[replica] else {
            return failure(
                .recoveryMismatch, replica,
                "read back \(stamps.count) ops; \(known[replica].count) had been synced or kept")
        }
        for op in recovered.ops where ops[op.stamp] != op {
            return failure(.recoveryMismatch, replica, "op \(op.stamp) came back from disk altered")
        }
        greatestStamp[replica] = recovered.ops.last?.stamp
        if let greatest = greatestStamp[replica], recovered.clockTime < greatest.time {
            return failure(.stampNotMonotonic, replica, "the clock restarted below \(greatest)")
        }
        knownOrder[replica] = recovered.ops.map(\.stamp)
        let folded = ReferenceFold.fold(recovered.ops, registry: registry).state
        if let tree = recovered.tree, tree != folded {
            let at = ValueDifference.first(between: folded, and: tree)
            return failure(
                .recoveryMismatch, replica,
                "the stored tree differs from the fold of the stored ops at \(at.path): "
                    + "fold has \(at.expected), tree has \(at.actual)")
        }
        return compare(replica, folded: folded, count: recovered.ops.count, state: state)
    }

    // MARK: - Checks

    /// The replica's state must be the reference fold of the ops it holds.
    func compareWithFold(_ replica: Int, ops: [Op], state: Value) -> SimulationFailure? {
        compare(replica, folded: ReferenceFold.fold(ops, registry: registry).state, count: ops.count, state: state)
    }

    private func compare(_ replica: Int, folded: Value, count: Int, state: Value) -> SimulationFailure? {
        guard folded != state else { return nil }
        let at = ValueDifference.first(between: folded, and: state)
        return failure(
            .stateDiffersFromFold, replica,
            "after \(count) ops, at \(at.path): fold has \(at.expected), replica has \(at.actual)")
    }

    /// A snapshot must be the fold of exactly the ops its frontier covers (cut to `share` when the
    /// receiver is limited to one).
    func snapshot(_ snapshot: SyncSnapshot, share: (any ReadShare)? = nil, at replica: Int) -> SimulationFailure? {
        let covered = slots.compactMap { slot, stamp in
            snapshot.frontier.contains(origin: slot.origin, sequence: slot.sequence) ? ops[stamp] : nil
        }
        guard UInt64(covered.count) == snapshot.frontier.total else {
            return failure(.conflictingOps, replica, "a snapshot at \(snapshot.frontier) covers ops no replica made")
        }
        let whole = ReferenceFold.fold(covered, registry: registry).state
        let folded = share.map { $0.restrict(whole, at: .root) } ?? whole
        guard folded != snapshot.value else { return nil }
        let at = ValueDifference.first(between: folded, and: snapshot.value)
        return failure(
            .stateDiffersFromFold, replica,
            "snapshot at \(snapshot.frontier) differs from the fold of its \(covered.count) ops at \(at.path): "
                + "fold has \(at.expected), snapshot has \(at.actual)")
    }

    /// The ops a replica holds, from the table.
    func knownOps(_ replica: Int) -> [Op] { known[replica].compactMap { ops[$0] } }

    /// Replicas holding the same ops must show the same digest.
    func compareDigests(_ digests: [(replica: Int, digest: StateDigest)]) -> SimulationFailure? {
        var byOps: [UInt64: (replica: Int, digest: StateDigest)] = [:]
        for entry in digests {
            let key = knownHash[entry.replica] ^ UInt64(known[entry.replica].count)
            guard let first = byOps[key] else {
                byOps[key] = entry
                continue
            }
            // Equal digests break nothing; different ones are a failure only for the very same op sets.
            if first.digest != entry.digest, known[first.replica] == known[entry.replica] {
                return failure(
                    .sameOpsDifferentDigests, entry.replica,
                    "r\(first.replica) and r\(entry.replica) hold the same \(known[entry.replica].count) ops "
                        + "but show \(first.digest) and \(entry.digest)")
            }
        }
        return nil
    }

    /// Ops the replica holds, drawn at random, to deliver again.
    func sampleKnown(_ replica: Int, count: Int) -> [Op] {
        let order = knownOrder[replica]
        guard !order.isEmpty else { return [] }
        return (0..<min(count, order.count)).compactMap { _ in ops[order[Int(rng.below(UInt64(order.count)))]] }
    }

    func chance(_ probability: Double) -> Bool { rng.chance(probability) }
}

/// The first place where two values differ, for failure messages.
enum ValueDifference {
    static func first(between expected: Value, and actual: Value) -> (path: String, expected: String, actual: String) {
        var keys: [Key] = []
        var left = expected
        var right = actual
        while case .object(let leftChildren) = left, case .object(let rightChildren) = right {
            let names = Set(leftChildren.keys).union(rightChildren.keys).sorted()
            guard let key = names.first(where: { leftChildren[$0] != rightChildren[$0] }) else { break }
            keys.append(key)
            left = leftChildren[key] ?? .null
            right = rightChildren[key] ?? .null
        }
        func text(_ value: Value) -> String { String(value.jsonString().prefix(120)) }
        return ("/" + keys.map(\.text).joined(separator: "/"), text(left), text(right))
    }
}
