import Foundation
import WeftCore

/// The receipt of one local write: its stamp, and its status as it moves pending → durable →
/// acknowledged → stable, or to rejected when the merge rejects it (a late op from another replica can
/// revise that, either way, until the write is stable).
///
/// A receipt holds no state of its own: it asks the replica's book of statuses, so making one costs
/// a small object and nothing per status change.
///
/// ```swift
/// let receipt = try replica.root.child("score").set(42)
/// try await receipt.wait(for: .durable)
/// ```
public final class WriteReceipt: Sendable {
    /// The stamp of the write's op.
    public let stamp: Stamp
    /// The write's position in this replica's log.
    let sequence: UInt64
    private let book: ReceiptBook

    /// The receipt of the write `sequence`, whose status `book` keeps.
    init(stamp: Stamp, sequence: UInt64, book: ReceiptBook) {
        self.stamp = stamp
        self.sequence = sequence
        self.book = book
    }

    /// A receipt with a book of its own, for backends that move each write's status by hand.
    convenience init(stamp: Stamp, status: WriteStatus = .pending) {
        self.init(stamp: stamp, sequence: 1, book: ReceiptBook())
        advance(to: status)
    }

    /// The status now.
    public var status: WriteStatus { book.status(of: sequence) }

    /// Waits until the write reaches `target` (or a later status), or is rejected.
    ///
    /// - Returns: the status reached (`.rejected` when the write was rejected at merge).
    /// - Throws: `WeftError` when the replica shut down or failed before the write reached `target`.
    @discardableResult
    public func wait(for target: WriteStatus = .durable) async throws -> WriteStatus {
        try await book.wait(sequence: sequence, for: target)
    }

    /// Waits until the write reaches `target` (or a later status), or is rejected, for at most `timeout`.
    ///
    /// ```swift
    /// if try await receipt.wait(for: .stable, timeout: .seconds(5)) == nil { showOffline() }
    /// ```
    /// - Returns: the status reached (`.rejected` when rejected at merge), or nil when `timeout` passed first.
    /// - Throws: `WeftError` when the replica shut down or failed before the write reached `target`.
    public func wait(for target: WriteStatus, timeout: Duration) async throws -> WriteStatus? {
        try await book.wait(sequence: sequence, for: target, timeout: timeout)
    }

    /// Calls `observer` with every later status change, in order, on `queue` (a serial queue), or on a
    /// serial queue of the replica's when nil; never on the thread that makes the change, so the observer
    /// may read and write the replica. The replica holds the observer until the write is stable, can no
    /// longer change, or the replica shuts down.
    ///
    /// ```swift
    /// let receipt = try replica.root.child("order").set(order)
    /// receipt.observe(queue: .main) { status in
    ///     if case .rejected = status { try? replica.root.child("orderFailed").set(true) }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - queue: where `observer` runs; a serial queue keeps the calls in order.
    ///   - observer: called with each new status.
    public func observe(queue: DispatchQueue? = nil, _ observer: @escaping @Sendable (WriteStatus) -> Void) {
        book.observe(sequence: sequence, on: queue, observer)
    }

    static func reached(_ status: WriteStatus, _ target: WriteStatus) -> Bool {
        if case .rejected = status { return true }
        return status >= target
    }

    /// Moves this write's status by hand (backends without a shared book).
    func advance(to status: WriteStatus) {
        switch status {
        case .pending: return
        case .durable: book.markDurable(through: sequence)
        case .acknowledged, .stable: book.advance(through: sequence, to: status)
        case .rejected(let rejection): book.reject(sequence: sequence, because: rejection)
        }
    }

    /// Fails every waiter (the replica shut down or its store failed before the write got there).
    func fail(_ error: WeftError) { book.fail(from: sequence, error) }
}
