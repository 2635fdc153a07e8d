import Dispatch
import Foundation
import WeftCore

/// One replica as the public API sees it: the engine behind the `ReplicaBackend` seam, and the API state
/// (coders, callback queue, transactions in flight, live feeds). `Replica` forwards its public entry
/// points here; tests drive the same code through an in-memory backend.
struct ReplicaAccess: Sendable {
    let backend: any ReplicaBackend
    let state: APIState

    /// The root node.
    var root: DataNode { DataNode(access: self, location: .root) }

    /// The node at `path` (seed grammar, resolved from the root), nil when the path is ill-formed.
    func node(for path: String) -> DataNode? { root.relativeNode(for: path) }

    /// True when both refer to the same replica.
    func isSame(as other: ReplicaAccess) -> Bool { state === other.state }

    /// Fails when `node` belongs to another replica (a batch, a snapshot or a copy given a foreign node).
    func checkOwns(_ node: DataNode) throws {
        guard isSame(as: node.access) else {
            throw WeftError(.invalidPath, "the node \(node.path) belongs to another replica", path: node.path)
        }
    }

    // MARK: - Writes

    /// Fails with `shutDown` once shutdown has begun.
    func checkOpen() throws {
        if backend.isShutDown { throw WeftError.replicaShutDown }
    }

    /// Submits one op, mapping every failure to `WeftError`.
    func submit(path: Path, kind: OpKind, at time: WeftTime) throws -> WriteReceipt {
        try checkOpen()
        return try WeftError.mapping(path: path.description) { try backend.submit(path: path, kind: kind, at: time) }
    }

    /// Submits a push under `parent`; returns the new child's key and the receipt.
    func submitPush(parent: Path, value: Value, at time: WeftTime) throws -> (key: String, receipt: WriteReceipt) {
        try checkOpen()
        return try WeftError.mapping(path: parent.description) {
            try backend.submitPush(parent: parent, value: value, at: time)
        }
    }

    // MARK: - Functions

    /// Registers a deterministic function for `call` ops; see `Replica.register(name:version:_:)`.
    /// - Throws: `WeftError` with code `invalidValue` for an empty or too long name.
    func register(name: String, version: UInt32, _ function: @escaping FunctionRegistry.Function) throws {
        try Self.checkFunctionName(name)
        try backend.register(name: name, version: version, function)
    }

    /// True when this replica can run the function: a call of it applies here rather than waiting.
    func isRegistered(name: String, version: UInt32) -> Bool {
        guard let catalog = backend as? any FunctionCatalog else { return true }
        return catalog.isRegistered(name: name, version: version)
    }

    static func checkFunctionName(_ name: String) throws {
        guard !name.isEmpty, name.utf8.count <= CoreLimits.functionNameBytesMax else {
            throw WeftError(
                .invalidValue,
                "a function name has 1 to \(CoreLimits.functionNameBytesMax) bytes; got \(name.utf8.count)")
        }
    }

    // MARK: - Shutdown

    /// Shuts the replica down: work already started finishes, later writes fail with `shutDown`, live
    /// publishers complete and event sequences end.
    func shutdown() async {
        await backend.shutdown()
        state.finishFeeds()
    }

    /// The completion form of ``shutdown()``.
    func shutdown(queue: DispatchQueue?, completion: @escaping @Sendable () -> Void) {
        let target = queue ?? state.callbackQueue
        Task {
            await shutdown()
            target.async { completion() }
        }
    }
}

/// A backend that can say which functions it has registered, so that a call of an unknown function fails
/// at once instead of waiting forever on this replica.
protocol FunctionCatalog {
    func isRegistered(name: String, version: UInt32) -> Bool
}
