/// The road a query takes over a collection, as ``Query/run(on:indexes:)`` took it (what `explain()` shows).
public enum QueryPlan: Sendable, Hashable, CustomStringConvertible {
    /// The ordering has an index: the range is found by binary search and only the window is read
    /// (`entriesRead` entries, more than the window when the predicate or the offset skipped some).
    case indexRange(field: QueryField, entriesRead: Int)
    /// The first predicate has an index: only its matches are read (`candidates`), then filtered, sorted
    /// and windowed.
    case indexCandidates(field: QueryField, candidates: Int)
    /// No index serves the query: every child is read, filtered and sorted.
    case scan(children: Int)

    /// True for the two roads that read through an index.
    public var usesIndex: Bool {
        if case .scan = self { return false }
        return true
    }

    public var description: String {
        switch self {
        case let .indexRange(field, read): return "index range on \(field): read \(read) entries"
        case let .indexCandidates(field, candidates): return "index on \(field) for the first predicate: \(candidates) candidates"
        case let .scan(children): return "scan of \(children) children (no index serves this query)"
        }
    }
}

/// A query's result with the road it took.
public struct QueryRun: Sendable, Hashable {
    public let result: QueryResult
    public let plan: QueryPlan
}

extension Query {
    /// The query's result over `node` (the collection's value), through an index of `indexes` when one
    /// serves it: one on the ordering's child path first, else one on the field of the first predicate
    /// (`==`, `<`, `<=`, `>`, `>=`, `in`). The indexes must be those of this node's children, in step with
    /// `node`. The result is always ``evaluate(_:)``'s.
    public func run(on node: Value, indexes: [QueryIndexEntries]) -> QueryRun {
        if case .child(let field) = ordering, let index = indexes.first(where: { $0.field == field }) {
            return runRange(on: node, index: index)
        }
        if let first = predicate?.conjuncts.first, let candidates = Self.candidateField(first),
            let index = indexes.first(where: { $0.field == candidates })
        {
            return runCandidates(first, on: node, index: index)
        }
        return QueryRun(result: evaluate(node), plan: .scan(children: node.children.count))
    }

    /// The field whose index can list a predicate's matches, if it can.
    static func candidateField(_ predicate: QueryPredicate) -> QueryField? {
        switch predicate {
        case let .compare(field, comparison, _) where comparison != .notEqual: return field
        case let .isIn(field, _): return field
        default: return nil
        }
    }

    // MARK: - The index range

    private func runRange(on node: Value, index: QueryIndexEntries) -> QueryRun {
        let children = node.children
        var lower = index.startPosition
        var upper = index.endPosition
        if let start {
            lower = index.partitionPoint { self.isAtOrAfter(start, orderingValue: $0.value, key: $0.key) }
        }
        if let end {
            upper = index.partitionPoint { !self.isAtOrBefore(end, orderingValue: $0.value, key: $0.key) }
        }
        var rows: [QueryRow] = []
        var read = 0
        var skipped = 0
        let kept = limit?.count ?? Int.max
        let backward = if case .last = limit { true } else { false }
        var position = backward ? upper : lower
        while rows.count < kept, backward ? position > lower : position < upper {
            if backward { position = index.position(before: position) }
            let entry = index[position]
            if !backward { position = index.position(after: position) }
            read += 1
            guard let child = children[entry.key] else {
                preconditionFailure("an index in step with its collection holds only its children: \(entry.key)")
            }
            if let predicate, !predicate.holds(for: child) { continue }
            if skipped < offset {
                skipped += 1
                continue
            }
            rows.append(QueryRow(key: entry.key, value: child))
        }
        if backward { rows.reverse() }
        return QueryRun(result: QueryResult(rows: rows), plan: .indexRange(field: index.field, entriesRead: read))
    }

    // MARK: - The first predicate's candidates

    private func runCandidates(_ first: QueryPredicate, on node: Value, index: QueryIndexEntries) -> QueryRun {
        let children = node.children
        var ranges: [Range<QueryIndexEntries.Position>] = []
        switch first {
        case let .compare(_, comparison, value): ranges = [Self.range(comparison, value, in: index)]
        case let .isIn(_, values): ranges = values.map { Self.range(.equal, $0, in: index) }
        default: preconditionFailure("only comparisons and in have candidates")
        }
        var seen = Set<Key>()
        var admitted: [(order: Value, row: QueryRow)] = []
        var candidates = 0
        for range in ranges {
            var position = range.lowerBound
            while position < range.upperBound {
                let key = index[position].key
                position = index.position(after: position)
                guard seen.insert(key).inserted else { continue }
                candidates += 1
                guard let child = children[key] else {
                    preconditionFailure("an index in step with its collection holds only its children: \(key)")
                }
                if admits(key: key, value: child) {
                    admitted.append((orderingValue(key: key, value: child), QueryRow(key: key, value: child)))
                }
            }
        }
        admitted.sort { compare($0.order, $0.row.key, $1.order, $1.row.key) < 0 }
        let rows = admitted[window(count: admitted.count)].map(\.row)
        return QueryRun(result: QueryResult(rows: rows), plan: .indexCandidates(field: index.field, candidates: candidates))
    }

    /// The entries whose value may satisfy `field comparison value`: a superset the full predicate then
    /// filters (ordered comparisons hold within one kind, so the range stops at the kind's edges).
    static func range(
        _ comparison: QueryComparison, _ value: Value, in index: QueryIndexEntries
    ) -> Range<QueryIndexEntries.Position> {
        let kindRanks: ClosedRange<Int> = {
            let rank = ValueOrder.rank(value)
            return rank == 1 || rank == 2 ? 1...2 : rank...rank
        }()
        func first(_ isPast: @escaping (QueryIndexEntry) -> Bool) -> QueryIndexEntries.Position {
            index.partitionPoint(where: isPast)
        }
        let kindStart = first { ValueOrder.rank($0.value) >= kindRanks.lowerBound }
        let kindEnd = first { ValueOrder.rank($0.value) > kindRanks.upperBound }
        let equalStart = first { ValueOrder.compare($0.value, value) >= 0 }
        let equalEnd = first { ValueOrder.compare($0.value, value) > 0 }
        switch comparison {
        case .equal: return equalStart..<equalEnd
        case .less: return kindStart..<max(kindStart, equalStart)
        case .lessOrEqual: return kindStart..<max(kindStart, equalEnd)
        case .greater: return min(equalEnd, kindEnd)..<kindEnd
        case .greaterOrEqual: return min(equalStart, kindEnd)..<kindEnd
        case .notEqual: return index.startPosition..<index.endPosition
        }
    }
}
