/// One write in a replica's op log: what it changes, where, and when (its stamp).
///
/// Ops are made by the API layer from app calls and travel unchanged between replicas. The state of a
/// replica is, by definition, the fold of all ops it knows in stamp order (see ``ReferenceFold``).
public struct Op: Sendable, Hashable {
    /// When the op was made; unique across all replicas. Its replica is the op's origin.
    public var stamp: Stamp
    /// Position in the origin's log: 1, 2, 3, … with no gaps.
    public var sequence: UInt64
    /// The path and kind, shared by every copy of the op. An op is copied wherever it goes (the log,
    /// the index's look-ups, batches sent and stored): one shared body makes a copy one reference
    /// count, where separate fields made it one per path and payload, behind a switch on the kind.
    /// Stamp and sequence stay inline, so searches by stamp read no body.
    @usableFromInline var body: Body

    /// The immutable part of an op.
    @usableFromInline final class Body: Sendable {
        @usableFromInline let path: Path
        @usableFromInline let kind: OpKind
        @usableFromInline let isPartial: Bool

        @usableFromInline init(path: Path, kind: OpKind, isPartial: Bool = false) {
            self.path = path
            self.kind = kind
            self.isPartial = isPartial
        }
    }

    /// The node the op addresses (for a batch, the common ancestor of its parts).
    @inlinable public var path: Path {
        _read { yield body.path }
        set { body = Body(path: newValue, kind: body.kind, isPartial: body.isPartial) }
    }

    /// What the op does.
    @inlinable public var kind: OpKind {
        _read { yield body.kind }
        set { body = Body(path: body.path, kind: newValue, isPartial: body.isPartial) }
    }

    /// True for an op a hub cut down to the share of a replica limited to part of the tree
    /// (``OpProjection``): a projected op, or a withheld placeholder. Such a replica folds it as any op,
    /// but it is not the op its origin made: it never goes to a replica of the whole tree.
    @inlinable public var isPartial: Bool { body.isPartial }

    /// The replica that made the op.
    @inlinable public var origin: ReplicaID { stamp.replica }

    /// An op from its parts. Callers build ops through ``OpKind`` values already validated.
    public init(stamp: Stamp, sequence: UInt64, path: Path, kind: OpKind, isPartial: Bool = false) {
        precondition(sequence >= 1, "op sequences start at 1")
        self.stamp = stamp
        self.sequence = sequence
        self.body = Body(path: path, kind: kind, isPartial: isPartial)
    }

    public static func == (lhs: Op, rhs: Op) -> Bool {
        lhs.stamp == rhs.stamp && lhs.sequence == rhs.sequence
            && (lhs.body === rhs.body
                || (lhs.body.path == rhs.body.path && lhs.body.kind == rhs.body.kind
                    && lhs.body.isPartial == rhs.body.isPartial))
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(stamp)
        hasher.combine(sequence)
        hasher.combine(body.path)
        hasher.combine(body.kind)
        hasher.combine(body.isPartial)
    }

    /// The paths whose subtrees this op reads or writes: the op's own path; each listed child for a
    /// merge (a merge touches nothing else); each part's for a batch.
    public var anchors: [Path] {
        let isBatch: Bool
        switch kind {
        case .merge: isBatch = false
        case .batch, .guardedBatch: isBatch = true
        default: return [path]
        }
        // A batch may write one node in several parts: each anchor once. Batches have few parts, so a
        // scan of the anchors so far finds repeats without hashing paths.
        var result: [Path] = []
        forEachAnchor { head, tail in
            let anchor = Path(uncheckedKeys: tail.isEmpty ? head : head + tail)
            if !isBatch || !result.contains(anchor) { result.append(anchor) }
        }
        return result
    }

    /// Calls `body` with each anchor's keys in two parts, as ``containsAnchor(where:)`` gives them,
    /// without building the anchors. A batch that writes one node in several parts gives it once per part.
    public func forEachAnchor(_ body: (_ head: [Key], _ tail: [Key]) -> Void) {
        _ = containsAnchor { head, tail in
            body(head, tail)
            return false
        }
    }

    /// True for merges and batches, the kinds whose anchors are their written nodes (a merge or batch
    /// may still write a single node).
    public var hasSeveralAnchors: Bool {
        switch kind {
        case .merge, .batch, .guardedBatch: return true
        case .set, .increment, .transaction, .call: return false
        }
    }

    /// True for batches and guarded batches: their writes apply all or nothing, and a rejected one is
    /// indexed by the node that failed it.
    public var hasBatchWrites: Bool {
        switch kind {
        case .batch, .guardedBatch: return true
        case .set, .increment, .merge, .transaction, .call: return false
        }
    }

    /// True for the ops the transaction rule guards: transactions and guarded batches. Whether one
    /// applies depends on which ops stamped before it its origin had seen (``readVector``), at the
    /// paths it read (``guardedPaths``).
    public var isGuarded: Bool {
        switch kind {
        case .transaction, .guardedBatch: return true
        case .set, .increment, .merge, .batch, .call: return false
        }
    }

