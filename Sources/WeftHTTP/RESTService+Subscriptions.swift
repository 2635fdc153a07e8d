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
    /// `{"path": "/inbox", "deviceToken": "…"}`. Seed 001's bulk requests: `DELETE` with
    /// `{"all": "webhooks"}` (or `"notifications"`) removes every one of that kind, and `PATCH` with
    /// `{"deviceToken": OLD, "newDeviceToken": NEW}` moves every notification one to the new device.
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
        guard method == .post || method == .delete || method == .patch else {
            throw HTTPFailure(status: 405, "\(Self.subscriptionsRoute) answers GET, POST, PATCH and DELETE")
        }
        let body = try await Self.body(of: request)
        if let bulk = try Self.bulkRequest(body, method: method) {
            let count = try mapped { () throws -> Int in
                switch bulk {
                case .removeAll(let webhooks): try book.unsubscribeAll(client: client.name, webhooks: webhooks)
                case .moveDevice(let old, let new): try book.updateDeviceToken(client: client.name, from: old, to: new)
                }
            }
            let field = if case .removeAll = bulk { "removed" } else { "updated" }
            return Self.rawJSON(#"{"\#(field)":\#(count)}"#, pretty: false, silent: false)
        }
        let (path, target, includesValue) = try Self.subscriptionRequest(body)
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

    /// A bulk request of seed 001 (see ``subscriptions(_:method:client:)``).
    enum BulkRequest {
        case removeAll(webhooks: Bool)
        case moveDevice(from: String, to: String)
    }

    /// The bulk request `body` makes: nil for a `DELETE` without `all` (it removes one subscription).
    static func bulkRequest(_ body: [UInt8], method: HTTPRequest.Method) throws(HTTPFailure) -> BulkRequest? {
        guard method == .patch || method == .delete else { return nil }
        let fields: [Key: Value]
        do {
            guard case .object(let object) = try Value(json: String(decoding: body, as: UTF8.self)) else {
                throw HTTPFailure.badRequest("Invalid data; the body is a JSON object")
            }
            fields = object
        } catch let failure as HTTPFailure {
            throw failure
        } catch {
            throw HTTPFailure.badRequest("Invalid data; the body is not JSON: \(error)")
        }
        if method == .delete {
            switch fields["all"] {
            case nil: return nil
            case .string("webhooks")? where fields.count == 1: return .removeAll(webhooks: true)
            case .string("notifications")? where fields.count == 1: return .removeAll(webhooks: false)
            default: throw HTTPFailure.badRequest(#"Invalid data; give {"all": "webhooks"} or {"all": "notifications"}"#)
            }
        }
        guard fields.count == 2, case .string(let old)? = fields["deviceToken"],
            case .string(let new)? = fields["newDeviceToken"]
        else {
            throw HTTPFailure.badRequest(#"Invalid data; give {"deviceToken": OLD, "newDeviceToken": NEW}"#)
        }
        return .moveDevice(from: old, to: new)
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
