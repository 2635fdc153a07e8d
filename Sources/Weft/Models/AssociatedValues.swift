import Foundation
import WeftCore

/// A dictionary kept in this object, keyed by links to other objects (the Realtime ORM's
/// `AssociatedValues`): each key object keeps a back-link to its entry, written in the same op, and
/// deleting a key object removes its entry (`.nullify`, the default) or deletes this object
/// (`.cascade`). Entries list in the order of their key objects' paths.
///
/// An entry is stored at `field/<the key object's path escaped>` as `{"key": "/people/p1", "value": …}`.
///
/// ```swift
/// final class Board: Model {
///     @AssociatedValues var roles: [(key: Person, value: String)]
/// }
/// board.$roles.set("owner", for: ann)
/// board.$roles.remove(for: bob)
/// try board.save(in: transaction)
/// board.$roles[ann]                                   // "owner"
/// ```
@propertyWrapper
public final class AssociatedValues<Key: Model, T: Codable>: ModelField {
    let declaredKey: String?
    var boundKey: WeftCore.Key?
    /// What deleting a key object does to its entry.
    public let rule: RelationDeleteRule
    /// Changes not yet saved, in order: a value to set for a key object, or nil to remove its entry.
    var changes: [(key: Key, value: T?)] = []
    /// The object holding the field, for ``subscript(_:)`` (weak: the object holds the field).
    weak var owner: Model?

    /// A dictionary stored under `key` (default: the property's name), with what deleting a key object
    /// does to its entry.
    public init(key: String? = nil, onDelete rule: RelationDeleteRule = .nullify) {
        declaredKey = key
        self.rule = rule
    }

    @available(*, unavailable, message: "a field is read through its model")
    public var wrappedValue: [(key: Key, value: T)] {
        get { preconditionFailure("unreachable") }
        set { preconditionFailure("unreachable") }
    }

    /// The field itself (`board.$roles.set("owner", for: ann)`).
    @available(*, unavailable, message: "a field is read through its model")
    public var projectedValue: AssociatedValues<Key, T> { preconditionFailure("unreachable") }

    public static subscript<M: Model>(
        _enclosingInstance model: M, wrapped wrapped: ReferenceWritableKeyPath<M, [(key: Key, value: T)]>,
        storage storage: ReferenceWritableKeyPath<M, AssociatedValues<Key, T>>
    ) -> [(key: Key, value: T)] {
        get {
            let field = model[keyPath: storage]
            field.owner = model
            return field.entries(of: model, key: field.bind(model, storage: storage, in: M.self))
        }
        set {
            // The whole dictionary assigned: entries of key objects not in it are removed.
            let field = model[keyPath: storage]
            field.owner = model
            let current = field.entries(of: model, key: field.bind(model, storage: storage, in: M.self))
            let kept = Set(newValue.compactMap { $0.key.node?.path })
            for entry in current where !kept.contains(entry.key.node?.path ?? "") { field.changes.append((entry.key, nil)) }
            for entry in newValue { field.changes.append((entry.key, entry.value)) }
        }
    }

    public static subscript<M: Model>(
        _enclosingInstance model: M, projected projected: KeyPath<M, AssociatedValues<Key, T>>,
        storage storage: ReferenceWritableKeyPath<M, AssociatedValues<Key, T>>
    ) -> AssociatedValues<Key, T> {
        let field = model[keyPath: storage]
        _ = field.bind(model, storage: storage, in: M.self)
        field.owner = model
        return field
    }

    /// The value for the key object `key`, with the changes not yet saved; nil when it has no entry.
    public subscript(key: Key) -> T? {
        guard let owner, let boundKey, let path = key.node?.path else { return nil }
        return entries(of: owner, key: boundKey).first { $0.key.node?.path == path }?.value
    }

    /// Sets the value for `key` (a stored object) when the object is saved.
    public func set(_ value: T, for key: Key) { changes.append((key, value)) }

    /// Removes the entry of `key` when the object is saved.
    public func remove(for key: Key) { changes.append((key, nil)) }

    /// The key the dictionary is stored under.
    public var key: String { boundKey?.text ?? declaredKey ?? "" }

    var hasChanges: Bool { !changes.isEmpty }

    func discardChanges() { changes = [] }

    /// The stored entries in the order of their key objects' paths, with the changes not yet saved.
    func entries(of model: Model, key: WeftCore.Key) -> [(key: Key, value: T)] {
        var result: [(key: Key, value: T)] = []
        let coding = model.coding
        for (entryKey, entry) in (model.storedValue(key: key)?.children ?? [:]).sorted(by: { $0.key < $1.key }) {
            guard let target = RelationFields.target(entry["key"], of: model, as: Key.self),
                let value = try? FieldCoding.decode(T.self, from: entry["value"], coding: coding, path: entryKey.text)
            else { continue }
            result.append((target, value))
        }
        for (target, value) in changes {
            let path = target.node?.path
            result.removeAll { path != nil && $0.key.node?.path == path }
            if let value { result.append((target, value)) }
        }
        return result
    }

    func write(to writer: any ModelWriter, at node: DataNode, inserting: Bool) throws {
        guard !changes.isEmpty else { return }
        let (source, field) = try RelationFields.source(of: node)
        let coding = node.access.state.coding
        var planned: [(entry: Path, target: Path, value: Value?)] = []
        for (target, value) in changes {
            let targetNode = try RelationFields.storedNode(of: target, for: node)
            let entry = try WeftError.mapping(path: node.path) {
                try node.location.child(RelationLayout.key(for: targetNode.location))
            }
            let stored = try value.map { try FieldCoding.encode($0, coding: coding, path: entry.child("value")) }
            planned.append((entry, targetNode.location, stored))
        }
        try RelationWriting.record(on: writer, access: node.access) { planner in
            for (entry, target, value) in planned {
                let link = try Path(keys: field.keys + [entry.keys[entry.keys.count - 1], "key"])
                guard let value else {
                    try planner.unlink(source: source, field: link)
                    try planner.write(.null, at: entry)
                    continue
                }
                try planner.link(source: source, field: link, to: target, rule: rule.core, clearing: entry)
                try planner.write(value, at: try entry.child("value"))
            }
        }
    }
}

extension AssociatedValues: ObservableField {
    var observedKeys: ObservedKeys { .own(boundKey.map { [$0] } ?? []) }
}
