import Foundation
import WeftCore

/// The receipt of one local write: its stamp, and its status as it moves pending → durable →
/// acknowledged → stable (or to rejected, which is final).
///
/// ```swift
/// let receipt = try replica.root.child("score").set(42)
/// try await receipt.wait(for: .durable)
/// ```
public final class WriteReceipt: @unchecked Sendable {
    // Sendable: every mutable field is guarded by `lock`.
    /// The stamp of the write's op.
    public let stamp: Stamp
    private let lock = NSLock()
    private var current: WriteStatus
    private var failure: WeftError?
    private var waiters: [(target: WriteStatus, continuation: CheckedContinuation<WriteStatus, any Error>)] = []
    private var observers: [@Sendable (WriteStatus) -> Void] = []

    init(stamp: Stamp, status: WriteStatus = .pending) {
        self.stamp = stamp
        self.current = status
    }

    /// The status now.
    public var status: WriteStatus { lock.withLock { current } }

    /// Waits until the write reaches `target` (or a later status), or is rejected.
    ///
    /// - Returns: the status reached (`.rejected` when the write was rejected at merge).
    /// - Throws: `WeftError` when the replica shut down or failed before the write reached `target`.
    @discardableResult
    public func wait(for target: WriteStatus = .durable) async throws -> WriteStatus {
        try await withCheckedThrowingContinuation { continuation in
            let ready: Result<WriteStatus, WeftError>? = lock.withLock {
                if let failure { return .failure(failure) }
                if Self.reached(current, target) { return .success(current) }
                waiters.append((target, continuation))
                return nil
            }
            switch ready {
            case .success(let status): continuation.resume(returning: status)
            case .failure(let error): continuation.resume(throwing: error)
            case nil: break
            }
        }
    }

    /// Calls `observer` with every later status change, on the thread that makes the change.
    public func observe(_ observer: @escaping @Sendable (WriteStatus) -> Void) {
        lock.withLock { observers.append(observer) }
    }

    static func reached(_ status: WriteStatus, _ target: WriteStatus) -> Bool {
        if case .rejected = status { return true }
        return status >= target
    }

    /// Moves the status forward (never back; rejected is final).
    func advance(to status: WriteStatus) {
        let (ready, toNotify): ([CheckedContinuation<WriteStatus, any Error>], [@Sendable (WriteStatus) -> Void]) =
            lock.withLock {
                if case .rejected = current { return ([], []) }
                guard status > current || { if case .rejected = status { true } else { false } }() else {
                    return ([], [])
                }
                current = status
                var ready: [CheckedContinuation<WriteStatus, any Error>] = []
                waiters.removeAll { waiter in
                    guard Self.reached(status, waiter.target) else { return false }
                    ready.append(waiter.continuation)
                    return true
                }
                return (ready, observers)
            }
        for continuation in ready { continuation.resume(returning: status) }
        for observer in toNotify { observer(status) }
    }

    /// Fails every waiter (the replica shut down or its store failed before the write got there).
    func fail(_ error: WeftError) {
        let waiting = lock.withLock {
            failure = error
            defer { waiters.removeAll() }
            return waiters.map(\.continuation)
        }
        for continuation in waiting { continuation.resume(throwing: error) }
    }
}
