import Dispatch
import WeftCore

// performChanges (Dflat): several writes to several paths as one `.batch` op under one stamp, applied all
// or nothing and seen all at once by observers.

extension ReplicaAccess {
    /// Collects the writes of `changes` and applies them as one op; see `Replica.performChanges`.
    @discardableResult
    nonisolated(nonsending) func performChanges(
        at time: WeftTime, waitingFor target: WriteStatus, _ changes: (WriteBatch) throws -> Void
    ) async throws -> WriteReceipt? {
        try target.checkIsTarget()
        guard let receipt = try submitBatch(at: time, changes) else { return nil }
        try await receipt.settle(waitingFor: target, path: "/")
        return receipt
    }

    /// The completion form of ``performChanges(at:waitingFor:_:)``: `changes` runs before this returns.
    func performChanges(
        at time: WeftTime, waitingFor target: WriteStatus, queue: DispatchQueue?,
        _ changes: (WriteBatch) throws -> Void,
        completion: @escaping @Sendable (Result<WriteReceipt?, WeftError>) -> Void
    ) {
        let queue = queue ?? state.callbackQueue
        let receipt: WriteReceipt?
        do {
            try target.checkIsTarget()
            receipt = try submitBatch(at: time, changes)
        } catch {
            queue.async { completion(.failure(WeftError.from(error))) }
            return
        }
        guard let receipt else {
            queue.async { completion(.success(nil)) }
            return
        }
        Completion.run(queue: queue, completion: completion) {
            try await receipt.settle(waitingFor: target, path: "/")
            return receipt as WriteReceipt?
        }
    }

    /// Runs `changes` and submits what it wrote; nil when it wrote nothing.
    private func submitBatch(at time: WeftTime, _ changes: (WriteBatch) throws -> Void) throws -> WriteReceipt? {
        try checkOpen()
        let batch = WriteBatch(access: self, time: time)
        try changes(batch)
        guard !batch.isAborted else {
            throw WeftError(.transactionAborted, "the batch was aborted; nothing was written")
        }
        return try submitRecorded(batch.recorder, read: nil)
    }
}
