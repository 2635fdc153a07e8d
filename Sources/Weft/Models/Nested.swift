import Foundation
import WeftCore

/// A model kept inside its object's node, under the field's key (an `Object` field of the Realtime ORM):
/// its fields are children of that node, read and saved with the object.
///
/// ```swift
/// final class Address: Model {
///     @Property var city: String
/// }
/// final class Person: Model {
///     @Nested var address: Address          // /people/<id>/address/city
/// }
/// person.address.city = "Lyon"
/// try person.save(in: transaction)          // saves the nested changes too
/// let lyon = try replica.fetch(for: Person.self).where(\.$address.$city == "Lyon")
/// ```
@dynamicMemberLookup
@propertyWrapper
public final class Nested<N: Model>: ModelField {
    let declaredKey: String?
    var boundKey: Key?
    /// The nested object, bound to the field's node when its object is.
    let object: N

    /// A nested object stored under `key` (default: the property's name).
    public init(key: String? = nil) {
        declaredKey = key
        object = N()
    }

    @available(*, unavailable, message: "a field is read through its model")
    public var wrappedValue: N { preconditionFailure("unreachable") }

    /// The field itself: `\Person.$address.$city` names a nested field in queries and observations.
    @available(*, unavailable, message: "a field is read through its model")
    public var projectedValue: Nested<N> { preconditionFailure("unreachable") }

    public static subscript<M: Model>(
        _enclosingInstance model: M, wrapped wrapped: KeyPath<M, N>,
        storage storage: ReferenceWritableKeyPath<M, Nested<N>>
    ) -> N {
        let field = model[keyPath: storage]
        let key = field.bind(model, storage: storage, in: M.self)
        field.bindNested(to: model.source, key: key)
        return field.object
    }

    public static subscript<M: Model>(
        _enclosingInstance model: M, projected projected: KeyPath<M, Nested<N>>,
        storage storage: ReferenceWritableKeyPath<M, Nested<N>>
    ) -> Nested<N> {
        let field = model[keyPath: storage]
        _ = field.bind(model, storage: storage, in: M.self)
        return field
    }

    /// A field of the nested model, reached through this one: `\Person.$address.$city`.
    public subscript<F: QueryableField>(dynamicMember keyPath: KeyPath<N, F>) -> NestedField<F.FieldValue> {
        let inner = ModelSchema.of(N.self).field(at: keyPath, in: N.self).fieldDescriptor
        return NestedField(fieldDescriptor: boundKey.map { inner.nested(under: $0) } ?? inner)
    }

    /// The key the nested object is stored under.
    public var key: String { boundKey?.text ?? declaredKey ?? "" }

    func bindNested(to source: ModelSource, key: Key) {
        switch source {
        case .detached: break
        case .live(let node):
            guard let child = node.child(key: key) else { return }
            if case .live(let current) = object.source, current == child { return }
            object.source = .live(child)
        case .frozen(let node, let value):
            guard let child = node.child(key: key) else { return }
            object.source = .frozen(child, value[key])
        }
    }

    var hasChanges: Bool { ModelSchema.of(type(of: object)).fields(of: object).contains { $0.hasChanges } }

    func discardChanges() {
        for field in ModelSchema.of(type(of: object)).fields(of: object) { field.discardChanges() }
    }

    func write(to writer: any ModelWriter, at node: DataNode, inserting: Bool) throws {
        try object.recordFields(to: writer, at: node, inserting: inserting)
    }
}

/// A field of a nested model reached through its object (`\Person.$address.$city`).
public struct NestedField<FieldValue>: QueryableField {
    public let fieldDescriptor: FieldDescriptor<FieldValue>
}

extension ModelSchema {
    /// The field a key path names on this type's prototype.
    func field<M: Model, F>(at keyPath: KeyPath<M, F>, in type: M.Type) -> F {
        guard let prototype = prototype as? M else {
            preconditionFailure("the prototype of \(M.self) is a \(Swift.type(of: self.prototype))")
        }
        return prototype[keyPath: keyPath]
    }
}
