// The counter shortcut: a late increment decided by exact arithmetic (see MergeEngine+Shortcuts.swift).

extension MergeEngine {
    /// A late increment on a counter whose later ops it can change only by exact arithmetic, or not at
    /// all. Either every op of the counter after it is an integer increment (or an op it cannot revive),
    /// and integer addition commutes: the counter moves by exactly this step, or by the difference of
    /// starting values when it now precedes the increment that met null. Or a later op writes the whole
    /// counter (a set, a merge child, an applied batch's set, a transaction whose origin had seen this
    /// increment): every op in between sees a number either way and decides as before, and the counter
    /// is the same from there on.
    ///
    /// The counter-shortcut road's entry: false, with nothing changed, when the op needs a re-fold.
    func applyCounterShortcut(_ op: Op, probe: PathIndex.Probe, report: inout ApplyReport) -> Bool {
        preconditionLate(op, probe: probe)
        guard case .increment(let by, let from) = op.kind else {
            preconditionFailure("the counter shortcut takes plain increments, not \(op.kind)")
        }
        guard let node = probe.node else { preconditionFailure("an increment's walk ends at its counter") }
        guard !probe.laterAbove, !probe.scalarAbove,
            let outcome = counterShortcut(op, at: op.path, by: by, from: from, node: node, report: &report)
        else { return false }
        statistics.counterShortcuts += 1
        record(outcome, of: op, report: &report)
        return true
    }

    /// The counter shortcut for an increment of `path` by `op` (a plain increment, or a part of a batch)
    /// whose walk met no later op and no possible scalar above the counter: the increment's outcome,
    /// with the state and the null markers updated, or nil (nothing changed) when it needs a re-fold.
    func counterShortcut(
        _ op: Op, at path: Path, by: Number, from: Number, node: PathIndex.Node, report: inout ApplyReport
    ) -> Outcome? {
        // Only plain increments are marked when they meet null.
        let isPart: Bool
        if case .increment = op.kind { isPart = false } else { isPart = true }
        guard node.hasNothingBelow(after: op.stamp), let nextAnchored = node.ownFirst(after: op.stamp),
            isLogged(nextAnchored), !hasScalarAboveInBase(path)
        else { return nil }
        let bound = CounterWindow.bound
        let window: CounterWindow
        if !isPart, node.ownNonIncrementMax.map({ $0 < op.stamp }) ?? true, node.incrementMagnitude < bound {
            // Every own op after this one is an integer increment (no other kind is stamped after it
            // here, and no other increment ever came, this one included), so the next one is: its body
            // is read only when its starting value matters (it met null).
            window = CounterWindow(hidden: false, integral: true, magnitude: node.incrementMagnitude)
        } else {
            guard let walked = counterWindow(after: op, at: path, by: by, node: node) else { return nil }
            window = walked
        }
        if let before = window.before {
            return counterShortcut(op, at: path, by: by, before: before, window: window, node: node, report: &report)
        }
        let nextStamp = nextAnchored.stamp
        switch CounterBefore(aroundIncrementWith: unusualOutcomes[nextStamp] ?? .applied) {
        case .other:
            // The counter held a non-number when the next increment came; so it did for this one.
            return .rejected(.notANumber(path))
        case nil:
            return nil
        case .number, .null:
            break
        }
        let nextMetNull = incrementsFromNull.contains(nextStamp)
        if window.hidden {
            // Only which increment met null changes. Steps this small keep every sum finite: near the
            // largest doubles they vanish in rounding, elsewhere they are far from it.
            guard CounterWindow.isSmall(by), CounterWindow.isSmall(from) else { return nil }
            if nextMetNull { passNullMark(from: nextStamp, to: op, isPart: isPart) }
            return .applied
        }
        if !nextMetNull { return addLate(by, at: path, window: window, node: node, report: &report) }
        // Every prefix sum stays far from overflow, so the order of the additions does not matter.
        guard window.integral, case .int(let by) = by, case .int(let from) = from, window.magnitude < bound,
            from.magnitude < bound
        else { return nil }
        var nextFromInt: Int64 = 0
        if nextMetNull {
            guard let next = logged(nextAnchored), case .increment(_, .int(let nextFrom)) = next.kind,
                nextFrom.magnitude < bound
            else { return nil }
            nextFromInt = nextFrom
        }
        // One walk reads the counter and writes the new sum, when it holds an integer.
        let rewritten = rewriteCounter(at: path, report: &report) { counter in
            guard case .int(let value) = counter, value.magnitude < bound else { return nil }
            return .int(nextMetNull ? value - nextFromInt + from + by : value + by)
        }
        guard rewritten else { return nil }
        if nextMetNull { passNullMark(from: nextStamp, to: op, isPart: isPart) }
        return .applied
    }

