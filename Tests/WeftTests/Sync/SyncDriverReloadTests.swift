import Testing
import WeftCore
import WeftSync

@_spi(Engine) @testable import Weft

/// ``SyncDriver/updateTokens(_:)``: new tokens and rules reach open sessions without dropping those they
/// still allow.
@Suite(.timeLimit(.minutes(5))) struct SyncDriverReloadTests {
    @Test func aReloadClosesThePeerWhoseTokenWentAndKeepsThePeerWhoseTokenStayed() async throws {
        let logs = LogRecorder()
        let (hub, hubTarget) = try SyncFixture.driver(node: 0, others: [1, 2], logs: logs)
        let (kept, keptTarget) = try SyncFixture.driver(node: 1, others: [0])
        let (revoked, revokedTarget) = try SyncFixture.driver(node: 2, others: [0])
        do {
            let port = try await hub.listen(on: "127.0.0.1", port: 0)
            try await kept.addPeer(host: "127.0.0.1", port: port)
            try await revoked.addPeer(host: "127.0.0.1", port: port)
            try await SyncFixture.wait("both peers to connect") { hub.status.connectedCount == 2 }

            // The same book without node 2's token.
            let report = try await hub.updateTokens(SyncFixture.configuration(node: 0, others: [1]).tokens)
            #expect(report.sessionsClosed == 1)
            try await SyncFixture.wait("the hub to close the revoked peer's session, saying why") {
                logs.contains("the token of replica \(SyncFixture.replica(2)) was removed")
            }
            #expect(logs.contains("tokens and rules reloaded"))
            // The kept peer's session goes on: a write reaches the hub without a new session.
            let sessionsBefore = kept.status.peers.first?.sessionsEstablished
            try keptTarget.write(.set(.string("still here")), at: "/kept")
            try await SyncFixture.wait("the kept peer's write to arrive") {
                try hubTarget.value(at: "/kept") == .string("still here")
            }
            #expect(kept.status.peers.first?.sessionsEstablished == sessionsBefore)
            // The revoked peer dials again and is refused.
            try revokedTarget.write(.set(.string("forged")), at: "/revoked")
            try await SyncFixture.wait("the hub to refuse the revoked peer again") {
                logs.messages.filter { $0.contains("authenticationFailed") }.count >= 2
            }
            #expect(try hubTarget.value(at: "/revoked") == .null)
        } catch {
            for driver in [hub, kept, revoked] { await driver.shutdown() }
            throw error
        }
        for driver in [hub, kept, revoked] { await driver.shutdown() }
    }
}
