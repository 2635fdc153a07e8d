import Foundation
import WeftCore

/// An ordered collection of values kept in its object, each element a child under a key that sorts
/// where the element belongs (the Realtime ORM's `Values`).
///
/// Keys are push ids (appends) or keys made between two neighbours (inserts and moves; see
/// ``ValuesKeys``), so elements added on several replicas at once all stay, in key order. Reading the
/// field gives the elements in key order; assigning it replaces the collection when saved.
///
/// ```swift
/// final class Post: Model {
///     @Values var tags: [String]
/// }
/// try post.$tags.append("swift", in: transaction)
/// try post.$tags.insert("sync", at: 0, in: transaction)
/// try post.$tags.move(from: 1, to: 0, in: transaction)
/// try post.$tags.remove(at: 1, in: transaction)
/// ```
///
/// Two replicas that move the same element at once keep it twice (each move is a new key and a
/// removal of the old one); a removal and a move at once keep the moved copy.
@propertyWrapper
public final class Values<T: Codable>: ModelField {
    let declaredKey: String?
    var boundKey: Key?
    /// The collection assigned and not yet saved.
    var replacement: [T]?
    /// The node of the field in the object it was last reached through (its projection).
    var fieldNode: DataNode?
    /// The source of that object, to read the elements.
    var objectSource: ModelSource = .detached

    /// A collection stored under `key` (default: the property's name).
    public init(key: String? = nil) { declaredKey = key }

    /// A collection stored under `key`, inserted with `wrappedValue` unless assigned another.
    public init(wrappedValue: [T], key: String? = nil) {
        declaredKey = key
        replacement = wrappedValue.isEmpty ? nil : wrappedValue
    }

    @available(*, unavailable, message: "a field is read through its model")
    public var wrappedValue: [T] {
        get { preconditionFailure("unreachable") }
        set { preconditionFailure("unreachable") }
    }

    /// The collection itself, for its operations: `post.$tags.append(…)`.
    @available(*, unavailable, message: "a field is read through its model")
    public var projectedValue: Values<T> { preconditionFailure("unreachable") }

    public static subscript<M: Model>(
        _enclosingInstance model: M, wrapped wrapped: ReferenceWritableKeyPath<M, [T]>,
        storage storage: ReferenceWritableKeyPath<M, Values<T>>
    ) -> [T] {
        get {
            let field = model[keyPath: storage]
            let key = field.bind(model, storage: storage, in: M.self)
            if let replacement = field.replacement { return replacement }
            guard let stored = model.storedValue(key: key) else { return [] }
            return field.decodedElements(of: stored, coding: model.coding).map(\.value)
        }
        set { model[keyPath: storage].replacement = newValue }
    }

    public static subscript<M: Model>(
        _enclosingInstance model: M, projected projected: KeyPath<M, Values<T>>,
        storage storage: ReferenceWritableKeyPath<M, Values<T>>
    ) -> Values<T> {
        let field = model[keyPath: storage]
        let key = field.bind(model, storage: storage, in: M.self)
        field.objectSource = model.source
        field.fieldNode = model.node?.child(key: key)
        return field
    }

    /// The key the collection is stored under.
    public var key: String { boundKey?.text ?? declaredKey ?? "" }

    /// The elements' keys, in order (empty while the object is detached).
    public var elementKeys: [String] { storedElements().map(\.key) }

    // MARK: - Operations

    /// The stored elements in order: key and value (undecodable ones skipped).
    func storedElements() -> [(key: String, value: Value)] {
        guard let boundKey else { return [] }
        let stored: Value
        switch objectSource {
        case .detached: return []
        case .live(let node): stored = node.access.backend.value(at: node.location)[boundKey]
        case .frozen(_, let value): stored = value[boundKey]
        }
        return stored.children.map { ($0.key.text, $0.value) }.sorted { KeyOrder.precedes($0.key, $1.key) }
    }

    func decodedElements(of stored: Value, coding: ValueCoding) -> [(key: String, value: T)] {
        stored.children.sorted { KeyOrder.precedes($0.key.text, $1.key.text) }.compactMap { child in
            (try? FieldCoding.decode(T.self, from: child.value, coding: coding, path: child.key.text))
                .map { (child.key.text, $0) }
        }
    }

    /// The stored field node, or a clear error for a detached object.
    func storedNode() throws -> DataNode {
        guard let fieldNode, case .live = objectSource else {
            throw WeftError(
                .invalidValue, "\(key) belongs to an object that is not stored (or frozen): insert it first")
        }
        return fieldNode
    }

    /// Appends `element` after the last element, in `batch`.
    ///
    /// ```swift
    /// try await replica.performChanges { batch in try post.$tags.append("swift", in: batch) }
    /// ```
    /// - Throws: `WeftError` with code `invalidValue` for an object not stored, or as the batch's writes.
    public func append(_ element: T, in batch: WriteBatch) throws { try append(element, writer: batch) }

    /// Inserts `element` at `index` (0 through the count), in `batch`.
    ///
    /// - Throws: `WeftError` with code `invalidValue` for an index out of range or an object not stored,
    ///   `valueTooLarge` when the gap's keys reached ``WeftLimits/valuesKeyBytesMax``.
    public func insert(_ element: T, at index: Int, in batch: WriteBatch) throws {
        try insert(element, at: index, writer: batch)
    }

    /// Removes the element at `index`, in `batch`.
    ///
    /// - Throws: `WeftError` with code `invalidValue` for an index out of range or an object not stored.
    public func remove(at index: Int, in batch: WriteBatch) throws { try remove(at: index, writer: batch) }