    /// The late increment `op` now meets null in place of the next increment, which meets the late
    /// one's sum instead: the null mark moves to `op` (parts of batches are not marked).
    private func passNullMark(from next: Stamp, to op: Op, isPart: Bool) {
        incrementsFromNull.remove(next)
        if !isPart { incrementsFromNull.insert(op.stamp) }
    }

    /// Rewrites the counter at `path` in one walk, reporting the change as one row: `body` gets what the
    /// counter holds and returns its new value, or nil to leave it. False when nothing was written (nil
    /// from `body`, or a scalar above the counter).
    func rewriteCounter(at path: Path, report: inout ApplyReport, _ body: (Value) -> Value?) -> Bool {
        var old = Value.null
        var new: Value?
        _ = state.update(at: path.keys[...]) { counter in
            guard let rewritten = body(counter) else { return }
            old = counter
            counter = rewritten
            new = rewritten
        }
        guard let new else { return false }
        if capturesChanges { report.changes.append(Change(path: path, old: old, new: new, isOneRow: true)) }
        return true
    }

    /// The counter shortcut when the op after the late increment is not an increment, and what the
    /// counter held before the late one is known (``counterBefore(_:at:node:)``): a non-number rejects
    /// it, and it writes nothing; a number or null takes it, and a whole write after it hides it, or
    /// (for a number) every op after it adds to the counter or writes nothing there, and the counter
    /// moves by exactly this step.
    private func counterShortcut(
        _ op: Op, at path: Path, by: Number, before: CounterBefore, window: CounterWindow, node: PathIndex.Node,
        report: inout ApplyReport
    ) -> Outcome? {
        switch before {
        case .other:
            return .rejected(.notANumber(path))
        case .null:
            // Met null, it wrote its starting value, which only a whole write hides (an increment after
            // it met null then, and would start from that value now).
            guard window.hidden, CounterWindow.isSmall(by), case .increment(_, let from) = op.kind,
                CounterWindow.isSmall(from)
            else { return nil }
            incrementsFromNull.insert(op.stamp)
            return .applied
        case .number:
            guard !window.hidden else { return CounterWindow.isSmall(by) ? .applied : nil }
            return addLate(by, at: path, window: window, node: node, report: &report)
        }
    }

    /// Adds a late increment's step to its counter, which every op after it only adds to (or leaves
    /// alone), when the order of the additions does not matter: integers far from overflow, or numbers
    /// whose every sum a double holds exactly (``sumsAreExact(at:node:)``). The counter moves by exactly
    /// the step. Nil, with nothing changed, otherwise.
    func addLate(
        _ by: Number, at path: Path, window: CounterWindow, node: PathIndex.Node, report: inout ApplyReport
    ) -> Outcome? {
        let bound = CounterWindow.bound
        guard let current = Number(state.value(at: path)) else { return nil }
        if window.integral, case .int = by, window.magnitude < bound, case .int(let value) = current,
            value.magnitude < bound
        {
            // Integers far from overflow: every prefix sum is exact.
        } else {
            guard sumsAreExact(at: path, node: node) else { return nil }
        }
        let rewritten = rewriteCounter(at: path, report: &report) { _ in current.adding(by)?.value }
        return rewritten ? .applied : nil
    }

    /// True when every number the counter at `path` takes is a sum of numbers that doubles add exactly,
    /// in any order: multiples of 2^-16 whose magnitudes add up to less than 2^36. Its own ops write
    /// only such numbers (``PathIndex/Node/numberMagnitude``), no logged op above it wrote it, and the
    /// base holds such a number there, or none. Ops below it only make it an object or remove it.
    func sumsAreExact(at path: Path, node: PathIndex.Node) -> Bool {
        guard node.numberMagnitude < PathIndex.Node.exactSumMax, !index.hasOwnOps(above: path.keys[...], after: nil)
        else { return false }
        let inBase = Number(base.value(at: path)).map(PathIndex.Node.exactMagnitude(of:)) ?? 0
        return node.numberMagnitude + inBase < PathIndex.Node.exactSumMax
    }

    /// What a counter held right before a late increment, in kind.
    enum CounterBefore {
        case number, null, other

        /// The kind of `value`.
        init(holding value: Value) {
            switch value {
            case .null: self = .null
            case .int, .double: self = .number
            default: self = .other
            }
        }

        /// What the counter holds around an increment of it with this recorded outcome: a number (or
        /// null, before it) when it applied; the non-number that rejected it, which it leaves in place;
        /// nil when it failed otherwise (a sum that would not be finite).
        init?(aroundIncrementWith outcome: Outcome) {
            switch outcome {
            case .applied: self = .number
            case .rejected(.notANumber): self = .other
            default: return nil
            }
        }
    }

