import Foundation
import WeftCore

@_spi(Engine) @testable import Weft

/// An honest in-memory `ReplicaBackend` for the API tests: the real `MergeEngine` behind a lock, a real
/// `HybridClock` on an injected wall clock, receipts that become durable after a small delay (or when a
/// test says so), listeners called in order on a serial queue, and remote ops merged as a peer would
/// deliver them (with revised outcomes reaching the receipts they concern).
final class MemoryBackend: ReplicaBackend, @unchecked Sendable {
    // Sendable: every mutable field is guarded by `lock`.
    let replica: ReplicaID
    let api = APIState(label: "weft.test.callbacks")
    fileprivate let lock = NSLock()
    fileprivate let engine = MergeEngine()
    private var clock: HybridClock
    private let wallMillis: @Sendable () -> UInt64
    private var sequence: UInt64 = 0
    private var receipts: [Stamp: WriteReceipt] = [:]
    private var notDurable: [Stamp] = []
    private var listeners: [UInt64: @Sendable (ChangeBatch) -> Void] = [:]
    private var nextListener: UInt64 = 0
    private var shutDown = false
    private let durabilityDelay: DispatchTimeInterval?
    private let notifications = DispatchQueue(label: "weft.test.notifications")

    /// - Parameters:
    ///   - durabilityDelay: how long a write stays pending; nil to make writes durable only through
    ///     ``makeDurable()``.
    ///   - wallMillis: the wall clock (defaults to the real one).
    init(
        replica: UInt64 = 0xA11CE, durabilityDelay: DispatchTimeInterval? = .milliseconds(2),
        wallMillis: @escaping @Sendable () -> UInt64 = { UInt64(Date().timeIntervalSince1970 * 1000) }
    ) {
        self.replica = Sample.replica(replica)
        self.clock = HybridClock(replica: self.replica)
        self.wallMillis = wallMillis
        self.durabilityDelay = durabilityDelay
    }

    /// The API's view of this replica.
    var access: ReplicaAccess { ReplicaAccess(backend: self, state: api) }
    var root: DataNode { access.root }

    // MARK: - ReplicaBackend

    func value(at path: Path) -> Value { lock.withLock { engine.value(at: path) } }

    func snapshot() -> Value { lock.withLock { engine.state } }

    var loadFailure: WeftError? { nil }

    var versionVector: VersionVector { lock.withLock { engine.versionVector } }

    func appliedVersionVector(for path: Path) -> VersionVector {
        lock.withLock { engine.appliedVersionVector(for: path) }
    }

    var isShutDown: Bool { lock.withLock { shutDown } }

    func submit(path: Path, kind: OpKind, at time: WeftTime) throws -> WriteReceipt {
        try lock.withLock {
            let stamp = try nextStamp(at: time)
            return apply(Op(stamp: stamp, sequence: nextSequence(), path: path, kind: kind))
        }
    }

    func submitPush(parent: Path, value: Value, at time: WeftTime) throws -> (key: String, receipt: WriteReceipt) {
        try lock.withLock {
            let stamp = try nextStamp(at: time)
            let key = PushID.make(from: stamp)
            let path = try parent.child(key)
            return (key, apply(Op(stamp: stamp, sequence: nextSequence(), path: path, kind: .set(value))))
        }
    }

    func reservePushKey(at time: WeftTime) throws -> String {
        try lock.withLock { PushID.make(from: try nextStamp(at: time)) }
    }

    func register(name: String, version: UInt32, _ function: @escaping FunctionRegistry.Function) {
        lock.withLock {
            let report = engine.register(name: name, version: version, function)
            publish(report, isLocalPending: false)
        }
    }

    func addChangeListener(_ listener: @escaping @Sendable (ChangeBatch) -> Void) -> ChangeListenerToken {
        let id = lock.withLock {
            nextListener += 1
            listeners[nextListener] = listener
            return nextListener
        }
        return ChangeListenerToken { [weak self] in
            guard let self else { return }
            _ = self.lock.withLock { self.listeners.removeValue(forKey: id) }
        }
    }

