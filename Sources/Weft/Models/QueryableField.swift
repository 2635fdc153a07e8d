import Foundation
import WeftCore

/// Something a key path can name in a typed query or an observation: a field of a model (`\Post.$title`),
/// or a field of a nested model (`\Post.$address.$city`).
///
/// ```swift
/// let top = try replica.fetch(for: Post.self).where(\.$priority > 100, orderBy: [\.$title.ascending])
/// ```
public protocol QueryableField {
    /// The type of the field's value, which comparands must have.
    associatedtype FieldValue
    /// Where the field is stored and how a comparand is stored.
    var fieldDescriptor: FieldDescriptor<FieldValue> { get }
}

/// Where a field is stored below its object's node, and how a value of it is stored (so that a
/// comparand compares with what is stored).
public struct FieldDescriptor<FieldValue> {
    /// The keys from the object's node down to the field's node.
    let keys: [Key]
    /// Stores a value of the field as the tree holds it.
    let encode: (FieldValue, ValueCoding, Path) throws -> Value

    /// The child path of the field below its object (`address/city`).
    public var path: String { keys.map(\.text).joined(separator: "/") }

    /// The same field reached through the nested object under `key`.
    func nested(under key: Key) -> FieldDescriptor<FieldValue> {
        FieldDescriptor(keys: [key] + keys, encode: encode)
    }
}

extension FieldDescriptor where FieldValue: Encodable {
    /// A field of an `Encodable` type stored at `keys`.
    init(keys: [Key]) {
        self.init(keys: keys) { value, coding, path in try FieldCoding.encode(value, coding: coding, path: path) }
    }
}

/// One ordering of a typed query: a field and a direction (`\.$title.ascending`).
public struct FieldOrder: Sendable, Hashable {
    /// The keys from the object's node down to the field.
    let keys: [Key]
    /// True for ascending.
    public let isAscending: Bool

    /// The child path of the field (`meta/score`).
    public var path: String { keys.map(\.text).joined(separator: "/") }
}

extension QueryableField {
    /// Orders by this field, smallest first (Firebase's order of mixed types; ties by key).
    ///
    /// ```swift
    /// try replica.fetch(for: Post.self).all(orderBy: [\.$title.ascending])
    /// ```
    public var ascending: FieldOrder { FieldOrder(keys: fieldDescriptor.keys, isAscending: true) }

    /// Orders by this field, largest first (ties by key, descending).
    ///
    /// ```swift
    /// try replica.fetch(for: Post.self).all(limit: 10, orderBy: [\.$priority.descending])
    /// ```
    public var descending: FieldOrder { FieldOrder(keys: fieldDescriptor.keys, isAscending: false) }
}