    /// What the counter at `path` held right before `op`, when the index shows it without replaying:
    /// the result of the last of the counter's own ops before `op` that wrote something (rejected
    /// transactions, batches and calls write nothing, and are passed over, a few at most), when nothing
    /// below the counter or above it was written since; the base's value when nothing ever was. Nil when
    /// unknown.
    func counterBefore(_ op: Op, at path: Path, node: PathIndex.Node) -> CounterBefore? {
        var previous: (stamp: Stamp, op: Op)?
        var known = true
        var passed = 0
        node.own.reverseForEach(through: op.stamp) { anchored in
            guard anchored.stamp < op.stamp else { return true }
            guard let earlier = logged(anchored) else {
                known = false
                return false
            }
            switch (earlier.kind, unusualOutcomes[anchored.stamp] ?? .applied) {
            case (.transaction, .rejected), (.batch, .rejected), (.call, .rejected), (.guardedBatch, .rejected):
                passed += 1
                guard passed <= Self.writeLessOpsPassedMax else {
                    known = false
                    return false
                }
                return true
            default:
                previous = (anchored.stamp, earlier)
                return false
            }
        }
        guard known else { return nil }
        let since = previous?.stamp
        if let descendantMax = node.descendantMax, since.map({ descendantMax >= $0 }) ?? true { return nil }
        guard !index.hasOwnOps(above: path.keys[...], after: since) else { return nil }
        let kind = CounterBefore.init(holding:)
        guard let (stamp, earlier) = previous else { return kind(base.value(at: path)) }
        let outcome = unusualOutcomes[stamp] ?? .applied
        switch earlier.kind {
        case .increment:
            // Rejected, it wrote nothing because the counter held a non-number, which it still does.
            return CounterBefore(aroundIncrementWith: outcome)
        case .set(let value):
            return kind(value)
        case .transaction(_, let result):
            return outcome == .applied ? kind(result) : nil
        case .guardedBatch:
            // Left to a re-fold: its writes there are read as a batch's elsewhere, and rarely matter.
            return nil
        case .merge(let children):
            // Anchored here: one child is the counter.
            let child = children.first {
                earlier.path.depth + $0.relative.depth == path.depth
                    && path.isRelated(toJoined: earlier.path.keys, $0.relative.keys)
            }
            return child.map { kind($0.value) }
        case .batch(let writes):
            guard outcome == .applied else { return nil }
            var result: CounterBefore?
            for write in writes {
                switch write {
                case .set(let target, let value):
                    if target == path { result = kind(value) } else if target.isRelated(to: path) { return nil }
                case .merge(let base, let children):
                    for child in children where path.isRelated(toJoined: base.keys, child.relative.keys) {
                        guard base.depth + child.relative.depth == path.depth else { return nil }
                        result = kind(child.value)
                    }
                case .increment(let target, _, _):
                    if target == path { result = .number } else if target.isRelated(to: path) { return nil }
                }
            }
            return result
        case .call:
            return nil
        }
    }

    /// How many write-less ops ``counterBefore(_:at:node:)`` passes over before it gives up.
    static let writeLessOpsPassedMax = 8

    /// Whether an increment succeeds at its place in stamp order.
    enum IncrementFate {
        case succeeds
        case fails(Rejection)
    }

    /// The fate of a late increment of `path` that is a part of the batch `op`, when the index shows what
    /// the counter held at it (nothing above or below the counter was written after it, and nothing
    /// above may hold a scalar): the next op of the counter is an increment that applied (the counter
    /// held a number or null) or that met a non-number, or ``counterBefore(_:at:node:)`` knows. Nil when
    /// unknown, and for steps large enough to make a sum infinite.
    func lateIncrementFate(_ op: Op, at path: Path, by: Number, from: Number, part: PathIndex.Part) -> IncrementFate? {
        let node = part.node
        guard !part.laterAbove, !part.scalarAbove, node.hasNothingBelow(after: op.stamp),
            let nextAnchored = node.ownFirst(after: op.stamp), let next = logged(nextAnchored),
            !hasScalarAboveInBase(path)
        else { return nil }
        let held: CounterBefore?
        if case .increment = next.kind {
            held = CounterBefore(aroundIncrementWith: unusualOutcomes[next.stamp] ?? .applied)
        } else {
            held = counterBefore(op, at: path, node: node)
        }
        switch held {
        case .other: return .fails(.notANumber(path))
        case .number, .null: return CounterWindow.isSmall(by) && CounterWindow.isSmall(from) ? .succeeds : nil
        case nil: return nil
        }
    }

