import Foundation
import WeftCore

/// A link to another object, stored as the target's path (the Realtime ORM's `Reference`): no
/// integrity, so a deleted target leaves the link in place, reading as an object whose node is empty.
///
/// ```swift
/// final class Post: Model {
///     @Reference var author: Person?
/// }
/// post.author = alice                         // alice must be stored
/// try post.save(in: transaction)              // writes "author": "/people/alice"
/// print(post.author?.name)
/// let byAlice = try replica.fetch(for: Post.self).where(\.$author == alice)
/// let token = try post.observe(\.$author.$name) { change in … }   // follows the link
/// ```
@dynamicMemberLookup
@propertyWrapper
public final class Reference<Target: Model>: ModelField, QueryableField {
    let declaredKey: String?
    var boundKey: Key?
    /// The target assigned and not yet saved (`.some(nil)`: the link removed).
    var change: Target??

    /// A link stored under `key` (default: the property's name).
    public init(key: String? = nil) { declaredKey = key }

    @available(*, unavailable, message: "a field is read through its model")
    public var wrappedValue: Target? {
        get { preconditionFailure("unreachable") }
        set { preconditionFailure("unreachable") }
    }

    /// The field itself: `\Post.$author` in queries, `\Post.$author.$name` in observations.
    @available(*, unavailable, message: "a field is read through its model")
    public var projectedValue: Reference<Target> { preconditionFailure("unreachable") }

    public static subscript<M: Model>(
        _enclosingInstance model: M, wrapped wrapped: ReferenceWritableKeyPath<M, Target?>,
        storage storage: ReferenceWritableKeyPath<M, Reference<Target>>
    ) -> Target? {
        get {
            let field = model[keyPath: storage]
            let key = field.bind(model, storage: storage, in: M.self)
            if let change = field.change { return change }
            guard let node = model.node, case .string(let path)? = model.storedValue(key: key),
                let target = node.access.node(for: path)
            else { return nil }
            let object = Target()
            object.source = .live(target)
            return object
        }
        set { model[keyPath: storage].change = .some(newValue) }
    }

    public static subscript<M: Model>(
        _enclosingInstance model: M, projected projected: KeyPath<M, Reference<Target>>,
        storage storage: ReferenceWritableKeyPath<M, Reference<Target>>
    ) -> Reference<Target> {
        let field = model[keyPath: storage]
        _ = field.bind(model, storage: storage, in: M.self)
        return field
    }

    /// A field of the target, reached through the link, for observations: `\Post.$author.$name`.
    public subscript<F: QueryableField>(dynamicMember keyPath: KeyPath<Target, F>) -> ReferencedField<F.FieldValue> {
        let inner = ModelSchema.of(Target.self).field(at: keyPath, in: Target.self).fieldDescriptor
        return ReferencedField(referenceKeys: boundKey.map { [$0] } ?? [], targetKeys: inner.keys)
    }

    /// The key the link is stored under.
    public var key: String { boundKey?.text ?? declaredKey ?? "" }

    /// Compares with the target's path: `\.$author == alice` (alice stored).
    public var fieldDescriptor: FieldDescriptor<Target> {
        FieldDescriptor(keys: boundKey.map { [$0] } ?? []) { target, _, path in try Self.stored(target, at: path) }
    }

    static func stored(_ target: Target?, at path: Path) throws -> Value {
        guard let target else { return .null }
        guard let node = target.node else {
            throw WeftError(
                .invalidValue, "a link to a \(Target.self) that is not stored: insert it first", path: path.description)
        }
        return .string(node.path)
    }

    var hasChanges: Bool { change != nil }

    func discardChanges() { change = nil }

    func write(to writer: any ModelWriter, at node: DataNode, inserting: Bool) throws {
        guard let change else { return }
        if let target = change, let targetNode = target.node {
            try node.access.checkOwns(targetNode)
        }
        try writer.recordSet(Self.stored(change, at: node.location), at: node)
    }
}

/// A field of a linked object reached through a ``Reference`` (`\Post.$author.$name`), for observations.
public struct ReferencedField<FieldValue> {
    /// The keys of the link below the observed object, and of the field below the target.
    let referenceKeys: [Key]
    let targetKeys: [Key]
}
