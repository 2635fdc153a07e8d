import Foundation
import WeftCore

/// A stored field of a model holding any `Codable` value, optional or not (the Realtime ORM's `Property`).
///
/// Reading it reads the object's node (the replica's current value, decoded with the replica's
/// `jsonDecoder`); assigning it keeps the new value on the object until ``Model/save(in:)`` records it.
///
/// ```swift
/// final class Post: Model {
///     @Property var title: String                 // stored under "title"
///     @Property(key: "prio") var priority = 0     // under "prio", 0 when absent
///     @Property var subtitle: String?             // nil when absent
/// }
/// post.title = "Hello"
/// try post.save(in: transaction)
/// ```
///
/// A field that holds nothing (or a value that does not decode as `T`) reads as its declared default,
/// else nil for an optional, else the type's zero (0, "", false, empty collections, a struct of those).
/// A non-optional field of a type without a zero (an enum) needs a declared default. `Data` is stored as a
/// base64 string, at most ``WeftLimits/modelDataBytesMax`` bytes.
@propertyWrapper
public final class Property<T: Codable>: ModelField, QueryableField {
    let declaredKey: String?
    var boundKey: Key?
    let defaultValue: T?
    /// The value assigned and not yet saved.
    var change: T?

    /// A field stored under `key` (default: the property's name), reading as `T`'s zero when absent.
    public init(key: String? = nil) {
        declaredKey = key
        defaultValue = nil
    }

    /// A field stored under `key` (default: the property's name), reading as `wrappedValue` when absent.
    public init(wrappedValue: T, key: String? = nil) {
        declaredKey = key
        defaultValue = wrappedValue
    }

    @available(*, unavailable, message: "a field is read through its model")
    public var wrappedValue: T {
        get { preconditionFailure("unreachable") }
        set { preconditionFailure("unreachable") }
    }

    /// The field itself: `post.$title`, and `\Post.$title` in queries.
    @available(*, unavailable, message: "a field is read through its model")
    public var projectedValue: Property<T> { preconditionFailure("unreachable") }

    public static subscript<M: Model>(
        _enclosingInstance model: M, wrapped wrapped: ReferenceWritableKeyPath<M, T>,
        storage storage: ReferenceWritableKeyPath<M, Property<T>>
    ) -> T {
        get {
            let field = model[keyPath: storage]
            let key = field.bind(model, storage: storage, in: M.self)
            if let change = field.change { return change }
            return FieldRead.value(T.self, key: key, of: model, default: field.defaultValue)
        }
        set { model[keyPath: storage].change = newValue }
    }

    public static subscript<M: Model>(
        _enclosingInstance model: M, projected projected: KeyPath<M, Property<T>>,
        storage storage: ReferenceWritableKeyPath<M, Property<T>>
    ) -> Property<T> {
        let field = model[keyPath: storage]
        _ = field.bind(model, storage: storage, in: M.self)
        return field
    }

    /// The key the field is stored under.
    public var key: String { boundKey?.text ?? declaredKey ?? "" }

    public var fieldDescriptor: FieldDescriptor<T> { FieldDescriptor(keys: boundKey.map { [$0] } ?? []) }

    var hasChanges: Bool { change != nil }

    func declarationProblem() -> String? { FieldRead.problem(T.self, hasDefault: defaultValue != nil) }

    func discardChanges() { change = nil }

    func write(to writer: any ModelWriter, at node: DataNode, inserting: Bool) throws {
        let coding = node.access.state.coding
        if inserting {
            guard let value = try insertedValue(at: node.location, coding: coding) else { return }
            try writer.recordSet(value, at: node)
        } else if let change {
            try writer.recordSet(FieldCoding.encode(change, coding: coding, path: node.location), at: node)
        }
    }

    var insertsOneValue: Bool { true }

    func insertedValue(at path: Path, coding: ValueCoding) throws -> Value? {
        try FieldCoding.inserted(change, default: defaultValue, coding: coding, path: path)
    }
}

/// A stored field written only when its object is inserted (the Realtime ORM's `ReadonlyProperty`):
/// reading it reads the replica like ``Property``; it cannot be assigned, only given an initial value
/// while the object is detached.
///
/// ```swift
/// final class Post: Model {
///     @ReadonlyProperty var createdAt: Date
/// }
/// let post = Post()
/// post.$createdAt.set(Date())          // written by insert(in:)
/// ```
@propertyWrapper
public final class ReadonlyProperty<T: Codable>: ModelField, QueryableField {
    let declaredKey: String?
    var boundKey: Key?
    let defaultValue: T?
    var change: T?

