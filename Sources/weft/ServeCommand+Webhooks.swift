import Foundation
import Logging
import Weft
import WeftHTTP

extension ServeCommand {
    /// Reads `--webhooks` and starts delivering the replica's subscriptions through them; without the
    /// option no webhook is declared, so every subscription request is refused (nothing would deliver it).
    func startWebhooks(_ replica: Replica, access: HTTPAccess, logger: Logger) throws -> WebhookDeliverer? {
        guard let webhooks else {
            replica.subscriptions.declareWebhooks([])
            return nil
        }
        let text: String
        do {
            text = try String(contentsOfFile: webhooks, encoding: .utf8)
        } catch {
            throw WeftError(.invalidValue, "cannot read the --webhooks file \(webhooks): \(error.localizedDescription)")
        }
        let endpoints = try WebhookFile.parse(text)
        let deliverer = WebhookDeliverer(
            replica: replica, endpoints: endpoints, access: access, logger: logger,
            policy: WebhookRetryPolicy(baseMillis: webhookRetryBase))
        deliverer.start()
        logger.info("delivering subscriptions", metadata: ["webhooks": "\(endpoints.map(\.identifier))"])
        return deliverer
    }
}
