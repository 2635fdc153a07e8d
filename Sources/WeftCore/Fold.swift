/// The sequential semantics of each op: how one op changes a tree, given everything before it.
///
/// Both the ``ReferenceFold`` and the ``MergeEngine`` call these functions, so the rules live in one place.
enum Fold {
    /// Applies `op` to `state`, as the fold does at the op's place in stamp order.
    ///
    /// - Parameters:
    ///   - transactionIsValid: the transaction rule for `op`: true when its origin had seen every op
    ///     stamped before it that touches its subtree (for a guarded batch, the subtree of any path it
    ///     read). Asked only for transactions and guarded batches.
    ///   - forcedAt: batch parts at paths where this returns true are applied as already decided (they
    ///     lie outside a re-folded region and their batch is known to apply).
    static func apply(
        _ op: Op, to state: inout Value, registry: FunctionRegistry, transactionIsValid: (Op) -> Bool,
        forcedAt: ((Path) -> Bool)? = nil
    ) -> Outcome {
        switch op.kind {
        case .set(let value):
            state.write(value, at: op.path)
            return .applied
        case .merge(let children):
            for child in children { state.write(child.value, at: (op.path.keys + child.relative.keys)[...]) }
            return .applied
        case .increment(let by, let from):
            return increment(at: op.path, by: by, from: from, state: &state)
        case .batch(let writes):
            return applyBatch(writes, to: &state, forcedAt: forcedAt)
        case .guardedBatch(_, _, let writes):
            // The rule first: a stale one writes nothing, whatever its writes would do.
            guard transactionIsValid(op) else { return .rejected(.staleRead(op.path)) }
            return applyBatch(writes, to: &state, forcedAt: forcedAt)
        case .transaction(_, let result):
            guard transactionIsValid(op) else { return .rejected(.staleRead(op.path)) }
            state.write(result, at: op.path)
            return .applied
        case .call(let call):
            guard let function = registry.function(name: call.name, version: call.version) else { return .waiting }
            guard let result = function(state.value(at: op.path), call.arguments) else {
                return .rejected(.refusedByFunction(name: call.name))
            }
            switch checkedResult(result, at: op.path) {
            case .success(let value):
                state.write(value, at: op.path)
                return .applied
            case .failure(let broken):
                return .rejected(.invalidFunctionResult(name: call.name, reason: broken.description))
            }
        }
    }

    /// The writes of a batch, in order, all or nothing: a rejected part takes back every part before it.
    private static func applyBatch(_ writes: [Write], to state: inout Value, forcedAt: ((Path) -> Bool)?) -> Outcome {
        var undo: [(keys: [Key], old: Value)] = []
        for original in writes {
            var write = original
            if let forcedAt {
                if case .merge(let path, let children) = write {
                    // A merge part's children are anchors of their own: some may be forced while
                    // others are decided here.
                    var decided: [MergeChild] = []
                    for child in children {
                        let keys = path.keys + child.relative.keys
                        if forcedAt(Path(uncheckedKeys: keys)) {
                            state.write(child.value, at: keys[...])
                        } else {
                            decided.append(child)
                        }
                    }
                    if decided.isEmpty { continue }
                    write = .merge(path, decided)
                } else if forcedAt(write.path) {
                    forceApply(write, to: &state)
                    continue
                }
            }
            if case .rejected(let reason) = apply(write, to: &state, undo: &undo) {
                for entry in undo.reversed() { state.write(entry.old, at: entry.keys[...]) }
                return .rejected(reason)
            }
        }
        return .applied
    }

    /// A function's result as it is written at `path`, or the rule of the tree it breaks. A function is
    /// app code: the value it returns keeps the rules every write keeps (``Value/brokenRule(depth:)``:
    /// finite numbers, valid keys, the depth and string limits). An empty object or a null child vanishes,
    /// and `-0.0` is `0.0`, as from any other write, or the state would depend on how a value was built.
    static func checkedResult(_ result: Value, at path: Path) -> Result<Value, BrokenValueRule> {
        Result { () throws(BrokenValueRule) in try canonical(result, depth: path.depth) }
    }

