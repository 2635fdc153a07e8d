/// The reference evaluation of a query: filter every child, sort, cut the window. Indexes and live
/// queries must give exactly what this gives (property tests compare them with it).
extension Query {
    /// The value a child is ordered by: its key (as a string), its value, or the node at the ordering's
    /// child path (null where missing).
    public func orderingValue(key: Key, value: Value) -> Value {
        switch ordering {
        case .key: return .string(key.text)
        case .value: return value
        case .child(let field): return value.value(at: field.keys[...])
        }
    }

    /// -1, 0 or 1 as the child (`leftKey`, ordered by `leftValue`) sorts before, is, or sorts after the
    /// other: by ordering value, then by key (``KeyOrder``). Only equal keys compare equal.
    public func compare(_ leftValue: Value, _ leftKey: Key, _ rightValue: Value, _ rightKey: Key) -> Int {
        if ordering != .key {
            let order = ValueOrder.compare(leftValue, rightValue)
            if order != 0 { return order }
        }
        if leftKey == rightKey { return 0 }
        return KeyOrder.precedes(leftKey.text, rightKey.text) ? -1 : 1
    }

    /// True when a child ordered by `orderingValue` under `key` lies within the start and end bounds.
    public func isInRange(orderingValue: Value, key: Key) -> Bool {
        if let start, !isAtOrAfter(start, orderingValue: orderingValue, key: key) { return false }
        if let end, !isAtOrBefore(end, orderingValue: orderingValue, key: key) { return false }
        return true
    }

    func isAtOrAfter(_ bound: QueryBound, orderingValue: Value, key: Key) -> Bool {
        if ordering == .key {
            guard case .string(let text) = bound.value else { return false }
            return !KeyOrder.precedes(key.text, text)
        }
        let order = ValueOrder.compare(orderingValue, bound.value)
        if order != 0 { return order > 0 }
        guard let boundKey = bound.key else { return true }
        return !KeyOrder.precedes(key.text, boundKey.text)
    }

    func isAtOrBefore(_ bound: QueryBound, orderingValue: Value, key: Key) -> Bool {
        if ordering == .key {
            guard case .string(let text) = bound.value else { return false }
            return !KeyOrder.precedes(text, key.text)
        }
        let order = ValueOrder.compare(orderingValue, bound.value)
        if order != 0 { return order < 0 }
        guard let boundKey = bound.key else { return true }
        return !KeyOrder.precedes(boundKey.text, key.text)
    }

    /// True when the child passes the range and the predicate (the window aside).
    public func admits(key: Key, value: Value) -> Bool {
        guard !value.isNull else { return false }
        guard isInRange(orderingValue: orderingValue(key: key, value: value), key: key) else { return false }
        return predicate?.holds(for: value) ?? true
    }

    /// The range of positions the window keeps out of `count` admitted children in order.
    public func window(count: Int) -> Range<Int> {
        precondition(count >= 0, "a count of children is not negative")
        switch limit {
        case nil: return min(offset, count)..<count
        case .first(let kept)?:
            let lower = min(offset, count)
            return lower..<min(count, lower + kept)
        case .last(let kept)?:
            let upper = max(0, count - offset)
            return max(0, upper - kept)..<upper
        }
    }

    /// The query's result over `node`, the value of the node at ``path``: the naive reference (every
    /// child filtered, then sorted, then windowed).
    ///
    /// ```swift
    /// let query = try Query(path: Path("/posts")).orderedByChild("score").limit(toLast: 2)
    /// query.evaluate(try Value(json: #"{"a":{"score":1},"b":{"score":5},"c":{"score":3}}"#)).keys   // [c, b]
    /// ```
    public func evaluate(_ node: Value) -> QueryResult {
        var admitted: [(order: Value, row: QueryRow)] = []
        for (key, value) in node.children where admits(key: key, value: value) {
            admitted.append((orderingValue(key: key, value: value), QueryRow(key: key, value: value)))
        }
        admitted.sort { compare($0.order, $0.row.key, $1.order, $1.row.key) < 0 }
        let kept = window(count: admitted.count)
        let rows = admitted[kept].map(\.row)
        precondition(rows.count <= (limit?.count ?? rows.count), "a window keeps at most its limit")
        return QueryResult(rows: rows)
    }
}
