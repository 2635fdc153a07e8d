import WeftCore
import WeftSync

// The `subscribe` and `subscriptions` client requests: answered by the driver, which knows the client's
// name (the subscription is that client's), from the replica's subscription book.

extension SyncDriver {
    /// The name a client's subscriptions are filed under: the name its token is filed under.
    static func clientName(_ hello: Hello?) -> String {
        guard let hello else { return "" }
        return hello.name.isEmpty ? hello.replica.description : hello.name
    }

    /// The answer to a subscription request, or nil for any other request.
    func answerSubscription(_ command: ClientCommand, client: String) -> ClientResult? {
        switch command {
        case .subscribe, .subscriptions: break
        default: return nil
        }
        guard let replica = target as? Replica else {
            return .failed(SyncError(.requestFailed, "this daemon keeps no subscriptions"))
        }
        let book = replica.subscriptions
        do {
            if case .subscribe(let request) = command {
                switch request.action {
                case .subscribe:
                    let vector = replica.versionVector
                    let subscription = try book.subscribe(
                        path: request.path, client: client, target: request.target,
                        descriptor: DataSubscriptionDescriptor(includesValue: request.includesValue),
                        current: replica.value(at: request.path), vector: vector)
                    return .ok(.string(subscription.id))
                case .unsubscribe:
                    try book.unsubscribe(path: request.path, client: client, target: request.target)
                    return .ok(.string(request.target.subscriptionID(path: request.path, client: client)))
                case .unsubscribeAll:
                    let webhooks = if case .webhook = request.target { true } else { false }
                    return .ok(.int(Int64(try book.unsubscribeAll(client: client, webhooks: webhooks))))
                case .updateDeviceToken:
                    guard case .notifications(let old) = request.target else {
                        return .failed(SyncError(.requestFailed, "a device token update names the old device token"))
                    }
                    let moved = try book.updateDeviceToken(client: client, from: old, to: request.newDeviceToken)
                    return .ok(.int(Int64(moved)))
                }
            }
            var listed: [Key: Value] = [:]
            for subscription in try book.all() where subscription.client == client {
                guard let key = try? Key(validating: subscription.id) else { continue }
                listed[key] = subscription.statusValue
            }
            // The wire has no empty object (a value's empty object is null): none is null.
            return .ok(listed.isEmpty ? .null : .object(listed))
        } catch let error as WeftError {
            return .failed(SyncError(.requestFailed, error.message))
        } catch {
            return .failed(SyncError(.requestFailed, "\(error)"))
        }
    }
}
