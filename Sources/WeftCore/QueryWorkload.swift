/// Random collections and random queries over them, drawn from a ``SeededGenerator``: what property tests,
/// the simulator and benchmarks compare indexed and live evaluation against ``Query/evaluate(_:)`` with.
///
/// The children hold few distinct values (so ties, equal bounds and mixed types are common) under keys
/// that mix integer-like keys and text (so the key order's two parts both show).
///
/// ```swift
/// var rng = SeededGenerator(seed: 7)
/// let posts = QueryWorkload.collection(count: 30, rng: &rng)
/// let query = QueryWorkload.query(path: try Path("/posts"), rng: &rng)
/// ```
public enum QueryWorkload {
    /// The child paths the drawn children and queries use.
    public static let fields: [QueryField] = ["score", "meta/score", "status", "tag"]

    /// A key: an integer-like key, a short word, or a push-id-like key.
    public static func key(rng: inout SeededGenerator) -> Key {
        switch rng.below(4) {
        case 0: return Key(unchecked: String(Int(rng.below(40)) - 5))
        case 1: return Key(unchecked: ["a", "b", "c", "ab", "B", "zz", "é", "0a"][Int(rng.below(8))])
        case 2: return Key(unchecked: "k\(rng.below(30))")
        default: return Key(unchecked: "-N\(rng.below(10))x\(rng.below(10))")
        }
    }

    /// A scalar of any kind, from a small pool.
    public static func scalar(rng: inout SeededGenerator) -> Value {
        switch rng.below(9) {
        case 0: return .null
        case 1: return .bool(rng.below(2) == 0)
        case 2, 3: return .int(Int64(rng.below(12)) - 3)
        case 4: return .double([0.5, 2.0, -1.5, 3.25, 1e300][Int(rng.below(5))])
        case 5, 6: return .string(["open", "closed", "a", "B", "10", "9", ""][Int(rng.below(7))])
        case 7: return .int(Int64(rng.below(5)))
        default: return .string("s\(rng.below(4))")
        }
    }

    /// A child: mostly an object with some of ``fields``, sometimes a scalar.
    public static func child(rng: inout SeededGenerator) -> Value {
        if rng.below(6) == 0 { return scalar(rng: &rng) }
        var child = Value.null
        for field in fields where rng.below(4) != 0 {
            let value = rng.below(10) == 0 ? Value.object(["x": .int(1)]) : scalar(rng: &rng)
            child.write(value, at: field.keys[...])
        }
        if child.isNull { child = .object(["other": .int(Int64(rng.below(3)))]) }
        return child
    }

    /// A collection of up to `count` children (keys may repeat: the last wins).
    public static func collection(count: Int, rng: inout SeededGenerator) -> Value {
        precondition(count >= 0, "a count is not negative")
        var children: [Key: Value] = [:]
        for _ in 0..<count { children[key(rng: &rng)] = child(rng: &rng) }
        return .object(normalizing: children)
    }

    /// A valid query of the node at `path`, with any ordering, bounds, predicate and window.
    public static func query(path: Path, rng: inout SeededGenerator) -> Query {
        // Each part is built from what the builders accept, so no call below can throw; a failure would
        // be a bug in the builders, reported as a crash of the test that drew it.
        var query = Query(path: path)
        do {
            let orderingRoll = rng.below(5)
            switch orderingRoll {
            case 0: break
            case 1: query = try query.orderedByKey()
            case 2: query = try query.orderedByValue()
            default: query = try query.orderedByChild(fields[Int(rng.below(UInt64(fields.count)))])
            }
            let boundRoll = rng.below(5)
            if boundRoll == 1 || boundRoll == 3 { query = try query.starting(at: bound(query, rng: &rng), key: tie(query, rng: &rng)) }
            if boundRoll == 2 || boundRoll == 3 { query = try query.ending(at: bound(query, rng: &rng), key: tie(query, rng: &rng)) }
            if boundRoll == 4 { query = try query.equal(to: bound(query, rng: &rng), key: tie(query, rng: &rng)) }
            if rng.below(2) == 0 { query = try query.where(predicate(depth: 0, rng: &rng)) }
            switch rng.below(4) {
            case 0: query = try query.limit(toFirst: 1 + Int(rng.below(6)))
            case 1: query = try query.limit(toLast: 1 + Int(rng.below(6)))
            default: break
            }
            if rng.below(4) == 0 { query = try query.offset(Int(rng.below(4))) }
        } catch {
            preconditionFailure("a drawn query is valid: \(error)")
        }
        return query
    }

    private static func bound(_ query: Query, rng: inout SeededGenerator) -> Value {
        guard query.ordering == .key else {
            let value = scalar(rng: &rng)
            return value
        }
        return .string(key(rng: &rng).text)
    }

    private static func tie(_ query: Query, rng: inout SeededGenerator) -> String? {
        guard query.ordering != .key, rng.below(3) == 0 else { return nil }
        return key(rng: &rng).text
    }

    /// A random predicate over ``fields``.
    public static func predicate(depth: Int, rng: inout SeededGenerator) -> QueryPredicate {
        let field = fields[Int(rng.below(UInt64(fields.count)))]
        let roll = depth >= 3 ? rng.below(3) : rng.below(6)
        switch roll {
        case 0:
            var comparison = QueryComparison.allCases[Int(rng.below(6))]
            let value = scalar(rng: &rng)
            if value.isNull { comparison = rng.below(2) == 0 ? .equal : .notEqual }
            return .compare(field, comparison, value)
        case 1: return .isIn(field, (0...rng.below(3)).map { _ in scalar(rng: &rng) })
        case 2: return .exists(field)
        case 3: return .and(predicate(depth: depth + 1, rng: &rng), predicate(depth: depth + 1, rng: &rng))
        case 4: return .or(predicate(depth: depth + 1, rng: &rng), predicate(depth: depth + 1, rng: &rng))
        default: return .not(predicate(depth: depth + 1, rng: &rng))
        }
    }
}
