import WeftCore

/// The one error type of Weft's public API: a code you can match, and a message that says what
/// happened and what to do next.
///
/// ```swift
/// do { try node.set(json: "{oops") } catch let error as WeftError where error.code == .invalidJSON { … }
/// ```
public struct WeftError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        case invalidPath, invalidKey, invalidValue, invalidJSON, valueTooLarge
        case decodingFailed, encodingFailed
        case clockRefused
        case shutDown
        case storage, databaseInUse, notAWeftDatabase, newerSchema, copiedDatabase, diskFull, readOnly
        case transactionAborted, retriesExhausted, rejected, transactionCommitted
        case sync, authentication, protocolMismatch, timeout
        case unknownFunction
        case invalidQuery
    }

    /// The kind of failure.
    public var code: Code
    /// What happened, and what to do next.
    public var message: String
    /// The path involved, when there is one.
    public var path: String?

    public init(_ code: Code, _ message: String, path: String? = nil) {
        self.code = code
        self.message = message
        self.path = path
    }

    public var description: String {
        if let path { return "\(code.rawValue) at \(path): \(message)" }
        return "\(code.rawValue): \(message)"
    }

    /// Maps a core validation error to the public one.
    init(_ error: CoreError) {
        switch error {
        case .invalidKey(let key, let reason): self.init(.invalidKey, reason, path: key)
        case .pathTooDeep(let path, _), .invalidPath(let path, _):
            self.init(.invalidPath, error.description, path: path)
        case .invalidValue(let path, let reason): self.init(.invalidValue, reason, path: path)
        case .invalidJSON: self.init(.invalidJSON, error.description)
        case .clockDrift, .clockExhausted, .invalidStamp: self.init(.clockRefused, error.description)
        case .malformedEncoding: self.init(.storage, error.description)
        case .invalidOp(let reason): self.init(.invalidValue, reason)
        case .snapshotNotInstallable: self.init(.sync, error.description)
        }
    }
}
