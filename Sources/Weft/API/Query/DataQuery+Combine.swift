#if canImport(Combine)
    import Combine
#else
    import OpenCombine
#endif
import WeftCore

extension DataQuery {
    /// One-shot reads as Combine futures (``DataQuery/forCombine``).
    ///
    /// ```swift
    /// query.forCombine.fetch().sink(receiveCompletion: { _ in }, receiveValue: { result in … })
    /// ```
    public struct CombineWrapper: Sendable, Hashable {
        public let query: DataQuery

        /// A future of the query's result now, fulfilled at once.
        public func fetch() -> Future<QueryResult, WeftError> {
            let result = Result { try query.currentRun().result }.mapError { WeftError.from($0) }
            return Future { promise in promise(result) }
        }

        /// The live results (``DataQuery/publisher()``).
        public func publisher() -> AnyPublisher<QueryEvent, Never> { query.publisher() }
    }
}
