import Dispatch
import Foundation
import WeftCore

/// A type whose objects can be observed through typed key paths; every ``Model`` is one.
public protocol KeyPathObservable: AnyObject {}

extension Model: KeyPathObservable {}

/// What a typed key-path observation reports (Realm's `ObjectChange`).
public enum ModelChange: Sendable, Hashable {
    /// Observed fields changed: each named by its child path (`title`, `address/city`, and
    /// `author/name` for a field of a linked object), with its value at the last notification and now.
    case change([PropertyChange])
    /// The object was deleted; no call follows.
    case deleted
}

/// Which stored node an observed key path names, below the object or below the object it links to.
enum ObservedKeys {
    case own([Key])
    case through(reference: [Key], target: [Key])
}

/// A field a key path can name in an observation.
protocol ObservableField {
    var observedKeys: ObservedKeys { get }
}

extension Property: ObservableField {
    var observedKeys: ObservedKeys { .own(fieldDescriptor.keys) }
}
extension ReadonlyProperty: ObservableField {
    var observedKeys: ObservedKeys { .own(fieldDescriptor.keys) }
}
extension SharedProperty: ObservableField {
    var observedKeys: ObservedKeys { .own(fieldDescriptor.keys) }
}
extension Reference: ObservableField {
    var observedKeys: ObservedKeys { .own(fieldDescriptor.keys) }
}
extension NestedField: ObservableField {
    var observedKeys: ObservedKeys { .own(fieldDescriptor.keys) }
}
extension Values: ObservableField {
    var observedKeys: ObservedKeys { .own(boundKey.map { [$0] } ?? []) }
}
extension Nested: ObservableField {
    var observedKeys: ObservedKeys { .own(boundKey.map { [$0] } ?? []) }
}
extension ReferencedField: ObservableField {
    var observedKeys: ObservedKeys { .through(reference: referenceKeys, target: targetKeys) }
}

extension KeyPathObservable where Self: Model {
    /// Calls `block` each time one of the observed fields changes, or the object is deleted (Realm's
    /// `observe(keyPaths:)` with typed key paths), on top of ``DataNode/observe(keyPaths:on:_:)``.
    ///
    /// A key path names a field (`\.$title`), a field of a nested object (`\.$address.$city`), or a field
    /// of the object a ``Reference`` links to (`\.$author.$name`): the observation follows the link one
    /// level, and when the link changes it reports the followed fields' values on the old and the new
    /// target, then follows the new one. There is no initial call; bursts are coalesced.
    ///
    /// ```swift
    /// let token = try post.observe(\.$title, \.$author.$name) { change in
    ///     if case .change(let properties) = change { print(properties.map(\.name)) }  // ["author/name"]
    /// }
    /// ```
    /// - Parameters:
    ///   - keyPaths: the fields to observe; none: every field of the object (not through links).
    ///   - queue: where `block` runs, serially; nil for the replica's `callbackQueue`.
    /// - Returns: the token that keeps the observation alive.
    /// - Throws: `WeftError` with code `invalidValue` for a detached object or a key path that names no
    ///   field, or as ``DataNode/observe(keyPaths:on:_:)``.
    public func observe(
        _ keyPaths: PartialKeyPath<Self>..., on queue: DispatchQueue? = nil,
        _ block: @escaping @Sendable (ModelChange) -> Void
    ) throws -> ObservationToken {
        guard let node else {
            throw WeftError(.invalidValue, "this \(Self.self) is not stored: insert it before observing it")
        }
        let schema = ModelSchema.of(Self.self)
        var own: [[Key]] = []
        var followed: [[Key]: [[Key]]] = [:]
        for keyPath in keyPaths {
            guard let prototype = schema.prototype as? Self, let field = prototype[keyPath: keyPath] as? any ObservableField
            else {
                throw WeftError(.invalidValue, "\(keyPath) names no field of \(Self.self)", path: node.path)
            }
            switch field.observedKeys {
            case .own(let keys): own.append(keys)
            case .through(let reference, let target): followed[reference, default: []].append(target)
            }
        }
        let observation = ModelObservation(
            node: node, own: own, followed: followed, queue: queue ?? node.access.state.callbackQueue, block: block)
        try observation.start()
        return ObservationToken { observation.stop() }
    }
}

