/// Plans relation changes with integrity: from the state it reads, the paths a guarded batch must read
/// and the writes it must make so that, once applied, every link's target exists and holds the
/// matching back-link, and every back-link's source holds the link (layout in ``RelationLayout``).
///
/// Several changes may be planned in a row (each sees the writes of those before); ``plan`` then
/// gives one batch. The planner is pure: it reads through the closure it is given and never writes.
///
/// Every plan also reads the relation clock (``RelationLayout/clockPath``) and writes it plus one.
/// That is what makes integrity hold under the guarded-batch rule: an applied relation change has
/// seen every relation change stamped before it, so the links and back-links it planned on are exactly
/// those of the fold at its place (see Docs/MODELS.md, "Relations and integrity").
///
/// ```swift
/// var planner = RelationPlanner { path in state.value(at: path) }
/// try planner.link(source: task, field: "assignee", to: person, rule: .nullify)
/// let plan = try planner.plan()      // plan.reads, plan.writes: one guarded batch
/// ```
public struct RelationPlanner {
    /// Reads the value of a node (its whole subtree) in the state the change is planned on.
    public typealias Reader = (Path) throws -> Value

    /// A planned change: the guarded batch's read paths and writes.
    public struct Plan: Sendable, Hashable {
        /// The paths whose values the writes depend on, the relation clock included.
        public var reads: [Path]
        /// The writes, in order, the relation clock's included; empty when nothing changes.
        public var writes: [Write]

        public init(reads: [Path], writes: [Write]) {
            self.reads = reads
            self.writes = writes
        }

        /// True when the change writes nothing (linking what is already linked, deleting nothing).
        public var isEmpty: Bool { writes.isEmpty }
    }

    private let base: Reader
    private var reads: [Path] = []
    private var readSet: Set<Path> = []
    private var writes: [Write] = []

    /// A planner reading the state through `read`.
    public init(reading read: @escaping Reader) {
        base = read
    }

    /// The value of `path` as the changes planned so far leave it.
    public func value(at path: Path) throws -> Value {
        var value = try base(path)
        for write in writes {
            guard case .set(let written, let newValue) = write else { continue }
            if let below = written.relativeKeys(of: path) {
                value = newValue.value(at: below)
            } else if let inside = path.relativeKeys(of: written) {
                value.write(newValue, at: inside)
            }
        }
        return value
    }

    // MARK: - Links

    /// Sets the one-to-one link at `source/field` to `target`, removing the back-link of the target it
    /// replaces. Linking the current target again changes nothing.
    /// - Throws: ``RelationError/targetMissing(_:)`` when `target` does not exist.
    ///
    /// `clearing` names the node a `nullify` removes when the target is deleted, when it is not the link
    /// itself: an ancestor of the link inside the source (an `AssociatedValues` entry).
    public mutating func link(
        source: Path, field: Path, to target: Path, rule: RelationLayout.DeleteRule, clearing: Path? = nil
    ) throws {
        let link = try linkPath(source, field)
        if let clearing {
            guard clearing.isAncestorOrSelf(of: link), source.isAncestorOrSelf(of: clearing), clearing != source else {
                throw RelationError.invalidPath(clearing)
            }
        }
        try checkTarget(target)
        let old = try read(link)
        if RelationLayout.target(of: old) == target, try isBackLinked(link, on: target) { return }
        try removeBackLink(of: link, value: old)
        try addLink(link, source: source, target: target, rule: rule, clear: clearing)
    }

    /// Writes `value` at `path` in the same batch (the value of an `AssociatedValues` entry, say).
    /// Paths inside back-links or the relation clock are refused: they are the planner's.
    public mutating func write(_ value: Value, at path: Path) throws {
        guard !path.isRoot, !isReserved(path) else { throw RelationError.invalidPath(path) }
        set(path, value)
    }

    /// Clears the one-to-one link at `source/field` and the back-link on its target.
    public mutating func unlink(source: Path, field: Path) throws {
        let link = try linkPath(source, field)
        let old = try read(link)
        guard !old.isNull else { return }
        try removeBackLink(of: link, value: old)
        set(link, .null)
    }

