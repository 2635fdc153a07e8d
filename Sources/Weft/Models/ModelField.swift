import Foundation
import WeftCore

/// A stored field of a model: the property wrappers (`Property`, `SharedProperty`, `Values`, …) conform.
///
/// How a field is declared and bound (for a new wrapper):
/// - It is a `final class` marked `@propertyWrapper`, with an `init(key: String? = nil)` (plus
///   `init(wrappedValue:key:)` when it has a default), `declaredKey` set from `key`.
/// - Its `wrappedValue` is unavailable; its value goes through the static
///   `subscript(_enclosingInstance:wrapped:storage:)`, which calls
///   ``bind(_:storage:in:)`` to learn its key and then reads `model.storedValue(key:)`.
/// - Its projection (`$field`) goes through `subscript(_enclosingInstance:projected:storage:)` the same
///   way and returns the field itself, so `\Post.$field` names the field in queries and observations.
/// - Keys come from the declared names: when a model type is first used, a prototype instance is made
///   and its fields found by `Mirror` (labels minus `_`), unless `declaredKey` is set.
/// - ``write(to:at:inserting:)`` records the field's changes (its whole value when inserting) on the
///   writer. Deleting an object is the relation planner's (it clears the node and whatever links ask).
protocol ModelField: AnyObject {
    /// The key given to the wrapper, if any (else the property's name).
    var declaredKey: String? { get }
    /// The key the field is bound to; nil until bound.
    var boundKey: Key? { get set }
    /// True when the field holds a change not yet saved.
    var hasChanges: Bool { get }
    /// Records the field's changes (when `inserting`, its whole value) for the field's node `node`.
    func write(to writer: any ModelWriter, at node: DataNode, inserting: Bool) throws
    /// Forgets the changes not yet saved (after they were recorded).
    func discardChanges()
    /// Binds a nested object to the field's node (nested models only).
    func bindNested(to source: ModelSource, key: Key)
    /// What is wrong with the declaration, if anything (checked once per model type).
    func declarationProblem() -> String?
}

extension ModelField {
    func bindNested(to source: ModelSource, key: Key) {}
    func declarationProblem() -> String? { nil }

    /// The field's key, binding it on first use from the model type's schema.
    func bind<M: Model>(_ model: M, storage: AnyKeyPath, in modelType: M.Type) -> Key {
        if let boundKey { return boundKey }
        let key = ModelSchema.of(Swift.type(of: model)).key(for: storage)
        boundKey = key
        return key
    }
}

/// What model writes are recorded on: a `Transaction` (or a `WriteBatch` in `performChanges`).
protocol ModelWriter: AnyObject {
    /// Records a set of a node to a value (null deletes it).
    func recordSet(_ value: Value, at node: DataNode) throws
    /// Records an increment of the number at a node.
    func recordIncrement(by step: Number, at node: DataNode) throws
    /// Reads a node's value and records that the write depends on it (the transaction rule): the commit
    /// is refused when it changed meanwhile. Nil when the writer cannot read (a batch).
    func recordRead(_ node: DataNode) throws -> Value?
    /// The writes recorded so far, which the reads (of the state before them) do not show.
    var pendingWrites: [Write] { get }
    /// A fresh push key for a child of `node`, sorting after every key made before it.
    func reservePushKey(under node: DataNode) throws -> String
}

/// The fields of one model type, found once on a prototype instance.
final class ModelSchema: @unchecked Sendable {
    // Sendable: the prototype is never written after `init` (its fields are bound there); `keys` is
    // guarded by `lock`.
    /// A bound instance made with `init()`, on which key paths to fields are evaluated.
    let prototype: Model
    /// The fields in declaration order (superclass fields first): label and key.
    let fields: [(label: String, key: Key)]
    private let lock = NSLock()
    private var keys: [AnyKeyPath: Key] = [:]

    private static let lock = NSLock()
    nonisolated(unsafe) private static var schemas: [ObjectIdentifier: ModelSchema] = [:]

    /// The schema of a model type (made on first use).
    static func of(_ type: Model.Type) -> ModelSchema {
        let id = ObjectIdentifier(type)
        if let schema = lock.withLock({ schemas[id] }) { return schema }
        let schema = ModelSchema(type)
        return lock.withLock {
            if let existing = schemas[id] { return existing }
            schemas[id] = schema
            return schema
        }
    }

    private init(_ type: Model.Type) {
        let prototype = type.init()
        var fields: [(String, Key)] = []
        var seen: Set<String> = []
        for (label, field) in Self.declaredFields(of: prototype) {
            let text = field.declaredKey ?? String(label.drop { $0 == "_" })
            // A declaration error, found the first time the type is used: never data from outside.
            precondition(Key.isValid(text), "\(type).\(label): \"\(text)\" is not a valid key")
            precondition(seen.insert(text).inserted, "\(type): two fields are stored under the key \"\(text)\"")
            if let problem = field.declarationProblem() { preconditionFailure("\(type).\(label): \(problem)") }
            let key = Key(unchecked: text)
            field.boundKey = key
            fields.append((label, key))
        }
        self.prototype = prototype
        self.fields = fields
    }

    /// The fields of `model`, found by reflection: label and field, superclass fields first.
    static func declaredFields(of model: Model) -> [(String, any ModelField)] {
        var mirrors: [Mirror] = []
        var mirror: Mirror? = Mirror(reflecting: model)
        while let current = mirror {
            mirrors.append(current)
            mirror = current.superclassMirror
        }
        return mirrors.reversed().flatMap { mirror in
            mirror.children.compactMap { child -> (String, any ModelField)? in
                guard let label = child.label, let field = child.value as? any ModelField else { return nil }
                return (label, field)
            }
        }
    }

    /// The key of the field stored at `storage` (a key path to a wrapper of an object of this type).
    func key(for storage: AnyKeyPath) -> Key {
        if let key = lock.withLock({ keys[storage] }) { return key }
        // Every field of the prototype was bound in `init`.
        guard let field = prototype[keyPath: storage] as? any ModelField, let key = field.boundKey else {
            preconditionFailure("\(storage) is not a field of \(type(of: prototype))")
        }
        lock.withLock { keys[storage] = key }
        return key
    }
}
