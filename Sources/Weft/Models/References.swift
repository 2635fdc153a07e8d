import Foundation
import WeftCore

/// A set of links with integrity (the Realtime ORM's `References`): each target once, listed in the
/// order of their paths, each keeping a back-link written in the same op as its entry. Deleting a target
/// removes its entry (`.nullify`, the default) or deletes this object too (`.cascade`). Inserts and
/// removals are kept on the object until it is saved.
///
/// ```swift
/// final class Board: Model {
///     @References var tasks: [Task]
/// }
/// board.$tasks.insert(task)                   // or board.tasks = [task, other]
/// board.$tasks.remove(old)
/// try board.save(in: transaction)             // entries and back-links, one op
/// ```
@propertyWrapper
public final class References<Target: Model>: ModelField {
    let declaredKey: String?
    var boundKey: Key?
    /// What deleting a target does to its entry.
    public let rule: RelationDeleteRule
    /// Changes not yet saved, in order: an insert (true) or a removal (false) of a target.
    var changes: [(target: Target, insert: Bool)] = []

    /// Links stored under `key` (default: the property's name), with what deleting a target does.
    public init(key: String? = nil, onDelete rule: RelationDeleteRule = .nullify) {
        declaredKey = key
        self.rule = rule
    }

    @available(*, unavailable, message: "a field is read through its model")
    public var wrappedValue: [Target] {
        get { preconditionFailure("unreachable") }
        set { preconditionFailure("unreachable") }
    }

    /// The field itself (`board.$tasks.insert(task)`).
    @available(*, unavailable, message: "a field is read through its model")
    public var projectedValue: References<Target> { preconditionFailure("unreachable") }

    public static subscript<M: Model>(
        _enclosingInstance model: M, wrapped wrapped: ReferenceWritableKeyPath<M, [Target]>,
        storage storage: ReferenceWritableKeyPath<M, References<Target>>
    ) -> [Target] {
        get {
            let field = model[keyPath: storage]
            return field.targets(of: model, key: field.bind(model, storage: storage, in: M.self))
        }
        set {
            // The whole collection assigned: what is not in it is removed, what is new is inserted.
            let field = model[keyPath: storage]
            let current = field.targets(of: model, key: field.bind(model, storage: storage, in: M.self))
            let kept = Set(newValue.compactMap { $0.node?.path })
            for target in current where !kept.contains(target.node?.path ?? "") { field.changes.append((target, false)) }
            let had = Set(current.compactMap { $0.node?.path })
            for target in newValue where target.node == nil || !had.contains(target.node?.path ?? "") {
                field.changes.append((target, true))
            }
        }
    }

    public static subscript<M: Model>(
        _enclosingInstance model: M, projected projected: KeyPath<M, References<Target>>,
        storage storage: ReferenceWritableKeyPath<M, References<Target>>
    ) -> References<Target> {
        let field = model[keyPath: storage]
        _ = field.bind(model, storage: storage, in: M.self)
        return field
    }

    /// Adds `target` (a stored object) to the collection when the object is saved.
    public func insert(_ target: Target) { changes.append((target, true)) }

    /// Removes `target` from the collection when the object is saved.
    public func remove(_ target: Target) { changes.append((target, false)) }

    /// The key the collection is stored under.
    public var key: String { boundKey?.text ?? declaredKey ?? "" }

    var hasChanges: Bool { !changes.isEmpty }

    func discardChanges() { changes = [] }

    /// The stored targets in the order of their paths, with the changes not yet saved.
    func targets(of model: Model, key: Key) -> [Target] {
        let entries = (model.storedValue(key: key)?.children ?? [:]).sorted { $0.key < $1.key }
        var targets = entries.compactMap { RelationFields.target($0.value, of: model, as: Target.self) }
        for (target, insert) in changes {
            let path = target.node?.path
            targets.removeAll { path != nil && $0.node?.path == path }
            if insert { targets.append(target) }
        }
        return targets
    }

    func write(to writer: any ModelWriter, at node: DataNode, inserting: Bool) throws {
        guard !changes.isEmpty else { return }
        let (source, field) = try RelationFields.source(of: node)
        let planned = try changes.map { (try RelationFields.storedNode(of: $0.target, for: node).location, $0.insert) }
        try RelationWriting.record(on: writer, access: node.access) { planner in
            for (target, insert) in planned {
                if insert {
                    try planner.insert(source: source, field: field, target: target, rule: rule.core)
                } else {
                    try planner.remove(source: source, field: field, target: target)
                }
            }
        }
    }
}

extension References: ObservableField {
    var observedKeys: ObservedKeys { .own(boundKey.map { [$0] } ?? []) }
}
