import Dispatch
import Foundation
import WeftCore

/// What an observation reports (Realm's `ObjectChange`).
///
/// ```swift
/// let token = try alice.observe(keyPaths: ["name"]) { change in
///     if case .change(_, let properties) = change { print(properties.map(\.name)) }
/// }
/// ```
public enum NodeChange: Sendable, Hashable {
    /// Observed key paths changed: each with its value at the last notification and now.
    case change(DataNode, [PropertyChange])
    /// The node was deleted (it held a value at the last notification, and now holds none).
    case deleted
}

/// One observed key path that changed.
public struct PropertyChange: Sendable, Hashable {
    /// The key path as given to `observe(keyPaths:on:_:)`; for an observation of the whole node, the key
    /// of the child that changed, or `"."` when the node holds (or held) a scalar.
    public let name: String
    /// The value at the last notification (null when absent).
    public let oldValue: Value
    /// The value now (null when absent).
    public let newValue: Value
}

extension DataNode {
    /// Calls `block` each time one of the observed key paths below the node changes, or the node is
    /// deleted (Realm's `observe(keyPaths:on:_:)`).
    ///
    /// Key paths are relative paths below the node (`"name"`, `"address/city"`); a change anywhere else
    /// does not call the block. With no key path, any change below the node does, and the block gets one
    /// ``PropertyChange`` per changed child. Changes that arrive before the block runs are coalesced into
    /// one notification, against the values of the previous one; a value that changed and changed back
    /// reports nothing. There is no initial call.
    ///
    /// ```swift
    /// let token = try alice.observe(keyPaths: ["name", "address/city"], on: .main) { change in
    ///     switch change {
    ///     case .change(_, let properties): for p in properties { print(p.name, p.oldValue, "→", p.newValue) }
    ///     case .deleted: print("alice is gone")
    ///     }
    /// }
    /// …
    /// token.invalidate()
    /// ```
    /// - Parameters:
    ///   - keyPaths: relative paths below the node; empty for the whole node.
    ///   - queue: where `block` runs, serially; nil for the replica's `callbackQueue`.
    ///   - block: called with what changed.
    /// - Returns: the token that keeps the observation alive; `invalidate()` stops it.
    /// - Throws: `WeftError` with code `invalidPath` when a key path is ill-formed or leaves the node, or
    ///   when more than ``WeftLimits/observedKeyPathsMax`` are given.
    public func observe(
        keyPaths: [String] = [], on queue: DispatchQueue? = nil, _ block: @escaping @Sendable (NodeChange) -> Void
    ) throws -> ObservationToken {
        guard keyPaths.count <= WeftLimits.observedKeyPathsMax else {
            throw WeftError(
                .invalidPath, "observe at most \(WeftLimits.observedKeyPathsMax) key paths; got \(keyPaths.count)",
                path: path)
        }
        let resolved = try keyPaths.map { name -> ObservedKeyPath in
            guard let target = try? location.resolving(name), let keys = location.relativeKeys(of: target) else {
                throw WeftError(
                    .invalidPath, "key path \"\(name.prefix(200))\" is not a path below \(path)", path: path)
            }
            return ObservedKeyPath(name: name, keys: Array(keys))
        }
        let observer = KeyPathObserver(
            node: self, keyPaths: resolved, queue: queue ?? access.state.callbackQueue, block: block)
        observer.start()
        return ObservationToken { observer.invalidate() }
    }
}

/// A key path resolved below the observed node.
struct ObservedKeyPath: Sendable {
    let name: String
    let keys: [Key]
}

/// Follows one node and notifies changes of its key paths on a queue, coalescing bursts.
final class KeyPathObserver: Finishable, @unchecked Sendable {
    // Sendable: mutable fields are guarded by `lock`; deliveries run on `queue`, serially.
    private let lock = NSLock()
    private let node: DataNode
    private let keyPaths: [ObservedKeyPath]
    private let queue: DispatchQueue
    private let block: @Sendable (NodeChange) -> Void
    private var watcher: NodeWatcher?
    /// The node's value at the last notification, and now.
    private var notified = Value.null
    private var latest = Value.null
    private var scheduled = false
    private var invalidated = false

    init(
        node: DataNode, keyPaths: [ObservedKeyPath], queue: DispatchQueue,
        block: @escaping @Sendable (NodeChange) -> Void
    ) {
        self.node = node
        self.keyPaths = keyPaths
        self.queue = queue
        self.block = block
    }

    func start() {
        guard !node.access.backend.isShutDown, node.access.state.add(self) else { return }
        let watcher = NodeWatcher(node: node) { [weak self] old, new, _, _ in self?.noteChange(old: old, new: new) }
        lock.withLock { self.watcher = watcher }
        watcher.start { baseline in
            lock.withLock {
                notified = baseline
                latest = baseline
            }
        }
    }

    func invalidate() {
        lock.withLock { invalidated = true }
        stopWatching()
    }

    /// The replica shut down: no change comes after it, and a notification already scheduled is still
    /// delivered, as a subscription delivers the events it buffered.
    func finish() { stopWatching() }

    private func stopWatching() {
        let watcher = lock.withLock {
            defer { self.watcher = nil }
            return self.watcher
        }
        watcher?.stop()
        node.access.state.remove(self)
    }

    deinit {
        watcher?.stop()
        node.access.state.remove(self)
    }

    private func noteChange(old: Value, new: Value) {
        guard isRelevant(old: old, new: new) else { return }
        let schedule = lock.withLock {
            latest = new
            defer { scheduled = true }
            return !scheduled && !invalidated
        }
        if schedule { queue.async { self.deliver() } }
    }

    private func isRelevant(old: Value, new: Value) -> Bool {
        guard !keyPaths.isEmpty else { return old != new }
        return old.isNull != new.isNull
            || keyPaths.contains { old.value(at: $0.keys[...]) != new.value(at: $0.keys[...]) }
    }

    private func deliver() {
        let pair: (before: Value, after: Value)? = lock.withLock {
            scheduled = false
            guard !invalidated else { return nil }
            defer { notified = latest }
            return (notified, latest)
        }
        guard let (before, after) = pair else { return }
        if !before.isNull, after.isNull {
            block(.deleted)
            return
        }
        let changes = propertyChanges(from: before, to: after)
        if !changes.isEmpty { block(.change(node, changes)) }
    }

    private func propertyChanges(from before: Value, to after: Value) -> [PropertyChange] {
        if keyPaths.isEmpty {
            // A scalar has no children to name: the node's own value is reported under ".".
            guard before.isObject || before.isNull, after.isObject || after.isNull else {
                return before == after ? [] : [PropertyChange(name: ".", oldValue: before, newValue: after)]
            }
            let keys = Set(before.children.keys).union(after.children.keys).sorted {
                KeyOrder.precedes($0.text, $1.text)
            }
            return keys.compactMap { key in
                let old = before[key]
                let new = after[key]
                return old == new ? nil : PropertyChange(name: key.text, oldValue: old, newValue: new)
            }
        }
        return keyPaths.compactMap { keyPath in
            let old = before.value(at: keyPath.keys[...])
            let new = after.value(at: keyPath.keys[...])
            return old == new ? nil : PropertyChange(name: keyPath.name, oldValue: old, newValue: new)
        }
    }
}