    /// Adds `target` to the one-to-many link at `source/field` (each target once).
    /// - Throws: ``RelationError/targetMissing(_:)`` when `target` does not exist.
    public mutating func insert(source: Path, field: Path, target: Path, rule: RelationLayout.DeleteRule) throws {
        let link = try entryPath(source, field, target)
        try checkTarget(target)
        let old = try read(link)
        if RelationLayout.target(of: old) == target, try isBackLinked(link, on: target) { return }
        try addLink(link, source: source, target: target, rule: rule)
    }

    /// Removes `target` from the one-to-many link at `source/field`, and its back-link.
    public mutating func remove(source: Path, field: Path, target: Path) throws {
        let link = try entryPath(source, field, target)
        let old = try read(link)
        guard !old.isNull else { return }
        try removeBackLink(of: link, value: old)
        set(link, .null)
    }

    /// The node of `target`'s entry in the one-to-many link at `source/field`.
    public static func entryPath(source: Path, field: Path, target: Path) throws -> Path {
        guard !field.isRoot else { throw RelationError.invalidPath(source) }
        return try RelationLayout.path(source, field.keys + [RelationLayout.key(for: target)])
    }

    // MARK: - Deletes

    /// Deletes `objects` with what their incoming links ask: a `nullify` link is removed from its
    /// source, a `cascade` link deletes its source too (recursively; cycles end, each object is deleted
    /// once). The back-links of the deleted objects' own links are removed from their targets. Links
    /// and back-links inside objects deleted together need nothing more. Objects that do not exist are
    /// passed over.
    public mutating func delete(_ objects: [Path]) throws {
        var doomed: [Path] = []
        var queue = objects
        var next = 0
        var incoming: [(holder: Path, backLink: RelationLayout.BackLink)] = []
        var outgoing: [(link: Path, target: Path)] = []
        while next < queue.count {
            let object = queue[next]
            next += 1
            guard !object.isRoot, !isReserved(object) else { throw RelationError.invalidPath(object) }
            if doomed.contains(where: { $0.isAncestorOrSelf(of: object) }) { continue }
            // Not a read of the whole object: only relation changes may decide a relation change, so it
            // reads the object's links and back-links (in `collect`), never its plain fields. A plain write
            // the delete did not see is overwritten by it, or, stamped later, brings back fields without
            // links.
            let value = try value(at: object)
            noteRead(try RelationLayout.path(object, [RelationLayout.backLinksKey]))
            guard !value.isNull else { continue }
            // An object inside one deleted now is covered by it (its links were gathered twice: the
            // duplicates write the same nulls).
            doomed.removeAll { object.isAncestorOrSelf(of: $0) }
            doomed.append(object)
            let before = incoming.count
            try collect(value, at: object, incoming: &incoming, outgoing: &outgoing)
            queue += incoming[before...].filter { $0.backLink.rule == .cascade }.map(\.backLink.source)
        }
        let isDoomed = { (path: Path) in doomed.contains { $0.isAncestorOrSelf(of: path) } }
        for object in doomed { set(object, .null) }
        var done: Set<Path> = []
        for (holder, backLink) in incoming where !isDoomed(backLink.link) && done.insert(backLink.link).inserted {
            // Only a cascade whose source was deleted leaves nothing to do; a nullify removes the link
            // when it still names the deleted object.
            guard backLink.rule == .nullify else { continue }
            if RelationLayout.target(of: try read(backLink.link)) == holder {
                set(backLink.clear, .null)
            }
        }
        for (link, target) in outgoing where !isDoomed(target) && done.insert(link).inserted {
            let node = try RelationLayout.backLinkPath(of: link, on: target)
            noteRead(node)
            set(node, .null)
        }
    }

    // MARK: - The batch