    func shutdown() async {
        lock.withLock { shutDown = true }
        makeDurable()
        // Let listeners see every change made before shutdown.
        await withCheckedContinuation { continuation in notifications.async { continuation.resume() } }
    }

    // MARK: - Test controls

    /// The stamp of the latest local write.
    var lastLocalStamp: Stamp? { lock.withLock { receipts.keys.filter { $0.replica == replica }.max() } }

    /// Number of listeners registered (subscriptions that were not cancelled).
    var listenerCount: Int { lock.withLock { listeners.count } }

    /// Makes every pending write durable.
    func makeDurable() {
        let stamps = lock.withLock {
            defer { notDurable.removeAll() }
            return notDurable
        }
        for stamp in stamps { lock.withLock { receipts[stamp] }?.advance(to: .durable) }
    }

    /// Moves the write with this stamp to `status` (acknowledged by a hub, stable everywhere).
    func advance(_ stamp: Stamp, to status: WriteStatus) {
        lock.withLock { receipts[stamp] }?.advance(to: status)
    }

    /// Merges ops from another replica, as a sync session would deliver them.
    /// The ops `origin` made that this backend holds, in sequence order (to hand to another backend).
    func ops(from origin: ReplicaID) -> [Op] {
        lock.withLock { engine.ops(from: origin, after: 0, limit: .max) }
    }

    func receiveRemote(_ ops: [Op]) throws {
        try lock.withLock {
            for op in ops { try clock.receive(op.stamp, wallMillis: wallMillis()) }
            publish(engine.apply(ops), isLocalPending: false)
        }
    }

    // MARK: - Internals (called with `lock` held)

    private func nextStamp(at time: WeftTime) throws -> Stamp {
        guard !shutDown else { throw WeftError(.shutDown, "the replica is shut down") }
        let now = wallMillis()
        var wall = now
        if case .millis(let requested) = time {
            guard requested <= now + clock.driftMillisMax else {
                throw WeftError(
                    .clockRefused, "\(requested) is more than \(clock.driftMillisMax) ms ahead of the clock")
            }
            wall = requested
        }
        do {
            return try clock.next(wallMillis: wall)
        } catch let error as CoreError {
            throw WeftError(error)
        }
    }

    private func nextSequence() -> UInt64 {
        sequence += 1
        return sequence
    }

    private func apply(_ op: Op) -> WriteReceipt {
        let report = engine.apply([op])
        let status: WriteStatus
        if case .rejected(let rejection) = report.outcomes[op.stamp] {
            status = .rejected(rejection)
        } else {
            status = .pending
        }
        let receipt = WriteReceipt(stamp: op.stamp, status: status)
        receipts[op.stamp] = receipt
        publish(report, isLocalPending: true, except: op.stamp)
        if status == .pending { scheduleDurable(op.stamp) }
        return receipt
    }

    private func scheduleDurable(_ stamp: Stamp) {
        guard let durabilityDelay else {
            notDurable.append(stamp)
            return
        }
        let receipt = receipts[stamp]
        DispatchQueue.global().asyncAfter(deadline: .now() + durabilityDelay) { receipt?.advance(to: .durable) }
    }

    /// Sends a report to the listeners and applies revised outcomes to the receipts they concern.
    private func publish(_ report: ApplyReport, isLocalPending: Bool, except own: Stamp? = nil) {
        for (stamp, outcome) in report.outcomes where stamp != own {
            if case .rejected(let rejection) = outcome { receipts[stamp]?.advance(to: .rejected(rejection)) }
        }
        guard !report.changes.isEmpty else { return }
        let batch = ChangeBatch(changes: report.changes, isLocalPending: isLocalPending, outcomes: report.outcomes)
        let targets = Array(listeners.values)
        notifications.async { for listener in targets { listener(batch) } }
    }
}

// MARK: - FunctionCatalog

extension MemoryBackend: FunctionCatalog {
    func isRegistered(name: String, version: UInt32) -> Bool {
        lock.withLock { engine.registry.contains(name: name, version: version) }
    }
}