    /// A field stored under `key` (default: the property's name), reading as `T`'s zero when absent.
    public init(key: String? = nil) {
        declaredKey = key
        defaultValue = nil
    }

    /// A field stored under `key` (default: the property's name), reading as `wrappedValue` when absent
    /// and inserted with it unless ``set(_:)`` gave another value.
    public init(wrappedValue: T, key: String? = nil) {
        declaredKey = key
        defaultValue = wrappedValue
    }

    @available(*, unavailable, message: "a field is read through its model")
    public var wrappedValue: T { preconditionFailure("unreachable") }

    /// The field itself: `post.$createdAt`, and `\Post.$createdAt` in queries.
    @available(*, unavailable, message: "a field is read through its model")
    public var projectedValue: ReadonlyProperty<T> { preconditionFailure("unreachable") }

    public static subscript<M: Model>(
        _enclosingInstance model: M, wrapped wrapped: KeyPath<M, T>,
        storage storage: ReferenceWritableKeyPath<M, ReadonlyProperty<T>>
    ) -> T {
        let field = model[keyPath: storage]
        let key = field.bind(model, storage: storage, in: M.self)
        if model.node == nil, let change = field.change { return change }
        return FieldRead.value(T.self, key: key, of: model, default: field.change ?? field.defaultValue)
    }

    public static subscript<M: Model>(
        _enclosingInstance model: M, projected projected: KeyPath<M, ReadonlyProperty<T>>,
        storage storage: ReferenceWritableKeyPath<M, ReadonlyProperty<T>>
    ) -> ReadonlyProperty<T> {
        let field = model[keyPath: storage]
        _ = field.bind(model, storage: storage, in: M.self)
        return field
    }

    /// Gives the field the value its object is inserted with. On an object already stored, ``Model/save(in:)``
    /// then throws `invalidValue`: the field is read-only.
    public func set(_ value: T) { change = value }

    /// The key the field is stored under.
    public var key: String { boundKey?.text ?? declaredKey ?? "" }

    public var fieldDescriptor: FieldDescriptor<T> { FieldDescriptor(keys: boundKey.map { [$0] } ?? []) }

    var hasChanges: Bool { change != nil }

    func declarationProblem() -> String? { FieldRead.problem(T.self, hasDefault: defaultValue != nil) }

    func discardChanges() { change = nil }

    func write(to writer: any ModelWriter, at node: DataNode, inserting: Bool) throws {
        guard inserting else {
            guard change == nil else {
                throw WeftError(
                    .invalidValue, "\(key) is read-only: it is written only when its object is inserted",
                    path: node.path)
            }
            return
        }
        guard let value = try insertedValue(at: node.location, coding: node.access.state.coding) else { return }
        try writer.recordSet(value, at: node)
    }

    var insertsOneValue: Bool { true }

    func insertedValue(at path: Path, coding: ValueCoding) throws -> Value? {
        try FieldCoding.inserted(change, default: defaultValue, coding: coding, path: path)
    }
}

/// How a field reads: the object's stored value decoded, else the declared default, else the zero.
enum FieldRead {
    static func value<T: Decodable, M: Model>(_ type: T.Type, key: Key, of model: M, default fallback: T?) -> T {
        if let stored = model.storedValue(key: key), !stored.isNull,
            let value = try? FieldCoding.decode(T.self, from: stored, coding: model.coding, path: key.text)
        {
            return value
        }
        if let fallback { return fallback }
        guard let zero = zero(T.self) else {
            // Unreachable: the schema refused the declaration (see `FieldRead.problem`) on first use.
            preconditionFailure(
                "\(M.self).\(key.text): a field of type \(T.self) has no zero value; declare a default "
                    + "(`@Property var \(key.text): \(T.self) = …`) or make it optional")
        }
        return zero
    }

    /// The declaration problem of a field of type `T` with a default or not: a non-optional type without a
    /// zero needs a default.
    static func problem<T: Decodable>(_ type: T.Type, hasDefault: Bool) -> String? {
        guard !hasDefault, zero(type) == nil else { return nil }
        return "a field of type \(T.self) has no zero value: declare a default (`= …`) or make it optional"
    }

    /// The zero of `T`.
    static func zero<T: Decodable>(_ type: T.Type) -> T? {
        FieldCoding.zero(type)
    }
}
