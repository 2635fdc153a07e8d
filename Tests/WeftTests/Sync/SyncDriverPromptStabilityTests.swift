import Foundation
import Logging
import Testing
import WeftCore
import WeftSync

@_spi(Engine) @testable import Weft

/// A leaf's write becomes stable in a few round trips in a hub and two leaves: each replica acks as soon
/// as its durable log moves, not at the keep-alive tick (here a minute, far beyond the test's wait).
/// The bound is in rounds, not wall time: a leaf's write to `.stable` takes at most a few times its write
/// to `.acknowledged` (one round to the hub and back, with the commits on the way), measured in the same
/// run. `weft bench sync` measures the speed itself.
@Suite(.timeLimit(.minutes(5))) struct SyncDriverPromptStabilityTests {
    static let token = try! AuthToken(string: "prompt stability tests shared secret")
    /// Stability takes about two rounds to the hub (the other leaf's copy, then the hub's announcement).
    static let roundsMax = 6.0
    static let writes = 25

    static func driver(_ replica: Replica, role: SyncRole, others: [Replica]) throws -> SyncDriver {
        var book = TokenBook()
        for other in others { book.set(token, for: other.replicaID.description) }
        var configuration = SyncConfiguration(replica: replica.replicaID, role: role, tokens: book)
        configuration.pingIntervalMilliseconds = 60_000
        configuration.idleTimeoutMilliseconds = 120_000
        var logger = Logger(label: "weft.sync.test.stability")
        logger.logLevel = .critical
        return try SyncDriver(replica: replica, configuration: configuration, logger: logger)
    }

    private static func median(_ samples: [Duration]) -> Duration { samples.sorted()[samples.count / 2] }

    @Test func aLeafWriteIsStableWithinAFewRoundsNotAtTheKeepAlive() async throws {
        let fixtures = try (0..<3).map { index in
            try ReplicaFixture(.sqlite, seed: 300 + UInt64(index)) { options in
                options.wallClockMillis = ReplicaOptions.systemClockMillis
            }
        }
        let (hub, writer, other) = (fixtures[0].replica, fixtures[1].replica, fixtures[2].replica)
        let drivers = [
            try Self.driver(hub, role: .hub, others: [writer, other]),
            try Self.driver(writer, role: .peer, others: [hub]),
            try Self.driver(other, role: .peer, others: [hub]),
        ]
        var toAcknowledged: [Duration] = []
        var toStable: [Duration] = []
        do {
            let port = try await drivers[0].listen(on: "127.0.0.1", port: 0)
            try await drivers[1].addPeer(host: "127.0.0.1", port: port)
            try await drivers[2].addPeer(host: "127.0.0.1", port: port)
            // Each leaf writes once first, so the hub knows both as members before the writes measured.
            for leaf in [other, writer] {
                let first = try leaf.submit(path: Sample.path("/first/\(leaf.replicaID)"), kind: .set(.int(1)))
                #expect(try await first.wait(for: .stable, timeout: .seconds(20)) == .stable)
            }
            for index in 0..<Self.writes {
                let start = ContinuousClock.now
                let receipt = try writer.submit(path: Sample.path("/leaf/\(index)"), kind: .set(.int(Int64(index))))
                let acknowledged = try await receipt.wait(for: .acknowledged, timeout: .seconds(20))
                let acknowledgedAt = ContinuousClock.now
                let stable = try await receipt.wait(for: .stable, timeout: .seconds(20))
                #expect(acknowledged != nil && stable == .stable, "write \(index) did not become stable in 20 s")
                toAcknowledged.append(start.duration(to: acknowledgedAt))
                toStable.append(start.duration(to: .now))
            }
        } catch {
            for driver in drivers { await driver.shutdown() }
            for fixture in fixtures { await fixture.finish() }
            throw error
        }
        for driver in drivers { await driver.shutdown() }
        for fixture in fixtures { await fixture.finish() }
        let rounds = Self.median(toStable) / Self.median(toAcknowledged)
        #expect(rounds <= Self.roundsMax, "a leaf write took \(rounds) rounds to become stable")
    }
}
