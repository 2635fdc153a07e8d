import WeftCore

/// Computes the events of one subscription from the subscribed node's old and new values.
struct EventDiff {
    let node: DataNode
    let type: DataEventType
    let constraint: ChildrenConstraint

    /// Above this many child events in one batch, sibling keys come from one sort rather than from a scan
    /// per event.
    static let siblingScanEventsMax = 8

    /// The first events of a subscription: the value, or an addition per existing child.
    func initialEvents(of value: Value) -> [DataEvent] {
        switch type {
        case .valueChange:
            return [
                DataEvent(
                    type: type, node: node, value: constraint.restrict(value), previousSiblingKey: nil, source: .initial
                )
            ]
        case .childAddition:
            let keys = admittedKeys(of: value)
            return keys.enumerated().compactMap { offset, key in
                childEvent(key, value[key], previous: offset > 0 ? keys[offset - 1].text : nil, source: .initial)
            }
        case .childChange, .childRemoval:
            return []
        }
    }

    /// The events of one batch that changed the node from `old` to `new`.
    func events(old: Value, new: Value, effect: NodeWatcher.Effect, source: DataEvent.Source) -> [DataEvent] {
        if case .children(let keys) = effect, !keys.contains(where: { constraint.admits($0.text) }) { return [] }
        guard type != .valueChange else {
            let restrictedNew = constraint.restrict(new)
            guard constraint.restrict(old) != restrictedNew else { return [] }
            return [DataEvent(type: type, node: node, value: restrictedNew, previousSiblingKey: nil, source: source)]
        }
        let oldChildren = old.children
        let newChildren = new.children
        let candidates: Set<Key>
        switch effect {
        case .children(let keys): candidates = keys
        case .whole: candidates = Set(oldChildren.keys).union(newChildren.keys)
        }
        var changed: [(key: Key, value: Value)] = []
        for key in candidates where constraint.admits(key.text) {
            let before = oldChildren[key] ?? .null
            let after = newChildren[key] ?? .null
            switch type {
            case .childAddition where before.isNull && !after.isNull: changed.append((key, after))
            case .childChange where !before.isNull && !after.isNull && before != after: changed.append((key, after))
            case .childRemoval where !before.isNull && after.isNull: changed.append((key, before))
            default: continue
            }
        }
        guard !changed.isEmpty else { return [] }
        changed.sort { KeyOrder.precedes($0.key.text, $1.key.text) }
        let siblings = Siblings(
            of: type == .childRemoval ? old : new, constraint: constraint,
            sorted: changed.count > Self.siblingScanEventsMax)
        return changed.compactMap {
            childEvent($0.key, $0.value, previous: siblings.previous(before: $0.key), source: source)
        }
    }

    private func admittedKeys(of value: Value) -> [Key] {
        value.children.keys.filter { constraint.admits($0.text) }.sorted { KeyOrder.precedes($0.text, $1.text) }
    }

    private func childEvent(_ key: Key, _ value: Value, previous: String?, source: DataEvent.Source) -> DataEvent? {
        // Keys read from the tree are valid and below the depth limit; a failure here would be a bug
        // upstream, and the event is dropped rather than attributed to the wrong node.
        guard let child = try? node.location.child(key) else { return nil }
        return DataEvent(
            type: type, node: node.node(at: child), value: value, previousSiblingKey: previous, source: source)
    }
}

/// Finds the admitted key just before a given one, by a scan or in a sorted list.
private struct Siblings {
    let children: [Key: Value]
    let constraint: ChildrenConstraint
    let sortedKeys: [String]?

    init(of value: Value, constraint: ChildrenConstraint, sorted: Bool) {
        children = value.children
        self.constraint = constraint
        sortedKeys = sorted ? children.keys.map(\.text).filter(constraint.admits).sorted(by: KeyOrder.precedes) : nil
    }

    func previous(before key: Key) -> String? {
        if let sortedKeys {
            let low = sortedKeys.partitionPoint { !KeyOrder.precedes($0, key.text) }
            return low > 0 ? sortedKeys[low - 1] : nil
        }
        var best: String?
        for candidate in children.keys.lazy.map(\.text)
        where constraint.admits(candidate) && KeyOrder.precedes(candidate, key.text) {
            if let current = best, !KeyOrder.precedes(current, candidate) { continue }
            best = candidate
        }
        return best
    }
}
