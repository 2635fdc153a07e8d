import Foundation
import WeftCore

// Saving, inserting and deleting objects: each records its writes on a writer (a `Transaction`, or the
// `WriteBatch` of `performChanges`), so that they apply with the writer's other writes as one op.

extension Model {
    /// Records the changes of the object's fields (assigned values, increments, replaced collections, nested
    /// objects' changes) in `batch`; the object then reads them from the replica once the batch applies.
    ///
    /// ```swift
    /// try await replica.performChanges { batch in
    ///     post.title = "Hello"
    ///     try post.save(in: batch)
    /// }
    /// ```
    /// - Throws: `WeftError` with code `invalidValue` for a detached or frozen object, a read-only field
    ///   assigned, a shared field that needs a read (use a `Transaction`), or as the batch's writes.
    public func save(in batch: WriteBatch) throws { try save(to: batch) }

    /// Stores the detached object under a new push id of its type's ``collection`` in `batch` (or under
    /// `node`, replacing what it held), with every field: those assigned, the others at their defaults.
    /// The object is bound to its node at once.
    ///
    /// ```swift
    /// let post = Post()
    /// post.title = "First"
    /// try await replica.performChanges { batch in try post.insert(in: batch) }
    /// print(post.id!)
    /// ```
    /// - Throws: `WeftError` with code `invalidValue` when the object is already stored, or as the
    ///   batch's writes.
    public func insert(in batch: WriteBatch, at node: DataNode? = nil) throws {
        try insert(to: batch, access: batch.access, at: node)
    }

    /// Deletes the object's node in `batch`.
    ///
    /// ```swift
    /// try await replica.performChanges { batch in try post.delete(in: batch) }
    /// ```
    /// Links that point at it are removed or cascade, as they declare (see ``Relation``); the batch then
    /// reads what it rests on, and `performChanges` runs the closure again if that changed meanwhile.
    ///
    /// - Throws: `WeftError` with code `invalidValue` for a detached object.
    public func delete(in batch: WriteBatch) throws { try delete(to: batch) }

    // MARK: - Core

    func save(to writer: any ModelWriter) throws {
        let node = try storedNode(for: "saved")
        try recordFields(to: writer, at: node, inserting: false)
    }

    func insert(to writer: any ModelWriter, access: ReplicaAccess, at target: DataNode?) throws {
        guard case .detached = source else {
            throw WeftError(.invalidValue, "this \(Self.self) is stored already at \(node?.path ?? "?"): save it")
        }
        let node: DataNode
        if let target {
            try access.checkOwns(target)
            node = target
        } else {
            let collection = try Self.collectionNode(in: access)
            node = try collection.childNode(validating: try writer.reservePushKey(under: collection))
        }
        // Bound first: fields that write relative to their object (collections) find its node.
        source = .live(node)
        // One set of the whole object (replacing what the node held), not one per field: a batch of
        // inserts then has as many writes as objects, as `batch.set(object, at:)` would.
        let collector = ObjectCollector(base: writer, root: node)
        try recordFields(to: collector, at: node, inserting: true)
        try writer.recordSet(collector.object, at: node)
        try collector.replayIncrements()
    }

    func delete(to writer: any ModelWriter) throws {
        let node = try storedNode(for: "deleted")
        try recordDeletion(to: writer, at: node)
    }

    /// The node of a live object, or a clear error.
    private func storedNode(for action: String) throws -> DataNode {
        switch source {
        case .live(let node): return node
        case .detached:
            throw WeftError(.invalidValue, "this \(Self.self) is not stored, so it cannot be \(action): insert it")
        case .frozen(let node, _):
            throw WeftError(
                .invalidValue, "a snapshot's object is read-only: bind one with \(Self.self)(node:)", path: node.path)
        }
    }

    /// Records every field's changes (all of its value when inserting) below `node`, then forgets them.
    func recordFields(to writer: any ModelWriter, at node: DataNode, inserting: Bool) throws {
        let schema = ModelSchema.of(type(of: self))
        let fields = schema.fields(of: self)
        precondition(fields.count == schema.fields.count, "a model's fields are the same on every instance")
        // An insert puts plain values straight into the object it sets, without a node per field.
        let collector = inserting ? (writer as? ObjectCollector).flatMap { $0.root == node ? $0 : nil } : nil
        let coding = node.access.state.coding
        for (field, (_, key)) in zip(fields, schema.fields) {
            if field.boundKey == nil { field.boundKey = key }
            if let collector, field.insertsOneValue {
                if let value = try field.insertedValue(at: try node.location.child(key), coding: coding) {
                    collector.recordField(value, key: key)
                }
                continue
            }
            field.bindNested(to: source, key: key)
            try field.write(to: writer, at: node.node(at: try node.location.child(key)), inserting: inserting)
        }
        for field in fields { field.discardChanges() }
    }

    /// Records the deletion of the object at `node` as a relation change (`RelationPlanner`): the node
    /// cleared, the links that point into it nullified or their sources deleted (cascade), the back-links
    /// of its own links removed from their targets, all in the writer's one op. Any object may be a link's
    /// target, so every delete reads what it rests on and the relation clock.
    func recordDeletion(to writer: any ModelWriter, at node: DataNode) throws {
        try RelationWriting.recordDeletion(of: node, on: writer)
    }
}

// MARK: - ModelWriter

extension WriteBatch: ModelWriter {
    func recordSet(_ value: Value, at node: DataNode) throws { try set(value, at: node) }

    func recordIncrement(by step: Number, at node: DataNode) throws { try increment(by: step, at: node) }

    // A batch that reads is a serializable `performChanges`: its closure runs again on a stale read.
    func recordRead(_ node: DataNode) throws -> Value? { try read(node) }

    var pendingWrites: [Write] { writes }

    func reservePushKey(under node: DataNode) throws -> String {
        guard let key = try node.createChild(at: time).key else {
            preconditionFailure("a child has a key")
        }
        return key
    }
}

/// A writer that gathers the sets below one node into one value (for an insert), and passes every other
/// write to the writer below; increments below the node wait until the gathered value is set.
final class ObjectCollector: ModelWriter {
    let base: any ModelWriter
    let root: DataNode
    private(set) var object = Value.null
    private var increments: [(step: Number, node: DataNode)] = []

    init(base: any ModelWriter, root: DataNode) {
        self.base = base
        self.root = root
    }

    func recordSet(_ value: Value, at node: DataNode) throws {
        guard node.access.isSame(as: root.access), let keys = root.location.relativeKeys(of: node.location) else {
            return try base.recordSet(value, at: node)
        }
        _ = object.write(value, at: keys)
    }

    /// Puts `value` under `key` in the gathered object (a plain field's value, on insert).
    func recordField(_ value: Value, key: Key) {
        _ = object.write(value, at: [key][...])
    }

    func recordIncrement(by step: Number, at node: DataNode) throws {
        guard root.location.isAncestorOrSelf(of: node.location) else {
            return try base.recordIncrement(by: step, at: node)
        }
        increments.append((step, node))
    }

    func recordRead(_ node: DataNode) throws -> Value? { try base.recordRead(node) }

    // The object gathered so far is not written yet; it is, once the insert ends.
    var pendingWrites: [Write] {
        object.isNull ? base.pendingWrites : base.pendingWrites + [.set(root.location, object)]
    }

    func reservePushKey(under node: DataNode) throws -> String { try base.reservePushKey(under: node) }

    /// Records the increments held back, after the gathered value.
    func replayIncrements() throws {
        for (step, node) in increments { try base.recordIncrement(by: step, at: node) }
    }
}
