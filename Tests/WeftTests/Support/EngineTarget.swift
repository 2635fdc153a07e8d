import Foundation
import WeftCore
import WeftSync

@testable import Weft

/// A sync target for tests: a real merge engine and hybrid clock behind a lock, local writes stamped like a
/// replica's, and the change notification the driver listens to.
final class EngineTarget: SyncTarget, @unchecked Sendable {
    let replica: ReplicaID
    private let lock = NSLock()
    private let engine = MergeEngine()
    private var clock: HybridClock
    private var listeners: [@Sendable () -> Void] = []
    private(set) var remoteBatchesApplied = 0

    init(node: Int) {
        replica = SyncFixture.replica(node)
        clock = HybridClock(replica: replica)
    }

    private var wallMillis: UInt64 { UInt64(Date().timeIntervalSince1970 * 1_000) }

    var versionVector: VersionVector { lock.withLock { engine.versionVector } }

    func ops(from origin: ReplicaID, after sequence: UInt64, limit: Int) throws -> [Op] {
        lock.withLock { engine.ops(from: origin, after: sequence, limit: limit) }
    }

    func applyRemote(_ ops: [Op]) throws {
        try lock.withLock {
            for op in ops { try clock.receive(op.stamp, wallMillis: wallMillis) }
            _ = engine.apply(ops)
            remoteBatchesApplied += 1
        }
        notify()
    }

    func addOpsAppendedListener(_ listener: @escaping @Sendable () -> Void) {
        lock.withLock { listeners.append(listener) }
    }

    /// A local write, stamped and sequenced as the replica would.
    func write(_ kind: OpKind, at path: String) throws {
        try lock.withLock {
            let stamp = try clock.next(wallMillis: wallMillis)
            let op = Op(stamp: stamp, sequence: engine.versionVector[replica] + 1, path: try Path(path), kind: kind)
            _ = engine.apply([op])
        }
        notify()
    }

    func value(at path: String) throws -> Value {
        let path = try Path(path)
        return lock.withLock { engine.value(at: path) }
    }

    var digest: StateDigest { lock.withLock { engine.digest } }

    private func notify() {
        for listener in lock.withLock({ listeners }) { listener() }
    }
}
