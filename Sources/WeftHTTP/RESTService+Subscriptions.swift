import Foundation
import Hummingbird
import Weft
import WeftCore
import WeftSync

// `/.subscriptions.json`: a client's webhook and notification subscriptions over HTTP. A key cannot
// begin with `.`, so the route never shadows a node of the tree.

extension RESTService {
    static let subscriptionsRoute = "/.subscriptions.json"

    /// `GET` lists the client's subscriptions; `POST` adds or replaces one; `DELETE` removes one. The
    /// `POST` and `DELETE` bodies name the node and the target:
    /// `{"path": "/orders", "webhook": "fulfilment", "context": "shop-42", "includesValue": true}` or
    /// `{"path": "/inbox", "deviceToken": "…"}`.
    func subscriptions(_ request: Request, method: HTTPRequest.Method, client: HTTPClient) async throws -> Response {
        let book = replica.subscriptions
        if method == .get {
            var listed: [Key: Value] = [:]
            for subscription in try mapped({ try book.all() }) where subscription.client == client.name {
                guard let key = try? Key(validating: subscription.id) else { continue }
                listed[key] = subscription.statusValue
            }
            return Self.json(.object(listed), pretty: false, silent: false, etag: nil)
        }
        guard method == .post || method == .delete else {
            throw HTTPFailure(status: 405, "\(Self.subscriptionsRoute) answers GET, POST and DELETE")
        }
        let (path, target, includesValue) = try Self.subscriptionRequest(try await Self.body(of: request))
        try client.check(.read, at: path)
        if method == .delete {
            _ = try mapped { try book.unsubscribe(path: path, client: client.name, target: target) }
            let id = target.subscriptionID(path: path, client: client.name)
            return Self.rawJSON(#"{"id":\#(Value.string(id).jsonString())}"#, pretty: false, silent: false)
        }
        let subscription = try mapped {
            let vector = replica.versionVector
            return try book.subscribe(
                path: path, client: client.name, target: target,
                descriptor: DataSubscriptionDescriptor(includesValue: includesValue), current: replica.value(at: path),
                vector: vector)
        }
        return Self.rawJSON(#"{"id":\#(Value.string(subscription.id).jsonString())}"#, pretty: false, silent: false)
    }

    private func mapped<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as WeftError {
            throw error.code == .storage ? HTTPFailure(status: 500, error.message) : HTTPFailure.badRequest(error.message)
        }
    }

    static func subscriptionRequest(_ body: [UInt8]) throws(HTTPFailure) -> (Path, SubscriptionTarget, Bool) {
        let value: Value
        do {
            value = try Value(json: String(decoding: body, as: UTF8.self))
        } catch {
            throw HTTPFailure.badRequest("Invalid data; the body is not JSON: \(error)")
        }
        guard case .object(let fields) = value, case .string(let pathText)? = fields["path"] else {
            throw HTTPFailure.badRequest(#"Invalid data; the body is {"path": …, "webhook": …, "context": …} or {"path": …, "deviceToken": …}"#)
        }
        let path: Path
        do {
            path = try Path(pathText)
        } catch {
            throw HTTPFailure.badRequest("Invalid path: \(pathText): \(error)")
        }
        let target: SubscriptionTarget
        switch (fields["webhook"], fields["context"], fields["deviceToken"]) {
        case (.string(let identifier)?, .string(let context)?, nil):
            target = .webhook(identifier: identifier, context: context)
        case (nil, nil, .string(let device)?):
            target = .notifications(deviceToken: device)
        default:
            throw HTTPFailure.badRequest("Invalid data; give webhook and context (strings), or deviceToken alone")
        }
        do {
            _ = try target.validated()
        } catch {
            throw HTTPFailure.badRequest("Invalid data; \(error.message)")
        }
        let includesValue: Bool
        switch fields["includesValue"] {
        case nil: includesValue = true
        case .bool(let flag)?: includesValue = flag
        default: throw HTTPFailure.badRequest("Invalid data; includesValue is true or false")
        }
        return (path, target, includesValue)
    }
}