/// One typed observation: the object's own fields through a node observation, and for each followed
/// link an observation of the target's fields, re-pointed when the link changes.
final class ModelObservation: @unchecked Sendable {
    // Sendable: `followers` and `stopped` are guarded by `lock`; callbacks run on `queue`, serially.
    private let lock = NSLock()
    private let node: DataNode
    private let own: [[Key]]
    private let followed: [[Key]: [[Key]]]
    private let queue: DispatchQueue
    private let block: @Sendable (ModelChange) -> Void
    private var outer: ObservationToken?
    private var followers: [[Key]: (target: DataNode?, token: ObservationToken?)] = [:]
    private var stopped = false

    init(
        node: DataNode, own: [[Key]], followed: [[Key]: [[Key]]], queue: DispatchQueue,
        block: @escaping @Sendable (ModelChange) -> Void
    ) {
        self.node = node
        self.own = own
        self.followed = followed
        self.queue = queue
        self.block = block
    }

    static func name(_ keys: [Key]) -> String { keys.map(\.text).joined(separator: "/") }

    func start() throws {
        let ownNames = Set(own.map(Self.name))
        let referenceNames = Dictionary(uniqueKeysWithValues: followed.keys.map { (Self.name($0), $0) })
        let names = own.isEmpty && followed.isEmpty ? [] : Array(ownNames.union(referenceNames.keys))
        let token = try node.observe(keyPaths: names, on: queue) { [weak self] change in
            guard let self else { return }
            switch change {
            case .deleted:
                self.stop()
                self.block(.deleted)
            case .change(_, let properties):
                var reported = properties.filter { ownNames.contains($0.name) || (self.own.isEmpty && self.followed.isEmpty) }
                for property in properties {
                    guard let reference = referenceNames[property.name] else { continue }
                    reported += self.repoint(reference, to: property.newValue)
                }
                if !reported.isEmpty { self.block(.change(reported)) }
            }
        }
        lock.withLock { outer = token }
        for reference in followed.keys {
            _ = repoint(reference, to: node.access.backend.value(at: node.location).value(at: reference[...]))
        }
    }

    /// Follows the link at `reference` to the target whose path `link` holds; returns the followed fields
    /// whose values differ between the previous target and the new one.
    private func repoint(_ reference: [Key], to link: Value) -> [PropertyChange] {
        let target: DataNode? = if case .string(let path) = link { node.access.node(for: path) } else { nil }
        let paths = followed[reference] ?? []
        let referenceName = Self.name(reference)
        let token = target.flatMap { target in
            try? target.observe(keyPaths: paths.map(Self.name), on: queue) { [weak self] change in
                guard let self, case .change(_, let properties) = change else { return }
                let renamed = properties.map {
                    PropertyChange(name: referenceName + "/" + $0.name, oldValue: $0.oldValue, newValue: $0.newValue)
                }
                if !renamed.isEmpty { self.block(.change(renamed)) }
            }
        }
        let previous: (target: DataNode?, token: ObservationToken?)? = lock.withLock {
            guard !stopped else { return nil }
            defer { followers[reference] = (target, token) }
            return followers[reference] ?? (nil, nil)
        }
        guard let previous else {
            token?.invalidate()
            return []
        }
        previous.token?.invalidate()
        return paths.compactMap { path in
            let old = previous.target.map { node.access.backend.value(at: $0.location).value(at: path[...]) } ?? .null
            let new = target.map { node.access.backend.value(at: $0.location).value(at: path[...]) } ?? .null
            return old == new ? nil : PropertyChange(name: referenceName + "/" + Self.name(path), oldValue: old, newValue: new)
        }
    }

    func stop() {
        let tokens: [ObservationToken] = lock.withLock {
            stopped = true
            defer {
                outer = nil
                followers = [:]
            }
            return [outer].compactMap { $0 } + followers.values.compactMap(\.token)
        }
        for token in tokens { token.invalidate() }
    }
}
