import Testing
import WeftCore
@testable import WeftSync

/// The binary protocol's subscription requests, including seed 001's bulk ones, through the codec.
@Suite struct SubscriptionRequestCodecTests {
    static func roundTrip(_ request: SubscriptionRequest) throws -> SubscriptionRequest? {
        let message = Message.request(ClientRequest(id: 7, command: .subscribe(request)))
        guard case .request(let decoded) = try decodeAll(MessageCodec.encode(message)).first,
            case .subscribe(let back) = decoded.command
        else { return nil }
        return back
    }

    @Test("subscribe, unsubscribe, unsubscribe-all and device-token updates decode as they were sent")
    func eachActionRoundTrips() throws {
        let requests = [
            SubscriptionRequest(
                action: .subscribe, path: try Path("/orders"), target: .webhook(identifier: "hook", context: "c"),
                includesValue: false),
            SubscriptionRequest(action: .unsubscribe, path: try Path("/inbox"), target: .notifications(deviceToken: "d")),
            .unsubscribeAll(webhooks: true),
            .unsubscribeAll(webhooks: false),
            .updateDeviceToken(from: "old-device", to: "new-device"),
        ]
        for request in requests { #expect(try Self.roundTrip(request) == request) }
        #expect(try Self.roundTrip(.updateDeviceToken(from: "a", to: "b"))?.newDeviceToken == "b")
    }
}
