import Foundation
import Weft
import WeftCore
import WeftSync

/// The token book the HTTP face checks requests against: the one the daemon's sessions use, replaced on
/// SIGHUP through ``update(_:)``, which also tells open event streams to check their access again.
public final class HTTPAccess: @unchecked Sendable {
    private let lock = NSLock()
    private var book: TokenBook
    private var listeners: [UUID: @Sendable () -> Void] = [:]

    /// Access from the daemon's token book.
    public init(_ book: TokenBook) { self.book = book }

    /// Replaces the book; open streams re-check their token and path at once.
    public func update(_ book: TokenBook) {
        let toCall = lock.withLock { () -> [@Sendable () -> Void] in
            self.book = book
            return Array(listeners.values)
        }
        for listener in toCall { listener() }
    }

    /// The client whose secret is `secret`, or nil.
    func client(presenting secret: [UInt8]) -> HTTPClient? {
        let book = lock.withLock { self.book }
        guard let (name, credential) = book.client(presenting: secret) else { return nil }
        return HTTPClient(name: name, credential: credential, rules: book.rules)
    }

    /// Why the client named `client` may not read `path` under the book in force, or nil when it may: the
    /// check a webhook subscription passes before each delivery. The embedded API's subscriptions
    /// (``DataSubscription/localClient``, when no entry bears that name) belong to the daemon itself.
    public func readDenial(client: String, at path: Path) -> String? {
        let book = lock.withLock { self.book }
        guard let credential = book.client(named: client) else {
            if client == DataSubscription.localClient, !book.names.contains(client) { return nil }
            return "\(client) is no longer a client entry of the token file"
        }
        return credential.denial(.read, at: path, rules: book.rules, name: client)?.message
    }

    func addListener(_ id: UUID, _ listener: @escaping @Sendable () -> Void) {
        lock.withLock { listeners[id] = listener }
    }

    func removeListener(_ id: UUID) {
        _ = lock.withLock { listeners.removeValue(forKey: id) }
    }
}

/// An authenticated HTTP client: its token name, credential and the rules in force when it was read.
struct HTTPClient: Sendable {
    let name: String
    let credential: PeerCredential
    let rules: PathRules

    /// Throws 401 unless `access` is granted at `path` (Firebase answers a rules refusal with 401).
    func check(_ access: Grant, at path: Path) throws(HTTPFailure) {
        if let denial = credential.denial(access, at: path, rules: rules, name: name) {
            throw HTTPFailure(status: 401, "Permission denied: \(denial.message)")
        }
    }

    func denial(_ access: Grant, at path: Path) -> SyncError? {
        credential.denial(access, at: path, rules: rules, name: name)
    }
}

/// A refusal in Firebase's shape: a status and `{"error": message}`.
struct HTTPFailure: Error, Sendable {
    let status: Int
    let message: String
    var current: (value: Value, etag: String)?

    init(status: Int, _ message: String) {
        self.status = status
        self.message = message
    }

    static func badRequest(_ message: String) -> HTTPFailure { HTTPFailure(status: 400, message) }
}
