import Dispatch
import WeftCore

/// A write submitted to the replica (applied in memory, status `.pending`): its receipt, and what the
/// caller gets back once the write reaches the status the caller waits for.
struct Submitted<Output: Sendable>: Sendable {
    let receipt: WriteReceipt
    let output: Output
}

extension WriteStatus {
    /// Fails unless this is a status one can wait for (`.pending` … `.stable`).
    func checkIsTarget() throws {
        if case .rejected = self {
            throw WeftError(.invalidValue, "wait for .pending, .durable, .acknowledged or .stable, not .rejected")
        }
    }
}

extension WriteReceipt {
    /// Waits until the write reaches `target`.
    /// - Throws: `WeftError` with code `rejected` (saying why) when the write was rejected at merge, or the
    ///   replica's error when it shut down or failed first.
    @discardableResult
    func settle(waitingFor target: WriteStatus, path: String) async throws -> WriteStatus {
        let status = try await wait(for: target)
        if case .rejected(let rejection) = status { throw WeftError(.rejected, rejection.description, path: path) }
        return status
    }
}

extension WeftError {
    /// `error` as a `WeftError`: itself, a mapped core error, or `fallback` with the error's text.
    static func from(_ error: any Error, fallback: Code = .transactionAborted) -> WeftError {
        if let error = error as? WeftError { return error }
        if let error = error as? CoreError { return WeftError(error) }
        return WeftError(fallback, "\(error)")
    }
}

/// The completion-callback form of every operation, built on the async one.
enum Completion {
    /// Submits a write now and calls `completion` on `queue` once it reaches `target`.
    ///
    /// - Returns: the output at once (for a push, the new node), or nil when the write could not be
    ///   submitted; the callback then gets the error.
    static func write<Output: Sendable>(
        waitingFor target: WriteStatus, path: String, queue: DispatchQueue,
        completion: @escaping @Sendable (Result<Output, WeftError>) -> Void, submit: () throws -> Submitted<Output>
    ) -> Output? {
        let submitted: Submitted<Output>
        do {
            try target.checkIsTarget()
            submitted = try submit()
        } catch {
            queue.async { completion(.failure(WeftError.from(error))) }
            return nil
        }
        Task {
            let result: Result<Output, WeftError>
            do {
                try await submitted.receipt.settle(waitingFor: target, path: path)
                result = .success(submitted.output)
            } catch {
                result = .failure(WeftError.from(error))
            }
            queue.async { completion(result) }
        }
        // A write rejected as it applied (an increment of a string) failed too: its output (the number an
        // increment would have given) is one the node never held.
        if case .rejected = submitted.receipt.status { return nil }
        return submitted.output
    }

    /// Runs async work and calls `completion` on `queue` with its result.
    static func run<Output: Sendable>(
        queue: DispatchQueue, completion: @escaping @Sendable (Result<Output, WeftError>) -> Void,
        _ work: @escaping @Sendable () async throws -> Output
    ) {
        Task {
            let result: Result<Output, WeftError>
            do {
                result = .success(try await work())
            } catch {
                result = .failure(WeftError.from(error))
            }
            queue.async { completion(result) }
        }
    }
}
