import Foundation
import WeftCore

/// The receipts of a replica's own writes that may still change status after they are durable: to
/// acknowledged, to stable, or to rejected when a late op revises their outcome.
///
/// Receipts are held weakly, by sequence: a receipt the app dropped costs an empty slot until the next
/// sweep. At most ``WeftLimits/receiptsTrackedMax`` are kept; the oldest go first.
///
/// ```swift
/// book.track(receipt, sequence: op.sequence)
/// book.advance(through: 41, to: .acknowledged)
/// book.reject(sequence: 7, because: .staleRead(path))
/// ```
final class ReceiptBook: @unchecked Sendable {
    // Sendable: every mutable field is guarded by `lock`.
    private struct Tracked {
        let sequence: UInt64
        weak var receipt: WriteReceipt?
    }

    private let lock = NSLock()
    /// Ascending sequences.
    private var tracked: [Tracked] = []
    /// Count of `tracked` after the last sweep of dropped receipts.
    private var countAfterSweep = 0
    private var acknowledgedThrough: UInt64 = 0
    private var stableThrough: UInt64 = 0

    /// Tracks the receipt of the op `sequence`, the newest of this replica.
    func track(_ receipt: WriteReceipt, sequence: UInt64) {
        lock.withLock {
            precondition(tracked.last.map { $0.sequence < sequence } ?? true, "receipts are tracked in sequence order")
            tracked.append(Tracked(sequence: sequence, receipt: receipt))
            if tracked.count > 2 * countAfterSweep + 1_024 { sweep() }
        }
    }

    /// Drops the slots of receipts the app released, and the oldest beyond the limit.
    private func sweep() {
        tracked.removeAll { $0.receipt == nil }
        if tracked.count > WeftLimits.receiptsTrackedMax {
            tracked.removeFirst(tracked.count - WeftLimits.receiptsTrackedMax)
        }
        countAfterSweep = tracked.count
    }

    /// Index of the first tracked sequence above `sequence`.
    private func firstIndex(above sequence: UInt64) -> Int {
        var low = 0
        var high = tracked.count
        while low < high {
            let middle = (low + high) / 2
            if tracked[middle].sequence <= sequence { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Advances the receipts of every op up to `sequence` to `status` (acknowledged or stable); stable
    /// receipts are no longer tracked.
    func advance(through sequence: UInt64, to status: WriteStatus) {
        let receipts: [WriteReceipt] = lock.withLock {
            switch status {
            case .acknowledged:
                guard sequence > acknowledgedThrough else { return [] }
                let range = firstIndex(above: acknowledgedThrough)..<firstIndex(above: sequence)
                acknowledgedThrough = sequence
                return tracked[range].compactMap(\.receipt)
            case .stable:
                guard sequence > stableThrough else { return [] }
                let end = firstIndex(above: sequence)
                let due = tracked[..<end].compactMap(\.receipt)
                tracked.removeFirst(end)
                countAfterSweep = min(countAfterSweep, tracked.count)
                stableThrough = sequence
                acknowledgedThrough = max(acknowledgedThrough, sequence)
                return due
            default:
                preconditionFailure("only acknowledgement and stability come in bulk, not \(status)")
            }
        }
        for receipt in receipts { receipt.advance(to: status) }
    }

    /// Marks the receipt of op `sequence` rejected.
    func reject(sequence: UInt64, because rejection: Rejection) {
        let receipt: WriteReceipt? = lock.withLock {
            let index = firstIndex(above: sequence) - 1
            guard index >= 0, tracked[index].sequence == sequence else { return nil }
            return tracked[index].receipt
        }
        receipt?.advance(to: .rejected(rejection))
    }

    /// Number of receipts tracked (for tests).
    var count: Int { lock.withLock { tracked.count } }
}
