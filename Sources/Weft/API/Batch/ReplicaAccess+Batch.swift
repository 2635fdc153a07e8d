import Dispatch
import WeftCore

// performChanges (Dflat): several writes to several paths as one `.batch` op under one stamp, applied all
// or nothing and seen all at once by observers. A batch that read (`batch.read`) is one guarded batch op,
// applied only if nothing changed under what it read; a stale one runs the closure again.

extension ReplicaAccess {
    /// Collects the writes of `changes` and applies them as one op; see `Replica.performChanges`.
    @discardableResult
    nonisolated(nonsending) func performChanges(
        at time: WeftTime, waitingFor target: WriteStatus, _ changes: (WriteBatch) throws -> Void
    ) async throws -> WriteReceipt? {
        try target.checkIsTarget()
        var attempts = 0
        while true {
            guard let submitted = try submitBatch(at: time, attempts: &attempts, changes) else { return nil }
            let status = try await submitted.receipt.wait(for: target)
            guard case .rejected(let rejection) = status else { return submitted.receipt }
            // A remote write it had not seen made a batch that read stale after it applied here: again.
            guard submitted.guarded, case .staleRead = rejection else {
                throw WeftError(.rejected, rejection.description, path: rejection.path?.description ?? "/")
            }
            try Self.checkAttemptsLeft(attempts)
        }
    }

    /// The completion form of ``performChanges(at:waitingFor:_:)``: `changes` runs before this returns
    /// (again, as long as a batch that read is rejected at once as stale).
    func performChanges(
        at time: WeftTime, waitingFor target: WriteStatus, queue: DispatchQueue?,
        _ changes: (WriteBatch) throws -> Void,
        completion: @escaping @Sendable (Result<WriteReceipt?, WeftError>) -> Void
    ) {
        let queue = queue ?? state.callbackQueue
        let receipt: WriteReceipt?
        do {
            try target.checkIsTarget()
            var attempts = 0
            receipt = try submitBatch(at: time, attempts: &attempts, changes)?.receipt
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

    /// Runs `changes` and submits what it wrote; nil when it wrote nothing. A batch that read and is
    /// rejected at once as stale (a write it had not seen came in between) runs `changes` again, up to
    /// ``WeftLimits/transactionRetriesMax`` attempts in all (`attempts` counts them).
    private func submitBatch(at time: WeftTime, attempts: inout Int, _ changes: (WriteBatch) throws -> Void) throws
        -> (receipt: WriteReceipt, guarded: Bool)?
    {
        while true {
            try checkOpen()
            attempts += 1
            let batch = WriteBatch(access: self, time: time)
            try changes(batch)
            guard !batch.isAborted else {
                throw WeftError(.transactionAborted, "the batch was aborted; nothing was written")
            }
            let guarded = !batch.recorder.reads.isEmpty
            guard let receipt = try submitRecorded(batch.recorder) else { return nil }
            guard guarded, case .rejected(.staleRead) = receipt.status else { return (receipt, guarded) }
            try Self.checkAttemptsLeft(attempts)
        }
    }

    /// Fails with `retriesExhausted` once a batch that read ran ``WeftLimits/transactionRetriesMax`` times.
    private static func checkAttemptsLeft(_ attempts: Int) throws {
        guard attempts < WeftLimits.transactionRetriesMax else {
            throw WeftError(
                .retriesExhausted,
                "the batch read values that other writes changed on each of its \(attempts) attempts; nothing was written")
        }
    }
}
