// The increment rule, and the one walk that applies it to a tree in place. The reference fold reads the
// counter and writes the sum in two walks (`Fold.apply`); the engine's roads use the single walk.

extension Fold {
    /// What an increment does to its node.
    enum Increment {
        /// The node becomes this number.
        case sum(Value)
        case rejected(Rejection)
    }

    /// The increment rule on the node's current value: a number moves by `by`, null counts as `from`,
    /// anything else, or a sum that is not finite, rejects the increment.
    static func incremented(_ current: Value, by: Number, from: Number, at path: Path) -> Increment {
        let base: Number
        switch current {
        case .null: base = from
        case .int(let i): base = .int(i)
        case .double(let d): base = .double(d)
        default: return .rejected(.notANumber(path))
        }
        guard let sum = base.adding(by) else { return .rejected(.nonFinite(path)) }
        return .sum(sum.value)
    }

    /// What one walk applying the increment rule found and did.
    struct IncrementWalk {
        /// What the counter held before (null when it was missing).
        var old: Value
        /// The rule's answer: the sum now written, or the rejection (nothing written).
        var result: Increment
    }

    /// Applies the increment rule to the node at `path` of `tree` in one walk that reads the counter and
    /// writes the sum (``Value/update(at:_:)``). Nil, with the tree untouched, when a scalar lies above
    /// the counter: the sum would replace it, which the caller's general road handles.
    @inline(__always)
    static func incrementInPlace(_ tree: inout Value, at path: Path, by: Number, from: Number) -> IncrementWalk? {
        var walk = IncrementWalk(old: .null, result: .sum(.null))
        let walked = tree.update(at: path.keys[...]) { node in
            walk.old = node
            walk.result = incremented(node, by: by, from: from, at: path)
            if case .sum(let sum) = walk.result { node = sum }
        }
        return walked ? walk : nil
    }
}
