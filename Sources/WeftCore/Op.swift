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

        @usableFromInline init(path: Path, kind: OpKind) {
            self.path = path
            self.kind = kind
        }
    }

    /// The node the op addresses (for a batch, the common ancestor of its parts).
    @inlinable public var path: Path {
        _read { yield body.path }
        set { body = Body(path: newValue, kind: body.kind) }
    }

    /// What the op does.
    @inlinable public var kind: OpKind {
        _read { yield body.kind }
        set { body = Body(path: body.path, kind: newValue) }
    }

    /// The replica that made the op.
    @inlinable public var origin: ReplicaID { stamp.replica }

    /// An op from its parts. Callers build ops through ``OpKind`` values already validated.
    public init(stamp: Stamp, sequence: UInt64, path: Path, kind: OpKind) {
        precondition(sequence >= 1, "op sequences start at 1")
        self.stamp = stamp
        self.sequence = sequence
        self.body = Body(path: path, kind: kind)
    }

    public static func == (lhs: Op, rhs: Op) -> Bool {
        lhs.stamp == rhs.stamp && lhs.sequence == rhs.sequence
            && (lhs.body === rhs.body || (lhs.body.path == rhs.body.path && lhs.body.kind == rhs.body.kind))
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(stamp)
        hasher.combine(sequence)
        hasher.combine(body.path)
        hasher.combine(body.kind)
    }

    /// The paths whose subtrees this op reads or writes: the op's own path; each listed child for a
    /// merge (a merge touches nothing else); each part's for a batch.
    public var anchors: [Path] {
        let isBatch: Bool
        switch kind {
        case .merge: isBatch = false
        case .batch: isBatch = true
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
        case .merge, .batch: return true
        case .set, .increment, .transaction, .call: return false
        }
    }

    /// True when some anchor of the op is related to `path` (one is an ancestor-or-self of the other),
    /// without building the anchors.
    public func hasAnchor(relatedTo path: Path) -> Bool {
        switch kind {
        case .merge, .batch: return containsAnchor { path.isRelated(toJoined: $0, $1) }
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
            return writes.contains { write in
                if case .merge(let base, let children) = write {
                    return children.contains { predicate(base.keys, $0.relative.keys) }
                }
                return predicate(write.path.keys, [])
            }
        default:
            return predicate(path.keys, [])
        }
    }

    /// True for the kinds whose result depends on the state they meet (increment, transaction, call,
    /// and batches holding an increment). Sets and merges are blind writes.
    public var readsState: Bool {
        switch kind {
        case .set, .merge: return false
        case .increment, .transaction, .call: return true
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
    /// A transaction read a subtree that an op unseen by its origin had touched before it.
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