    /// The version vector a transaction or a guarded batch read under; nil for other kinds.
    public var readVector: VersionVector? {
        switch kind {
        case .transaction(let read, _), .guardedBatch(let read, _, _): return read
        case .set, .increment, .merge, .batch, .call: return nil
        }
    }

    /// The paths whose subtrees the transaction rule guards: a transaction's node, a guarded batch's
    /// read paths; empty for other kinds.
    public var guardedPaths: [Path] {
        switch kind {
        case .transaction: return [path]
        case .guardedBatch(_, let reads, _): return reads
        case .set, .increment, .merge, .batch, .call: return []
        }
    }

    /// True when some path the transaction rule guards for this op (``guardedPaths``) is related to
    /// `other` (one is an ancestor-or-self of the other).
    public func guardsPath(relatedTo other: Path) -> Bool {
        switch kind {
        case .transaction: return path.isRelated(to: other)
        case .guardedBatch(_, let reads, _): return reads.contains { $0.isRelated(to: other) }
        case .set, .increment, .merge, .batch, .call: return false
        }
    }

    /// True when some anchor of the op is related to `path` (one is an ancestor-or-self of the other),
    /// without building the anchors.
    public func hasAnchor(relatedTo path: Path) -> Bool {
        switch kind {
        case .merge, .batch, .guardedBatch: return containsAnchor { path.isRelated(toJoined: $0, $1) }
        default: return self.path.isRelated(to: path)
        }
    }

    /// True when some anchor satisfies `predicate`, which gets each anchor's keys in two parts (a merge
    /// child's anchor is its merge's path, then the child's relative path), so that no anchor is built.
    public func containsAnchor(where predicate: (_ head: [Key], _ tail: [Key]) -> Bool) -> Bool {
        switch kind {
        case .merge(let children):
            return children.contains { predicate(path.keys, $0.relative.keys) }
        case .batch(let writes):
            return Self.containsAnchor(of: writes, where: predicate)
        case .guardedBatch(_, let reads, let writes):
            // The written nodes first, in the order of the writes, as for a batch; then the read paths.
            return Self.containsAnchor(of: writes, where: predicate) || reads.contains { predicate($0.keys, []) }
        default:
            return predicate(path.keys, [])
        }
    }

    /// ``containsAnchor(where:)`` for the writes of a batch: each written node, a merge part's children
    /// one by one.
    private static func containsAnchor(of writes: [Write], where predicate: (_ head: [Key], _ tail: [Key]) -> Bool)
        -> Bool
    {
        writes.contains { write in
            if case .merge(let base, let children) = write {
                return children.contains { predicate(base.keys, $0.relative.keys) }
            }
            return predicate(write.path.keys, [])
        }
    }

    /// True for the kinds whose result depends on the state they meet (increment, transaction, call,
    /// and batches holding an increment). Sets and merges are blind writes.
    public var readsState: Bool {
        switch kind {
        case .set, .merge: return false
        case .increment, .transaction, .call, .guardedBatch: return true
        case .batch(let writes):
            return writes.contains { if case .increment = $0 { return true } else { return false } }
        }
    }
}

/// The kinds of op (blueprint §4).
public enum OpKind: Sendable, Hashable {
    /// Replace the subtree with a value; null deletes it.
    case set(Value)
    /// Set each listed child (relative paths, none inside another), keeping unlisted children.
    case merge([MergeChild])
    /// Add `by` to a number; a null node counts as `from`; anything else rejects the op.
    case increment(by: Number, from: Number)
    /// Several writes under one stamp, all or nothing.
    case batch([Write])
    /// The result of an app's transaction closure, valid only if no op unseen by its origin (`read`)
    /// touched the subtree before it in stamp order.
    case transaction(read: VersionVector, result: Value)
    /// A registered deterministic function, re-executed at its place in stamp order on every replica.
    case call(FunctionCall)
    /// A batch that read: its writes apply as a batch (all or nothing) only if no op unseen by its
    /// origin (`read`) touched the subtree of any of its read paths before it in stamp order; else it is
    /// rejected (`staleRead`) and writes nothing. The multi-path form of ``transaction(read:result:)``.
    /// Build it with ``guarded(read:reads:writes:)``, which checks it and gives the op's path.
    case guardedBatch(read: VersionVector, reads: [Path], writes: [Write])