    /// Moves the element at `source` so that it ends at `destination`, in `batch`.
    ///
    /// - Throws: `WeftError` with code `invalidValue` for an index out of range or an object not stored.
    public func move(from source: Int, to destination: Int, in batch: WriteBatch) throws {
        try move(from: source, to: destination, writer: batch)
    }

    /// Appends `element` after the last one.
    func append(_ element: T, writer: any ModelWriter) throws {
        let node = try storedNode()
        let keys = storedElements().map(\.key)
        let fresh = try writer.reservePushKey(under: node)
        var key = fresh
        if let last = keys.last, !KeyOrder.precedes(last, fresh) {
            // Another replica's clock ran ahead: make a key after its last element.
            guard ValuesKeys.isFractional(last),
                let after = ValuesKeys.key(between: last, and: nil, suffix: fresh)
            else { return try rekey(inserting: element, at: keys.count, node: node, writer: writer) }
            key = after
        }
        try writer.recordSet(encode(element, node: node), at: try node.childNode(validating: key))
    }

    /// Inserts `element` at `index` (0 through the count).
    func insert(_ element: T, at index: Int, writer: any ModelWriter) throws {
        let node = try storedNode()
        let keys = storedElements().map(\.key)
        try check(index, in: 0..<(keys.count + 1), node: node)
        guard let key = try key(before: index, in: keys, node: node, writer: writer) else {
            return try rekey(inserting: element, at: index, node: node, writer: writer)
        }
        try writer.recordSet(encode(element, node: node), at: try node.childNode(validating: key))
    }

    /// Removes the element at `index`.
    func remove(at index: Int, writer: any ModelWriter) throws {
        let node = try storedNode()
        let keys = storedElements().map(\.key)
        try check(index, in: 0..<keys.count, node: node)
        try writer.recordSet(.null, at: try node.childNode(validating: keys[index]))
    }

    /// Moves the element at `source` so that it ends at `destination` (both indexes of the collection).
    func move(from source: Int, to destination: Int, writer: any ModelWriter) throws {
        let node = try storedNode()
        let elements = storedElements()
        try check(source, in: 0..<elements.count, node: node)
        try check(destination, in: 0..<elements.count, node: node)
        guard source != destination else { return }
        var rest = elements
        let moved = rest.remove(at: source)
        guard let key = try key(before: destination, in: rest.map(\.key), node: node, writer: writer) else {
            var values = rest.map(\.value)
            values.insert(moved.value, at: destination)
            return try writer.recordSet(rekeyed(values, node: node, writer: writer), at: node)
        }
        try writer.recordSet(.null, at: try node.childNode(validating: moved.key))
        try writer.recordSet(moved.value, at: try node.childNode(validating: key))
    }

    /// A key between `keys[index - 1]` and `keys[index]`; nil when the keys are not fractional (written by
    /// another means, such as a JSON array) or none fits: the collection is then re-keyed.
    private func key(before index: Int, in keys: [String], node: DataNode, writer: any ModelWriter) throws -> String? {
        let lower = index > 0 ? keys[index - 1] : nil
        let upper = index < keys.count ? keys[index] : nil
        guard lower.map(ValuesKeys.isFractional) ?? true, upper.map(ValuesKeys.isFractional) ?? true else { return nil }
        let suffix = try writer.reservePushKey(under: node)
        guard let key = ValuesKeys.key(between: lower, and: upper, suffix: suffix) else { return nil }
        guard key.utf8.count <= WeftLimits.valuesKeyBytesMax else {
            throw WeftError(
                .valueTooLarge,
                "\(self.key): \(WeftLimits.valuesKeyBytesMax) bytes of key reached by inserting into one gap; "
                    + "re-key the collection by assigning it",
                path: node.path)
        }
        return key
    }

    private func rekey(inserting element: T, at index: Int, node: DataNode, writer: any ModelWriter) throws {
        var values = storedElements().map(\.value)
        values.insert(try encode(element, node: node), at: index)
        try writer.recordSet(rekeyed(values, node: node, writer: writer), at: node)
    }

    /// The collection as one object under fresh ordered keys.
    private func rekeyed(_ values: [Value], node: DataNode, writer: any ModelWriter) throws -> Value {
        let keys = ValuesKeys.sequence(base: try writer.reservePushKey(under: node), count: values.count)
        var children: [Key: Value] = [:]
        for (key, value) in zip(keys, values) { children[Key(unchecked: key)] = value }
        return .object(normalizing: children)
    }

    private func encode(_ element: T, node: DataNode) throws -> Value {
        try FieldCoding.encode(element, coding: node.access.state.coding, path: node.location)
    }

    private func check(_ index: Int, in range: Range<Int>, node: DataNode) throws {
        guard range.contains(index) else {
            throw WeftError(.invalidValue, "\(key): index \(index) is outside 0..<\(range.upperBound)", path: node.path)
        }
    }

    // MARK: - ModelField

    var hasChanges: Bool { replacement != nil }

    func discardChanges() { replacement = nil }

    func write(to writer: any ModelWriter, at node: DataNode, inserting: Bool) throws {
        guard let replacement else { return }
        let coding = node.access.state.coding
        let values = try replacement.map { try FieldCoding.encode($0, coding: coding, path: node.location) }
        try writer.recordSet(rekeyed(values, node: node, writer: writer), at: node)
    }
}
