#if canImport(Combine)
    import Combine
#else
    import OpenCombine
#endif
import Dispatch
import WeftCore

extension Transaction {
    /// The same transaction with a Combine API: ``CombineWrapper/commit(waitingFor:timeout:)`` gives a
    /// future.
    ///
    /// ```swift
    /// transaction.forCombine.commit()
    ///     .sink(receiveCompletion: { print($0) }, receiveValue: { print($0 as Any) })
    ///     .store(in: &cancellables)
    /// ```
    public var forCombine: CombineWrapper { CombineWrapper(transaction: self) }

    /// A transaction with a Combine API.
    ///
    /// The commit future starts at once, like the callback form: the op is submitted whether or not the
    /// future is subscribed.
    public struct CombineWrapper: Sendable {
        /// The plain transaction.
        public let transaction: Transaction

        /// Commits the transaction; see ``Transaction/commit(waitingFor:timeout:)``.
        ///
        /// ```swift
        /// transaction.forCombine.commit().sink(receiveCompletion: { _ in }, receiveValue: { _ in })
        /// ```
        /// - Returns: a future of the receipt (nil when nothing was written), failing with a `WeftError`.
        @discardableResult
        public func commit(
            waitingFor target: WriteStatus? = nil,
            timeout: Duration = .seconds(WeftLimits.transactionWaitSecondsDefault)
        ) -> Future<WriteReceipt?, WeftError> {
            let transaction = transaction
            return Future { promise in
                let box = PromiseBox(promise)
                transaction.commit(waitingFor: target, timeout: timeout) { box.fulfill($0) }
            }
        }
    }
}
