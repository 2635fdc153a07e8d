import ArgumentParser
import Weft
import WeftCore
import WeftSync

/// `weft subscribe`: a client's webhook and notification subscriptions on the daemon.
struct SubscribeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "subscribe",
        abstract: "Subscribe a node through a webhook or notifications (or --remove it, or --list yours).",
        discussion: """
            --remove-all webhooks|notifications removes every subscription of yours of that kind, and
            --device-token OLD --new-device-token NEW moves every notification subscription of yours to
            the new device, each printing how many.
            """)
    @OptionGroup var options: ClientOptions
    @Argument(help: "The node, e.g. /orders (not with --list).") var path: String?
    @Option(help: "The identifier of a webhook of the daemon's --webhooks file.") var webhook: String?
    @Option(help: "The context string passed back in each delivery (with --webhook).") var context: String?
    @Option(help: "A device token: notify it through the daemon's push gateway.") var deviceToken: String?
    @Flag(help: "Deliveries only say that the node changed, without its value.") var noValue = false
    @Flag(help: "Remove the subscription instead.") var remove = false
    @Flag(help: "Print this client's subscriptions and how their deliveries stand.") var list = false
    @Option(help: "Remove every subscription of yours through webhooks or through notifications.")
    var removeAll: Kind?
    @Option(help: "With --device-token OLD: move every notification subscription of yours to this device.")
    var newDeviceToken: String?

    /// What `--remove-all` removes.
    enum Kind: String, ExpressibleByArgument, CaseIterable {
        case webhooks, notifications
    }

    func validate() throws {
        if let removeAll {
            guard path == nil, webhook == nil, context == nil, deviceToken == nil, newDeviceToken == nil, !list, !remove
            else { throw ValidationError("--remove-all \(removeAll.rawValue) takes nothing else") }
            return
        }
        if newDeviceToken != nil {
            guard path == nil, webhook == nil, context == nil, deviceToken != nil, !list, !remove, !noValue else {
                throw ValidationError("--new-device-token NEW takes --device-token OLD and nothing else")
            }
            return
        }
        if list {
            guard path == nil, webhook == nil, deviceToken == nil, !remove else {
                throw ValidationError("--list takes no path, target or --remove")
            }
            return
        }
        guard path != nil else { throw ValidationError("give the node to subscribe, e.g. /orders") }
        switch (webhook, context, deviceToken) {
        case (.some, .some, nil), (nil, nil, .some): break
        default: throw ValidationError("give --webhook ID --context TEXT, or --device-token TOKEN")
        }
    }

    func run() async throws {
        let input = { () throws -> ClientCommand in
            if let removeAll { return .subscribe(.unsubscribeAll(webhooks: removeAll == .webhooks)) }
            if let newDeviceToken, let deviceToken {
                return .subscribe(.updateDeviceToken(from: deviceToken, to: newDeviceToken))
            }
            guard !list, let path else { return .subscriptions }
            let target: SubscriptionTarget =
                if let webhook, let context { .webhook(identifier: webhook, context: context) } else {
                    .notifications(deviceToken: deviceToken ?? "")
                }
            return .subscribe(
                SubscriptionRequest(
                    action: remove ? .unsubscribe : .subscribe, path: try ClientInput.path(path), target: target,
                    includesValue: !noValue))
        }
        await runClient(options, input: input) { client, command in
            let reply = try await client.request(command)
            if case .subscribe(let request) = command, case .int(let count) = reply {
                let field: Key = request.action == .unsubscribeAll ? "removed" : "updated"
                try ClientInput.printJSON(.object([field: .int(count)]))
            } else if case .subscribe = command, case .string(let id) = reply {
                try ClientInput.printJSON(.object(["id": .string(id)]))
            } else {
                try ClientInput.printJSON(reply)
            }
        }
    }
}
