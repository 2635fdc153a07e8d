import WeftCore

/// An independent recomputation of the counters (`/counters`, `/accounts`) and of the bank
/// (`/bank`): the ops touching them, in stamp order, with each counter equal to the exact sum of
/// its increments after its last set.
///
/// It does not share the merge engine's code paths: increments are summed here, batches are
/// decided here (all or nothing on their increments), and calls re-run here on the recomputed
/// accounts. Only the staleness of a transaction, which depends on the whole history, is taken
/// from the reference fold's outcomes.
enum CounterOracle {
    /// The subtrees the oracle recomputes.
    static let roots: [Key] = ["counters", "accounts", "bank"]

    /// The expected subtrees, as a tree holding only ``roots``.
    static func expected(sortedOps ops: [Op], foldOutcomes: [Stamp: Outcome], registry: FunctionRegistry) -> Value {
        var tree = Value.null
        for op in ops { apply(op, to: &tree, foldOutcome: foldOutcomes[op.stamp], registry: registry) }
        return tree
    }

    static func isTracked(_ keys: [Key]) -> Bool { keys.first.map(roots.contains) ?? true }

    static func apply(_ op: Op, to tree: inout Value, foldOutcome: Outcome?, registry: FunctionRegistry) {
        switch op.kind {
        case .set(let value): write(value, at: op.path.keys, in: &tree)
        case .merge(let children):
            for child in children { write(child.value, at: op.path.keys + child.relative.keys, in: &tree) }
        case .increment(let by, let from):
            guard isTracked(op.path.keys) else { return }
            _ = increment(at: op.path.keys, by: by, from: from, in: &tree)
        case .batch(let writes):
            applyBatch(writes, to: &tree, foldOutcome: foldOutcome)
        case .transaction(_, let result):
            guard foldOutcome == .applied else { return }
            write(result, at: op.path.keys, in: &tree)
        case .guardedBatch(_, _, let writes):
            // Whether its reads held is the fold's to say; applied, it is a batch.
            guard foldOutcome == .applied else { return }
            applyBatch(writes, to: &tree, foldOutcome: foldOutcome)
        case .call(let call):
            guard isTracked(op.path.keys), !op.path.isRoot,
                let function = registry.function(name: call.name, version: call.version),
                let result = function(tree.value(at: op.path), call.arguments)
            else { return }
            tree.write(result.normalized, at: op.path)
        }
    }

    /// A batch applies whole or not at all: it is rejected when one of its increments meets a node
    /// that is not a number. Increments outside the tracked roots cannot be judged here; the fold's
    /// outcome decides then.
    static func applyBatch(_ writes: [Write], to tree: inout Value, foldOutcome: Outcome?) {
        var draft = tree
        var decidedHere = true
        var rejected = false
        for write in writes {
            switch write {
            case .set(let path, let value): self.write(value, at: path.keys, in: &draft)
            case .merge(let path, let children):
                for child in children { self.write(child.value, at: path.keys + child.relative.keys, in: &draft) }
            case .increment(let path, let by, let from):
                guard isTracked(path.keys) else {
                    decidedHere = false
                    continue
                }
                if !increment(at: path.keys, by: by, from: from, in: &draft) { rejected = true }
            }
        }
        let applies = decidedHere ? !rejected : foldOutcome == .applied
        if applies { tree = draft }
    }

    /// Writes where the path, or the subtree below it, meets a tracked root.
    static func write(_ value: Value, at keys: [Key], in tree: inout Value) {
        if keys.isEmpty {
            for root in roots { tree.write(value[root], at: [root][...]) }
            return
        }
        guard isTracked(keys) else { return }
        tree.write(value, at: keys[...])
    }

    /// The increment rule, with exact integer sums: returns false when the node is not a number.
    static func increment(at keys: [Key], by: Number, from: Number, in tree: inout Value) -> Bool {
        let start: Number
        switch tree.value(at: keys[...]) {
        case .null: start = from
        case .int(let value): start = .int(value)
        case .double(let value): start = .double(value)
        default: return false
        }
        let sum: Number
        switch (start, by) {
        case (.int(let a), .int(let b)):
            let (exact, overflow) = a.addingReportingOverflow(b)
            sum = overflow ? .double(Double(a) + Double(b)) : .int(exact)
        default:
            sum = .double(start.doubleValue + by.doubleValue)
        }
        guard case .double(let double) = sum, !double.isFinite else {
            tree.write(sum.value, at: keys[...])
            return true
        }
        return false
    }

    /// The bank's rule: once funded, its balances are integers, none below zero, summing to the
    /// funded total.
    static func bankViolation(in state: Value) -> String? {
        let bank = state.value(at: WritePlan.Bank.path)
        guard !bank.isNull else { return nil }
        var total: Int64 = 0
        for (account, balance) in bank.children.sorted(by: { $0.key < $1.key }) {
            guard case .int(let amount) = balance else { return "balance \(account) is \(balance.jsonString())" }
            guard amount >= 0 else { return "balance \(account) is \(amount), below zero" }
            total += amount
        }
        guard total == WritePlan.Bank.total else {
            return "balances sum to \(total), not the funded \(WritePlan.Bank.total)"
        }
        return nil
    }
}