    /// The guarded batch for every change planned so far: the read paths, the relation clock
    /// included, and the writes followed by the clock's new value. Empty when nothing changes.
    /// - Throws: ``RelationError/tooManyWrites(_:)`` or ``RelationError/tooManyReads(_:)``.
    public func plan() throws -> Plan {
        guard !writes.isEmpty else { return Plan(reads: [], writes: []) }
        guard writes.count < CoreLimits.batchPartsMax else { throw RelationError.tooManyWrites(writes.count + 1) }
        guard reads.count < CoreLimits.guardedReadsMax else { throw RelationError.tooManyReads(reads.count + 1) }
        let clock = RelationLayout.clockPath
        let count: Int64
        if case .int(let value) = try base(clock), value >= 0, value < .max { count = value + 1 } else { count = 1 }
        return Plan(reads: reads + [clock], writes: writes + [.set(clock, .int(count))])
    }

    // MARK: - Parts

    private func linkPath(_ source: Path, _ field: Path) throws -> Path {
        guard !source.isRoot, !field.isRoot, !isReserved(source) else { throw RelationError.invalidPath(source) }
        let link = try RelationLayout.path(source, field.keys)
        guard !isReserved(link) else { throw RelationError.invalidPath(link) }
        return link
    }

    private func entryPath(_ source: Path, _ field: Path, _ target: Path) throws -> Path {
        _ = try linkPath(source, field)
        return try RelationPlanner.entryPath(source: source, field: field, target: target)
    }

    /// True for paths inside back-links or the relation clock, which relations never address.
    private func isReserved(_ path: Path) -> Bool {
        path.keys.first == RelationLayout.clockPath.keys[0] || path.keys.contains(RelationLayout.backLinksKey)
    }

    private mutating func checkTarget(_ target: Path) throws {
        guard !target.isRoot, !isReserved(target) else { throw RelationError.invalidPath(target) }
        // Existence is judged on the whole object; the guard reads the back-link node, which a delete
        // of the target (a write above it) and any change of this link touch.
        guard RelationLayout.exists(try value(at: target)) else { throw RelationError.targetMissing(target) }
    }

    private mutating func read(_ path: Path) throws -> Value {
        noteRead(path)
        return try value(at: path)
    }

    private mutating func noteRead(_ path: Path) {
        if readSet.insert(path).inserted { reads.append(path) }
    }

    private mutating func set(_ path: Path, _ value: Value) {
        writes.append(.set(path, value))
    }

    private mutating func isBackLinked(_ link: Path, on target: Path) throws -> Bool {
        let node = try RelationLayout.backLinkPath(of: link, on: target)
        return RelationLayout.BackLink(try read(node))?.link == link
    }

    private mutating func addLink(
        _ link: Path, source: Path, target: Path, rule: RelationLayout.DeleteRule, clear: Path? = nil
    ) throws {
        let node = try RelationLayout.backLinkPath(of: link, on: target)
        noteRead(node)
        set(link, .string(target.description))
        set(node, RelationLayout.BackLink(link: link, source: source, rule: rule, clear: clear).value)
    }

    /// Removes the back-link of `link` from the target its old value names, when it is there.
    private mutating func removeBackLink(of link: Path, value old: Value) throws {
        guard let target = RelationLayout.target(of: old) else { return }
        guard try isBackLinked(link, on: target) else { return }
        set(try RelationLayout.backLinkPath(of: link, on: target), .null)
    }

    /// Gathers the back-links held anywhere in `value` (the object at `path` and objects nested in it)
    /// and the links it holds whose targets hold their back-link.
    private mutating func collect(
        _ value: Value, at path: Path,
        incoming: inout [(holder: Path, backLink: RelationLayout.BackLink)],
        outgoing: inout [(link: Path, target: Path)]
    ) throws {
        switch value {
        case .object(let children):
            for (key, child) in children.sorted(by: { $0.key < $1.key }) {
                if key == RelationLayout.backLinksKey {
                    noteRead(try RelationLayout.path(path, [key]))
                    for (_, entry) in child.children.sorted(by: { $0.key < $1.key }) {
                        if let backLink = RelationLayout.BackLink(entry) { incoming.append((path, backLink)) }
                    }
                    continue
                }
                try collect(child, at: RelationLayout.path(path, [key]), incoming: &incoming, outgoing: &outgoing)
            }
        case .string:
            guard let target = RelationLayout.target(of: value), try isBackLinked(path, on: target) else { return }
            noteRead(path)
            outgoing.append((path, target))
        default:
            return
        }
    }
}