    /// `value` normalized, with `0.0` for `-0.0`, in one walk that checks every node.
    private static func canonical(_ value: Value, depth: Int) throws(BrokenValueRule) -> Value {
        if let broken = value.brokenRule(depth: depth) { throw broken.rule }
        switch value {
        case .double(let number):
            return number == 0 ? .double(0) : value
        case .object(let children):
            var kept: [Key: Value] = [:]
            kept.reserveCapacity(children.count)
            for (key, child) in children {
                let canonicalChild = try canonical(child, depth: depth + 1)
                if !canonicalChild.isNull { kept[key] = canonicalChild }
            }
            return kept.isEmpty ? .null : .object(kept)
        case .null, .bool, .int, .string:
            return value
        }
    }

    /// Applies an op whose outcome is already known, without re-deciding it. Used to replay ops that
    /// lie above a re-folded region, and to fold compacted ops into the base.
    static func replay(_ op: Op, outcome: Outcome, to state: inout Value, registry: FunctionRegistry) {
        guard outcome == .applied else { return }
        switch op.kind {
        case .set(let value): state.write(value, at: op.path)
        case .merge(let children):
            for child in children { state.write(child.value, at: (op.path.keys + child.relative.keys)[...]) }
        case .transaction(_, let result): state.write(result, at: op.path)
        case .increment(let by, let from): forceIncrement(at: op.path.keys[...], by: by, from: from, state: &state)
        case .batch(let writes), .guardedBatch(_, _, let writes):
            for write in writes { forceApply(write, to: &state) }
        case .call(let call):
            // Callers replay calls only where the whole subtree of the call is present.
            if let function = registry.function(name: call.name, version: call.version),
                let result = function(state.value(at: op.path), call.arguments),
                case .success(let value) = checkedResult(result, at: op.path)
            {
                state.write(value, at: op.path)
            }
        }
    }

    /// A batch part whose batch is known to apply.
    private static func forceApply(_ write: Write, to state: inout Value) {
        switch write {
        case .set(let path, let value): state.write(value, at: path)
        case .merge(let path, let children):
            for child in children { state.write(child.value, at: (path.keys + child.relative.keys)[...]) }
        case .increment(let path, let by, let from):
            forceIncrement(at: path.keys[...], by: by, from: from, state: &state)
        }
    }

    /// An increment known to be applied: writes a number even where a projected state would not allow
    /// it (the real state did). Above a re-folded region only the fact that a number is there matters.
    private static func forceIncrement(at keys: ArraySlice<Key>, by: Number, from: Number, state: inout Value) {
        let sum = { (current: Value) in ((Number(current) ?? from).adding(by) ?? by).value }
        // One walk where no scalar lies above the counter.
        guard !state.update(at: keys, { $0 = sum($0) }) else { return }
        state.write(sum(state.value(at: keys)), at: keys)
    }

    private static func increment(at path: Path, by: Number, from: Number, state: inout Value) -> Outcome {
        switch incremented(state.value(at: path), by: by, from: from, at: path) {
        case .sum(let sum):
            state.write(sum, at: path)
            return .applied
        case .rejected(let rejection):
            return .rejected(rejection)
        }
    }

    /// Applies one write of a batch, recording how to undo it.
    private static func apply(_ write: Write, to state: inout Value, undo: inout [(keys: [Key], old: Value)])
        -> Outcome
    {
        switch write {
        case .set(let path, let value):
            recordUndo(at: path.keys, state: state, undo: &undo)
            state.write(value, at: path)
        case .merge(let path, let children):
            for child in children {
                let keys = path.keys + child.relative.keys
                recordUndo(at: keys, state: state, undo: &undo)
                state.write(child.value, at: keys[...])
            }
        case .increment(let path, let by, let from):
            recordUndo(at: path.keys, state: state, undo: &undo)
            return increment(at: path, by: by, from: from, state: &state)
        }
        return .applied
    }

    /// Records the value to restore: at the highest scalar on the way (a write below it replaces it),
    /// or else at the written node itself.
    private static func recordUndo(at keys: [Key], state: Value, undo: inout [(keys: [Key], old: Value)]) {
        var current = state
        for (depth, key) in keys.enumerated() {
            switch current {
            case .object(let children):
                current = children[key] ?? .null
            case .null:
                undo.append((keys, .null))
                return
            default:
                undo.append((Array(keys[..<depth]), current))
                return
            }
        }
        undo.append((keys, current))
    }
}
