/// A JSON node of the replicated tree: null, a boolean, a number, a string, or an object of children.
///
/// Values are always *normalized*: an object never holds a `null` child and is never empty (an empty
/// object is `null`). Arrays are accepted on input (see ``Value/init(json:)``) and stored as objects
/// keyed `"0"`, `"1"`, … as Firebase does.
///
/// ```swift
/// let v = try Value(json: #"{"name":"alice","score":3}"#)
/// v["score"]   // .int(3)
/// ```
public enum Value: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case object([Key: Value])

    /// True for `.null`.
    @inlinable public var isNull: Bool { if case .null = self { return true } else { return false } }

    /// True for `.object`.
    @inlinable public var isObject: Bool { if case .object = self { return true } else { return false } }

    /// True for `.int` and `.double`.
    @inlinable public var isNumber: Bool {
        switch self {
        case .int, .double: return true
        default: return false
        }
    }

    /// The children of an object; empty for every other value.
    @inlinable public var children: [Key: Value] {
        if case let .object(children) = self { return children }
        return [:]
    }

    /// The child under `key`, or `.null`.
    @inlinable public subscript(key: Key) -> Value {
        if case let .object(children) = self { return children[key] ?? .null }
        return .null
    }

    /// The child under `key`, or null, for a key held as text (the subscript taking a ``Key`` spares hashing it).
    @inlinable public subscript(key: String) -> Value { self[Key(unchecked: key)] }

    /// The node at `path` below this value, or `.null`.
    public func value(at path: Path) -> Value { value(at: path.keys[...]) }

    /// The node at the given keys below this value, or `.null`.
    ///
    /// The walk recurses on the nodes in place: a loop holding the current node in a variable takes
    /// and drops a reference per level.
    public func value(at keys: ArraySlice<Key>) -> Value {
        keys.withUnsafeBufferPointer { value(at: $0, from: 0) }
    }

    /// ``value(at:)-(ArraySlice<Key>)`` from `depth` on, with the keys borrowed from the buffer (a copy of
    /// a key whose text is on the heap takes and drops a reference).
    private func value(at keys: UnsafeBufferPointer<Key>, from depth: Int) -> Value {
        guard depth < keys.count else { return self }
        guard case .object(let children) = self, let index = children.index(forKey: keys[depth]) else { return .null }
        return children.values[index].value(at: keys, from: depth + 1)
    }

    /// True when a proper ancestor of the node at `keys` is a scalar (a write there would replace it).
    public func hasScalar(above keys: ArraySlice<Key>) -> Bool { scalarDepth(above: keys) != nil }

    /// The depth of the highest proper ancestor of the node at `keys` that is a scalar (0 for this value
    /// itself), or nil when there is none; in one walk that takes no reference.
    public func scalarDepth(above keys: ArraySlice<Key>) -> Int? {
        keys.withUnsafeBufferPointer { scalarDepth(above: $0, from: 0) }
    }

    private func scalarDepth(above keys: UnsafeBufferPointer<Key>, from depth: Int) -> Int? {
        guard depth < keys.count else { return nil }
        switch self {
        case .null: return nil
        case .object(let children):
            guard let index = children.index(forKey: keys[depth]) else { return nil }
            return children.values[index].scalarDepth(above: keys, from: depth + 1)
        default: return depth
        }
    }

    /// Builds an object from children, dropping null children; an empty result is `.null`.
    public static func object(normalizing children: [Key: Value]) -> Value {
        var kept = children
        for (key, child) in children where child.isNull { kept.removeValue(forKey: key) }
        return kept.isEmpty ? .null : .object(kept)
    }

    /// This value with null children dropped and emptied objects removed, at every level: the form every
    /// stored value has. Values parsed by ``init(json:)`` or decoded by ``OpCodec`` are already normalized;
    /// values built in code (such as the result of a registered function) may not be.
    ///
    /// ```swift
    /// Value.object(["a": .null, "b": .object([:])]).normalized   // .null
    /// ```
    public var normalized: Value {
        guard case .object(let children) = self, !isNormalized else { return self }
        var kept: [Key: Value] = [:]
        kept.reserveCapacity(children.count)
        for (key, child) in children {
            let normal = child.normalized
            if !normal.isNull { kept[key] = normal }
        }
        return kept.isEmpty ? .null : .object(kept)
    }

    /// True when no object in this value is empty or holds null: ``normalized`` would return it as is
    /// (checked without building anything).
    var isNormalized: Bool {
        guard case .object(let children) = self else { return true }
        return !children.isEmpty && children.values.allSatisfy { !$0.isNull && $0.isNormalized }
    }

    /// The number of nodes in this value (scalars and objects) when it is at most `limit`, else nil;
    /// stops counting past `limit`, so the answer costs at most `limit` steps however large the value is.
    func nodeCount(atMost limit: Int) -> Int? {
        var left = limit
        return countDown(&left) ? limit - left : nil
    }

    private func countDown(_ left: inout Int) -> Bool {
        switch self {
        case .null: return true
        case .object(let children):
            left -= 1 + children.count
            if left < 0 { return false }
            for child in children.values where child.isObject {
                // The child itself is counted with its parent's children.
                left += 1
                if !child.countDown(&left) { return false }
            }
            return true
        default:
            left -= 1
            return left >= 0
        }
    }

    /// Number of nodes in this value (scalars and objects), `0` for null.
    public var nodeCount: Int {
        switch self {
        case .null: return 0
        case .object(let children): return 1 + children.values.reduce(0) { $0 + $1.nodeCount }
        default: return 1
        }
    }
}