    /// A guarded batch and its path (the common ancestor of what it reads and writes), checked: at
    /// least one write and one read, at most ``CoreLimits/batchPartsMax`` writes and
    /// ``CoreLimits/guardedReadsMax`` read paths. The read paths are kept sorted, and one inside another
    /// is dropped (every op related to it is related to the outer one).
    ///
    /// ```swift
    /// let (path, kind) = try OpKind.guarded(read: seen, reads: [stockPath], writes: [.increment(stockPath, by: -1, from: 0)])
    /// ```
    /// - Throws: ``CoreError/invalidOp(reason:)``.
    public static func guarded(read: VersionVector, reads: [Path], writes: [Write]) throws -> (path: Path, kind: OpKind) {
        guard !writes.isEmpty else { throw CoreError.invalidOp(reason: "a guarded batch writes something") }
        guard writes.count <= CoreLimits.batchPartsMax else {
            throw CoreError.invalidOp(reason: "a batch holds at most \(CoreLimits.batchPartsMax) writes")
        }
        let kept = minimalReadPaths(reads)
        guard !kept.isEmpty else { throw CoreError.invalidOp(reason: "a guarded batch reads at least one path") }
        guard kept.count <= CoreLimits.guardedReadsMax else {
            throw CoreError.invalidOp(reason: "a guarded batch reads at most \(CoreLimits.guardedReadsMax) paths")
        }
        var path = writes[0].path
        for write in writes.dropFirst() { path = path.commonAncestor(with: write.path) }
        for read in kept { path = path.commonAncestor(with: read) }
        return (path, .guardedBatch(read: read, reads: kept, writes: writes))
    }

    /// Read paths sorted, without repeats, and without any path inside another listed.
    static func minimalReadPaths(_ reads: [Path]) -> [Path] {
        var kept: [Path] = []
        for path in reads.sorted() where !(kept.last.map { $0.isAncestorOrSelf(of: path) } ?? false) {
            kept.append(path)
        }
        return kept
    }
}

/// One child written by a merge: a relative path below the merge's node and its new value.
public struct MergeChild: Sendable, Hashable {
    /// Path relative to the merged node (may be several keys deep).
    public var relative: Path
    /// The new value (null deletes).
    public var value: Value

    public init(relative: Path, value: Value) {
        self.relative = relative
        self.value = value
    }

    /// Builds the children of a merge, sorted, and checks that none lies inside another and none is
    /// the merged node itself.
    /// - Throws: ``CoreError/invalidOp(reason:)``.
    public static func validated(_ children: [MergeChild]) throws -> [MergeChild] {
        guard children.count <= CoreLimits.batchPartsMax else {
            throw CoreError.invalidOp(reason: "a merge lists at most \(CoreLimits.batchPartsMax) children")
        }
        let sorted = children.sorted { $0.relative < $1.relative }
        for child in sorted where child.relative.isRoot {
            throw CoreError.invalidOp(reason: "a merge child path cannot be empty")
        }
        for (a, b) in zip(sorted, sorted.dropFirst()) where a.relative.isAncestorOrSelf(of: b.relative) {
            throw CoreError.invalidOp(reason: "merge paths \(a.relative) and \(b.relative) overlap")
        }
        return sorted
    }
}

/// One write inside a batch.
public enum Write: Sendable, Hashable {
    case set(Path, Value)
    case merge(Path, [MergeChild])
    case increment(Path, by: Number, from: Number)

    /// The node the write addresses.
    public var path: Path {
        switch self {
        case .set(let path, _), .merge(let path, _), .increment(let path, _, _): return path
        }
    }
}

/// A call of a registered function: its versioned name and its arguments.
public struct FunctionCall: Sendable, Hashable {
    /// Registered name.
    public var name: String
    /// Registered version; a change of behaviour needs a new version.
    public var version: UInt32
    /// Arguments, as a JSON value.
    public var arguments: Value

    public init(name: String, version: UInt32, arguments: Value) {
        self.name = name
        self.version = version
        self.arguments = arguments
    }
}

/// The result of applying an op in the fold.
public enum Outcome: Sendable, Hashable {
    /// The op changed the state as its kind says (possibly to the same value).
    case applied
    /// The op had no effect, for the reason given.
    case rejected(Rejection)
    /// The op calls a function this replica has not registered; it waits and is never guessed.
    case waiting
}

/// Why an op was rejected at merge.
public enum Rejection: Sendable, Hashable, CustomStringConvertible {
    /// An increment met a node that is not a number or null.
    case notANumber(Path)
    /// An increment would give an infinite number.
    case nonFinite(Path)
    /// A transaction (or a guarded batch, named by its path) read a subtree that an op unseen by its
    /// origin had touched before it.
    case staleRead(Path)
    /// A registered function refused the call (for example an invariant would break).
    case refusedByFunction(name: String)
    /// A registered function returned a value no write may hold (a non-finite number, an invalid key,
    /// nesting past the depth limit, a string past its size limit): the call writes nothing.
    case invalidFunctionResult(name: String, reason: String)

    /// The node whose state caused the rejection, when there is one.
    public var path: Path? {
        switch self {
        case .notANumber(let path), .nonFinite(let path), .staleRead(let path): return path
        case .refusedByFunction, .invalidFunctionResult: return nil
        }
    }

    public var description: String {
        switch self {
        case .notANumber(let path): return "increment of \(path), which is not a number"
        case .nonFinite(let path): return "increment of \(path) would not be finite"
        case .staleRead(let path): return "transaction on \(path) read a stale value"
        case .refusedByFunction(let name): return "function \(name) refused the call"
        case .invalidFunctionResult(let name, let reason):
            return "function \(name) returned an invalid value: \(reason)"
        }
    }
}
