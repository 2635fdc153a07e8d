import Foundation
import WeftCore

/// A link to another object with integrity (the Realtime ORM's `Relation`): the target keeps a
/// back-link, written in the same op as the link, and deleting the target removes the link (`.nullify`,
/// the default) or deletes this object too (`.cascade`), in the deleting op. Every relation change
/// reads what it rests on, so a commit that raced a concurrent relation change or delete is refused
/// (`rejected`; a `performChanges` closure runs again).
///
/// ```swift
/// final class Task: Model {
///     @Relation var assignee: Person?
///     @Relation(onDelete: .cascade) var board: Board?
/// }
/// task.assignee = ann                         // ann must be stored
/// let transaction = replica.transaction()
/// try task.save(in: transaction)              // the link, ann's back-link, one op
/// try await transaction.commit()
/// let annsTasks = try replica.fetch(for: Task.self).where(\.$assignee == ann)
/// ```
@dynamicMemberLookup
@propertyWrapper
public final class Relation<Target: Model>: ModelField, QueryableField {
    let declaredKey: String?
    var boundKey: Key?
    /// What deleting the target does to the link.
    public let rule: RelationDeleteRule
    /// The target assigned and not yet saved (`.some(nil)`: the link removed).
    var change: Target??

    /// A link stored under `key` (default: the property's name), with what deleting its target does.
    public init(key: String? = nil, onDelete rule: RelationDeleteRule = .nullify) {
        declaredKey = key
        self.rule = rule
    }

    @available(*, unavailable, message: "a field is read through its model")
    public var wrappedValue: Target? {
        get { preconditionFailure("unreachable") }
        set { preconditionFailure("unreachable") }
    }

    /// The field itself: `\Task.$assignee` in queries, `\Task.$assignee.$name` in observations.
    @available(*, unavailable, message: "a field is read through its model")
    public var projectedValue: Relation<Target> { preconditionFailure("unreachable") }

    public static subscript<M: Model>(
        _enclosingInstance model: M, wrapped wrapped: ReferenceWritableKeyPath<M, Target?>,
        storage storage: ReferenceWritableKeyPath<M, Relation<Target>>
    ) -> Target? {
        get {
            let field = model[keyPath: storage]
            let key = field.bind(model, storage: storage, in: M.self)
            if let change = field.change { return change }
            return RelationFields.target(model.storedValue(key: key), of: model, as: Target.self)
        }
        set { model[keyPath: storage].change = .some(newValue) }
    }

    public static subscript<M: Model>(
        _enclosingInstance model: M, projected projected: KeyPath<M, Relation<Target>>,
        storage storage: ReferenceWritableKeyPath<M, Relation<Target>>
    ) -> Relation<Target> {
        let field = model[keyPath: storage]
        _ = field.bind(model, storage: storage, in: M.self)
        return field
    }

    /// A field of the target, reached through the link, for observations: `\Task.$assignee.$name`.
    public subscript<F: QueryableField>(dynamicMember keyPath: KeyPath<Target, F>) -> ReferencedField<F.FieldValue> {
        let inner = ModelSchema.of(Target.self).field(at: keyPath, in: Target.self).fieldDescriptor
        return ReferencedField(referenceKeys: boundKey.map { [$0] } ?? [], targetKeys: inner.keys)
    }

    /// The key the link is stored under.
    public var key: String { boundKey?.text ?? declaredKey ?? "" }

    /// Compares with the target's path: `\.$assignee == ann` (ann stored).
    public var fieldDescriptor: FieldDescriptor<Target> {
        FieldDescriptor(keys: boundKey.map { [$0] } ?? []) { target, _, path in try RelationFields.stored(target, at: path) }
    }

    var hasChanges: Bool { change != nil }

    func discardChanges() { change = nil }

    func write(to writer: any ModelWriter, at node: DataNode, inserting: Bool) throws {
        guard let change else { return }
        let (source, field) = try RelationFields.source(of: node)
        if let target = change {
            let targetNode = try RelationFields.storedNode(of: target, for: node)
            try RelationWriting.record(on: writer, access: node.access) {
                try $0.link(source: source, field: field, to: targetNode.location, rule: rule.core)
            }
        } else if !inserting {
            try RelationWriting.record(on: writer, access: node.access) { try $0.unlink(source: source, field: field) }
        }
    }
}

extension Relation: ObservableField {
    var observedKeys: ObservedKeys { .own(boundKey.map { [$0] } ?? []) }
}
