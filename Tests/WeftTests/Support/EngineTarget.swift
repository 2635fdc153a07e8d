import Foundation
import WeftCore
import WeftSync

@_spi(Engine) @testable import Weft

/// A sync target for tests: a real merge engine and hybrid clock behind a lock, local writes stamped like a
/// replica's, and the change notification the driver listens to.
final class EngineTarget: SyncTarget, @unchecked Sendable {
    let replica: ReplicaID
    private let lock = NSLock()
    private let engine = MergeEngine()
    private var clock: HybridClock
    private var listeners: [@Sendable () -> Void] = []
    private var changeListeners: [Int: @Sendable (ChangeBatch) -> Void] = [:]
    private var nextListenerID = 0
    private var shutDown = false
    private(set) var remoteBatchesApplied = 0
    /// A pause before each remote batch, to play a slow consumer.
    private var applyDelayMilliseconds: UInt32 = 0

    func setApplyDelay(milliseconds: UInt32) { lock.withLock { applyDelayMilliseconds = milliseconds } }

    /// How far this target's wall clock runs ahead of the real one (a skewed machine).
    private let wallOffsetMillis: Int64

    init(node: Int, wallOffsetMillis: Int64 = 0) {
        replica = SyncFixture.replica(node)
        clock = HybridClock(replica: replica)
        self.wallOffsetMillis = wallOffsetMillis
    }

    private var wallMillis: UInt64 { UInt64(Int64(Date().timeIntervalSince1970 * 1_000) + wallOffsetMillis) }

    var versionVector: VersionVector { lock.withLock { engine.versionVector } }

    func appliedVersionVector(for path: Path) -> VersionVector {
        lock.withLock { engine.appliedVersionVector(for: path) }
    }

    /// Everything is durable at once in memory.
    var durableVersionVector: VersionVector { versionVector }

    func ops(from origin: ReplicaID, after sequence: UInt64, limit: Int) throws -> [Op] {
        lock.withLock { engine.ops(from: origin, after: sequence, limit: limit) }
    }

    func applyRemote(_ ops: EncodedOps) throws -> ApplyReport {
        let delay = lock.withLock { applyDelayMilliseconds }
        if delay > 0 { usleep(delay * 1_000) }
        let report = try lock.withLock {
            for op in ops { try clock.receive(op.stamp, wallMillis: wallMillis) }
            let report = engine.apply(ops.ops)
            remoteBatchesApplied += 1
            return report
        }
        notify(report, isLocalPending: false)
        return report
    }

    func addOpsAppendedListener(_ listener: @escaping @Sendable () -> Void) -> ChangeListenerToken {
        lock.withLock { listeners.append(listener) }
        return ChangeListenerToken {}
    }

    /// A local write, stamped and sequenced as the replica would.
    func write(_ kind: OpKind, at path: String) throws {
        _ = try submit(path: try Path(path), kind: kind, at: .now)
    }

    private func writeLocal(_ make: (Stamp) throws -> (Path, OpKind)) throws -> Stamp {
        let (stamp, report) = try lock.withLock {
            let stamp = try clock.next(wallMillis: wallMillis)
            let (path, kind) = try make(stamp)
            let op = Op(stamp: stamp, sequence: engine.versionVector[replica] + 1, path: path, kind: kind)
            return (stamp, engine.apply([op]))
        }
        notify(report, isLocalPending: true)
        return stamp
    }

    func value(at path: String) throws -> Value {
        let path = try Path(path)
        return lock.withLock { engine.value(at: path) }
    }

    var digest: StateDigest { lock.withLock { engine.digest } }

    private func notify(_ report: ApplyReport, isLocalPending: Bool) {
        let (opsListeners, changeListeners) = lock.withLock { (listeners, Array(self.changeListeners.values)) }
        for listener in opsListeners { listener() }
        let batch = ChangeBatch(changes: report.changes, isLocalPending: isLocalPending, outcomes: report.outcomes)
        for listener in changeListeners { listener(batch) }
    }
}

// MARK: - ReplicaBackend

extension EngineTarget: ReplicaBackend {
    func value(at path: Path) -> Value { lock.withLock { engine.value(at: path) } }

    func snapshot() -> Value { lock.withLock { engine.state } }

    var loadFailure: WeftError? { nil }

    func submit(path: Path, kind: OpKind, at time: WeftTime) throws -> WriteReceipt {
        // Held in memory only, its writes are as durable as they get once applied (``durableVersionVector``).
        WriteReceipt(stamp: try writeLocal { _ in (path, kind) }, status: .durable)
    }

    func submitPush(parent: Path, value: Value, at time: WeftTime) throws -> (key: String, receipt: WriteReceipt) {
        var key = ""
        let stamp = try writeLocal { stamp in
            key = PushID.make(from: stamp)
            return (try parent.child(key), .set(value))
        }
        return (key, WriteReceipt(stamp: stamp, status: .durable))
    }

    func reservePushKey(at time: WeftTime) throws -> String {
        try lock.withLock { PushID.make(from: try clock.next(wallMillis: wallMillis)) }
    }

    func register(name: String, version: UInt32, _ function: @escaping FunctionRegistry.Function) {
        _ = lock.withLock { engine.register(name: name, version: version, function) }
    }

    func addChangeListener(_ listener: @escaping @Sendable (ChangeBatch) -> Void) -> ChangeListenerToken {
        let id = lock.withLock {
            nextListenerID += 1
            changeListeners[nextListenerID] = listener
            return nextListenerID
        }
        return ChangeListenerToken { [weak self] in
            guard let self else { return }
            self.lock.withLock { _ = self.changeListeners.removeValue(forKey: id) }
        }
    }

    func shutdown() async { lock.withLock { shutDown = true } }

    var isShutDown: Bool { lock.withLock { shutDown } }
}
