import Foundation
import WeftCore

/// A stored field that several replicas update at once without losing an update (the Realtime ORM's
/// `SharedProperty`, for values such as a number of likes).
///
/// - A **number** (any integer or floating-point `T`) is saved as an increment: assigning `likes = 7`
///   when the field reads 5 records `increment(by: 2)`, and reading it afterwards gives the stored
///   value plus the increment not yet saved. Increments made concurrently on two replicas add up.
/// - **Any other** value is saved with the transaction rule: ``Model/save(in:)`` records a read of the
///   field and the commit is refused if the field changed since the value it was assigned over was read
///   (`WeftError` `rejected`, or `transactionAborted` when the change is seen before commit). A
///   `performChanges` batch cannot read, so it refuses such a save.
///
/// ```swift
/// final class Post: Model {
///     @SharedProperty var likes: Int
/// }
/// post.likes += 1                       // an increment of 1
/// try post.$likes.increment(by: 5, in: transaction)
/// ```
@propertyWrapper
public final class SharedProperty<T: Codable>: ModelField, QueryableField {
    let declaredKey: String?
    var boundKey: Key?
    let defaultValue: T?
    /// The increment not yet saved (numbers).
    var delta: Number?
    /// The value assigned and not yet saved, and the stored value it replaced (other types).
    var change: (value: T, base: Value)?
    /// The node of the object the field was last read through.
    var objectNode: DataNode?

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

    /// The field itself: `post.$likes`, and `\Post.$likes` in queries.
    @available(*, unavailable, message: "a field is read through its model")
    public var projectedValue: SharedProperty<T> { preconditionFailure("unreachable") }

    public static subscript<M: Model>(
        _enclosingInstance model: M, wrapped wrapped: ReferenceWritableKeyPath<M, T>,
        storage storage: ReferenceWritableKeyPath<M, SharedProperty<T>>
    ) -> T {
        get {
            let field = model[keyPath: storage]
            let key = field.bind(model, storage: storage, in: M.self)
            if let change = field.change { return change.value }
            let value = FieldRead.value(T.self, key: key, of: model, default: field.defaultValue)
            guard let delta = field.delta else { return value }
            let coding = model.coding
            let path = model.node?.location ?? .root
            guard let stored = try? FieldCoding.encode(value, coding: coding, path: path), let number = Number(stored),
                let sum = try? FieldCoding.decode(T.self, from: number.adding(delta).value, coding: coding, path: key.text)
            else { return value }
            return sum
        }
        set {
            let field = model[keyPath: storage]
            let key = field.bind(model, storage: storage, in: M.self)
            let coding = model.coding
            let path = model.node?.location ?? .root
            let stored = model.storedValue(key: key) ?? .null
            if model.node != nil, let new = try? FieldCoding.encode(newValue, coding: coding, path: path),
                let target = Number(new), stored.isNull || Number(stored) != nil
            {
                // A number: the difference with what is stored now, saved as an increment.
                field.delta = target.subtracting(Number(stored) ?? .int(0))
                field.change = nil
            } else {
                field.change = (newValue, stored)
                field.delta = nil
            }
        }
    }

    public static subscript<M: Model>(
        _enclosingInstance model: M, projected projected: KeyPath<M, SharedProperty<T>>,
        storage storage: ReferenceWritableKeyPath<M, SharedProperty<T>>
    ) -> SharedProperty<T> {
        let field = model[keyPath: storage]
        let key = field.bind(model, storage: storage, in: M.self)
        field.objectNode = model.node?.child(key: key)
        return field
    }

    /// Records an increment of the field (a number) in `batch`: increments made concurrently on several
    /// replicas add up.
    ///
    /// ```swift
    /// try await replica.performChanges { batch in try post.$likes.increment(by: 1, in: batch) }
    /// ```
    /// - Throws: `WeftError` with code `invalidValue` when the object is not stored or the step is not finite.
    public func increment(by step: Number = 1, in batch: WriteBatch) throws { try increment(by: step, writer: batch) }

    func increment(by step: Number, writer: any ModelWriter) throws {
        guard let objectNode else {
            throw WeftError(.invalidValue, "\(key) belongs to an object that is not stored: insert it first")
        }
        try writer.recordIncrement(by: step, at: objectNode)
    }

    /// The key the field is stored under.
    public var key: String { boundKey?.text ?? declaredKey ?? "" }

    public var fieldDescriptor: FieldDescriptor<T> { FieldDescriptor(keys: boundKey.map { [$0] } ?? []) }

    var hasChanges: Bool { delta != nil || change != nil }

    func discardChanges() {
        delta = nil
        change = nil
    }

    func declarationProblem() -> String? { FieldRead.problem(T.self, hasDefault: defaultValue != nil) }

    func write(to writer: any ModelWriter, at node: DataNode, inserting: Bool) throws {
        let coding = node.access.state.coding
        if let delta {
            try writer.recordIncrement(by: delta, at: node)
            return
        }
        if let change {
            if !inserting {
                guard let current = try writer.recordRead(node) else {
                    throw WeftError(
                        .invalidValue,
                        "\(key) is shared and not a number: save it in a transaction, which can read it",
                        path: node.path)
                }
                guard current == change.base else {
                    throw WeftError(
                        .transactionAborted, "\(key) changed since it was assigned: read it again", path: node.path)
                }
            }
            try writer.recordSet(FieldCoding.encode(change.value, coding: coding, path: node.location), at: node)
            return
        }
        if inserting, let value = try insertedValue(at: node.location, coding: coding) {
            try writer.recordSet(value, at: node)
        }
    }

    // An increment not yet saved is written as one, after the object.
    var insertsOneValue: Bool { delta == nil }

    func insertedValue(at path: Path, coding: ValueCoding) throws -> Value? {
        try FieldCoding.inserted(change?.value, default: defaultValue, coding: coding, path: path)
    }
}

extension Number {
    /// The sum, as an integer while it fits.
    func adding(_ other: Number) -> Number {
        if case .int(let left) = self, case .int(let right) = other {
            let (sum, overflow) = left.addingReportingOverflow(right)
            if !overflow { return .int(sum) }
        }
        return .double(doubleValue + other.doubleValue)
    }

    /// The difference, as an integer while it fits.
    func subtracting(_ other: Number) -> Number {
        if case .int(let left) = self, case .int(let right) = other {
            let (difference, overflow) = left.subtractingReportingOverflow(right)
            if !overflow { return .int(difference) }
        }
        return .double(doubleValue - other.doubleValue)
    }
}