    /// What the ops of a counter after a late increment let the increment change.
    struct CounterWindow {
        /// Integer sums the shortcut adds stay below this magnitude: no prefix of them overflows.
        static let bound: UInt64 = 1 << 61
        /// A later op writes the whole counter, and its outcome does not depend on the increment: the
        /// increment's effect ends there.
        var hidden: Bool
        /// Every increment up to that op (or to now), the late one included, is an integer increment.
        var integral: Bool
        /// Sum of the magnitudes of those increments (saturating).
        var magnitude: UInt64
        /// What the counter held before the late increment, found when the op after it is not an
        /// increment (nil when it is one).
        var before: CounterBefore?

        /// A step (or starting value) small enough that adding it to any finite number stays finite.
        static func isSmall(_ number: Number) -> Bool { number.doubleValue.magnitude < Double(bound) }

        /// Takes in an increment of the counter before the whole write; false when it is too large to
        /// keep sums finite.
        mutating func add(_ by: Number) -> Bool {
            guard Self.isSmall(by) else { return false }
            if case .double = by { integral = false }
            let size = by.magnitudeBound
            magnitude = magnitude > UInt64.max - size ? .max : magnitude + size
            return true
        }
    }

    /// Walks the ops of a late increment's counter stamped after it. Nil when one of them would decide
    /// differently with the increment in place, or uses the counter in a way the shortcut does not
    /// model: the next op is not an increment (the counter's value at the late one is unknown), a call,
    /// an applied transaction whose origin had not seen the increment (the transaction rule rejects it
    /// now; after the whole write too, since the rule counts every op that touched its path), an
    /// increment not applied, a batch rejected at the counter, or more ops than the walk looks at.
    func counterWindow(after op: Op, at path: Path, by: Number, node: PathIndex.Node) -> CounterWindow? {
        guard node.callCount == 0 else { return nil }
        var window = CounterWindow(hidden: false, integral: true, magnitude: 0)
        guard window.add(by) else { return nil }
        var walked = 0
        var valuesMatter = true
        var finished = false
        let complete = forEachLaterOp(at: node, after: op.stamp) { other in
            walked += 1
            let outcome = unusualOutcomes[other.stamp] ?? .applied
            if walked == 1 {
                if case .increment = other.kind {
                    // A next increment not applied met a non-number, or overflowed: no value in between.
                    if outcome != .applied { valuesMatter = false }
                } else {
                    // The counter's value at the late increment must then be known some other way.
                    guard let before = counterBefore(op, at: path, node: node) else { return false }
                    window.before = before
                    // On a non-number the increment writes nothing: only transactions can see it.
                    if before == .other { valuesMatter = false }
                    if before == .null {
                        // Meeting null, it writes its starting value: this op must hide it at once, or
                        // an increment after it that met null would now meet a number.
                        switch other.kind {
                        case .set, .merge: break
                        case .transaction(let read, _)
                        where outcome == .applied && read.contains(origin: op.origin, sequence: op.sequence):
                            break
                        default: return false
                        }
                    }
                }
            }
            if case .transaction(let read, _) = other.kind {
                // A stale transaction stays stale.
                guard outcome == .applied else { return true }
                guard read.contains(origin: op.origin, sequence: op.sequence) else { return false }
                window.hidden = true
            } else if !window.hidden, valuesMatter {
                switch other.kind {
                case .increment(let step, _):
                    guard outcome == .applied, window.add(step) else { return false }
                case .set, .merge:
                    // Anchored here: a set of the counter or a merge child at it.
                    window.hidden = true
                case .batch(let writes):
                    if case .rejected(let reason) = outcome {
                        // Failed elsewhere, by a part this counter does not reach: it writes nothing.
                        guard let failing = reason.path, failing != path else { return false }
                        return true
                    }
                    for write in writes {
                        switch write {
                        case .set(let target, _): if target == path { window.hidden = true }
                        case .merge(let base, let children):
                            if children.contains(where: { base.keys + $0.relative.keys == path.keys }) {
                                window.hidden = true
                            }
                        case .increment(let target, let step, _):
                            if target == path, !window.add(step) { return false }
                        }
                    }
                case .transaction, .call, .guardedBatch: return false
                }
            } else if case .call = other.kind {
                return false
            }
            if window.hidden || !valuesMatter, node.subtreeTransactionMax.map({ $0 <= other.stamp }) ?? true {
                // No transaction after this op: nothing left that the increment could change.
                finished = true
                return false
            }
            return true
        }
        return complete == true || finished ? window : nil
    }
}
