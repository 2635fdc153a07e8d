import Foundation
import WeftCore

@_spi(Reflection) import Swift

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
    /// True when inserting the object stores one value at the field's key and nothing else: the insert
    /// then puts ``insertedValue(at:coding:)`` in the object it sets, without a write of its own.
    var insertsOneValue: Bool { get }
    /// The value an insert stores at the field's key, at `path` (nil: nothing), for a field that
    /// ``insertsOneValue``.
    func insertedValue(at path: Path, coding: ValueCoding) throws -> Value?
    /// What is wrong with the declaration, if anything (checked once per model type).
    func declarationProblem() -> String?
}

extension ModelField {
    func bindNested(to source: ModelSource, key: Key) {}
    var insertsOneValue: Bool { false }
    func insertedValue(at path: Path, coding: ValueCoding) throws -> Value? { nil }
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
    /// Where each field's wrapper is stored in an instance (bytes from the object's start, in the order
    /// of `fields`), or nil when the runtime does not give offsets that match the declared fields.
    private let offsets: [Int]?
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
        offsets = Self.fieldOffsets(of: type, matching: prototype, labels: fields.map(\.0))
    }

    /// True when the fields are read at offsets (false: by `Mirror`, when the runtime gave no offsets).
    var readsFieldsAtOffsets: Bool { offsets != nil }

    /// The fields of `model` (an instance of this schema's type) in the order of ``fields``.
    ///
    /// Read at the offsets found once per type: a `Mirror` walk per object cost more than the rest of an
    /// insert or save together (`weft bench models`, Docs/BENCHMARKS.md).
    func fields(of model: Model) -> [any ModelField] {
        guard let offsets else { return Self.declaredFields(of: model).map(\.1) }
        return withExtendedLifetime(model) {
            let base = UnsafeRawPointer(Unmanaged.passUnretained(model).toOpaque())
            var found: [any ModelField] = []
            found.reserveCapacity(offsets.count)
            for offset in offsets {
                // The offsets were checked against this type's fields in `init`; a subclass instance
                // has its own schema.
                guard let field = base.load(fromByteOffset: offset, as: AnyObject.self) as? any ModelField else {
                    return Self.declaredFields(of: model).map(\.1)
                }
                found.append(field)
            }
            return found
        }
    }

    /// The offsets of the stored fields of `type` that are model fields, superclass fields first, as the
    /// runtime's field records give them; nil unless they name exactly `labels` and hold, in `prototype`,
    /// the very wrappers `Mirror` found.
    private static func fieldOffsets(of type: Model.Type, matching prototype: Model, labels: [String]) -> [Int]? {
        var found: [(label: String, offset: Int)] = []
        // `_EachFieldOptions.classType` (declared as a `static var`, which strict concurrency will not read).
        let classType = _EachFieldOptions(rawValue: 1 << 0)
        let complete = _forEachField(of: type, options: classType) { name, offset, fieldType, _ in
            if fieldType is any ModelField.Type { found.append((String(cString: name), offset)) }
            return true
        }
        guard complete, found.map(\.label) == labels else { return nil }
        let reflected = declaredFields(of: prototype).map(\.1)
        let base = UnsafeRawPointer(Unmanaged.passUnretained(prototype).toOpaque())
        let agrees = withExtendedLifetime(prototype) {
            zip(found, reflected).allSatisfy { base.load(fromByteOffset: $0.offset, as: AnyObject.self) === $1 }
        }
        return agrees ? found.map(\.offset) : nil
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