// MARK: - Tree writes

extension Value {
    /// Writes `newValue` at `keys` with the data model's rules: a scalar met on the way becomes an
    /// object, a null write removes the node, and emptied objects vanish. Returns the value the node
    /// had before (what ``value(at:)-(ArraySlice<Key>)`` gave).
    ///
    /// A null write below a scalar, or below a missing node, changes nothing.
    @inlinable @discardableResult
    public mutating func write(_ newValue: Value, at keys: ArraySlice<Key>) -> Value {
        keys.withUnsafeBufferPointer { write(newValue, at: $0, from: 0) }
    }

    /// ``write(_:at:)-(_,ArraySlice<Key>)`` from `depth` on, with the keys borrowed and each object moved
    /// out of `self` while it changes, as in ``update(at:from:_:)``.
    @usableFromInline @discardableResult
    mutating func write(_ newValue: Value, at keys: UnsafeBufferPointer<Key>, from depth: Int) -> Value {
        guard depth < keys.count else {
            var old = newValue
            swap(&old, &self)
            return old
        }
        guard case .object = self else {
            // Nothing or a scalar here: a null write changes nothing, another replaces it with an object.
            guard !newValue.isNull else { return .null }
            var child = Value.null
            child.write(newValue, at: keys, from: depth + 1)
            self = .object([keys[depth]: child])
            return .null
        }
        var taken = Value.null
        swap(&taken, &self)
        guard case .object(var children) = consume taken else { return .null }
        let old: Value
        if let index = children.index(forKey: keys[depth]) {
            old = children.values[index].write(newValue, at: keys, from: depth + 1)
            if children.values[index].isNull { children.remove(at: index) }
        } else if newValue.isNull {
            old = .null
        } else {
            var child = Value.null
            old = child.write(newValue, at: keys, from: depth + 1)
            children[keys[depth]] = child
        }
        self = children.isEmpty ? .null : .object(children)
        return old
    }

    /// Lets `body` change the node at `keys` in place (it gets `.null` for a missing node), in one walk
    /// that keeps the data model's rules: a node `body` leaves null is removed, and so are the objects
    /// it empties. `body` must leave a normalized value.
    ///
    /// - Returns: false, without calling `body` or changing anything, when a proper ancestor of the node
    ///   is a scalar (a write there would replace the scalar: callers take the general road).
    @inlinable
    public mutating func update(at keys: ArraySlice<Key>, _ body: (inout Value) -> Void) -> Bool {
        keys.withUnsafeBufferPointer { update(at: $0, from: 0, body) }
    }

    /// ``update(at:_:)`` from `depth` on. The keys are borrowed from the buffer, not copied (a key whose
    /// text is on the heap would be a reference taken and dropped per level), and the object being
    /// changed is moved out of `self` by a swap rather than copied out and cleared (a copy is one more
    /// reference taken and dropped per level).
    @usableFromInline
    mutating func update(at keys: UnsafeBufferPointer<Key>, from depth: Int, _ body: (inout Value) -> Void) -> Bool {
        guard depth < keys.count else {
            body(&self)
            return true
        }
        guard case .object = self else {
            guard isNull else { return false }
            var child = Value.null
            let updated = child.update(at: keys, from: depth + 1, body)
            if !child.isNull { self = .object([keys[depth]: child]) }
            return updated
        }
        // Held by `children` alone while it changes, so the dictionary is not copied. (A `switch` over
        // the taken value binds a copy; the `guard` below moves it, and `self` is an object here.)
        var taken = Value.null
        swap(&taken, &self)
        guard case .object(var children) = consume taken else { return false }
        let updated: Bool
        if let index = children.index(forKey: keys[depth]) {
            updated = children.values[index].update(at: keys, from: depth + 1, body)
            if children.values[index].isNull { children.remove(at: index) }
        } else {
            var child = Value.null
            updated = child.update(at: keys, from: depth + 1, body)
            if !child.isNull { children[keys[depth]] = child }
        }
        self = children.isEmpty ? .null : .object(children)
        return updated
    }

    /// Writes `newValue` at `path`; see ``write(_:at:)-(_,ArraySlice<Key>)``.
    @inlinable @discardableResult public mutating func write(_ newValue: Value, at path: Path) -> Value {
        write(newValue, at: path.keys[...])
    }
}
