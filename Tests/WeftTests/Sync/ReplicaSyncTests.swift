#if canImport(Combine)
    import Combine
#else
    import OpenCombine
#endif
import Foundation
import Logging
import Testing
import WeftCore

@_spi(Engine) @testable import Weft

/// Embedded sync: `listen(on:token:)`, `connect(to:token:)`, the sync status, and shutdown, with two
/// in-process replicas over 127.0.0.1 on a port the system chooses.
@Suite(.timeLimit(.minutes(5)), .serialized) struct ReplicaSyncTests {
    private static let secret = "a long secret shared by both replicas"

    /// Collects what a status sequence yields, until it ends.
    private static func collect(_ updates: AsyncStream<SyncDriverStatus>) -> Task<[SyncDriverStatus], Never> {
        Task {
            var seen: [SyncDriverStatus] = []
            for await status in updates { seen.append(status) }
            return seen
        }
    }

    @Test func twoReplicasSyncBothWaysShowTheirPeerAndShutdownClosesIt() async throws {
        let hub = try Replica.inMemory()
        let phone = try Replica.inMemory()
        let updates = Self.collect(phone.syncStatusUpdates())
        #expect(phone.syncStatus.peers.isEmpty)

        let port = try await hub.listen(on: "127.0.0.1:0", token: Self.secret)
        #expect(port > 0)
        #expect(hub.syncStatus.listeningAddress == "127.0.0.1:\(port)")
        try await phone.connect(to: "127.0.0.1:\(port)", token: Self.secret)

        try phone.submit(path: Sample.path("/greeting"), kind: .set(.string("hello")))
        try await SyncFixture.wait("the phone's write on the hub") {
            hub.value(at: Sample.path("/greeting")) == .string("hello")
        }
        try hub.submit(path: Sample.path("/reply"), kind: .set(.int(42)))
        try await SyncFixture.wait("the hub's write on the phone") {
            phone.value(at: Sample.path("/reply")) == .int(42)
        }

        try await SyncFixture.wait("both statuses connected and caught up") {
            phone.syncStatus.peers.first?.opsBehind == 0 && hub.syncStatus.peers.first?.opsBehind == 0
                && phone.syncStatus.connectedCount == 1 && hub.syncStatus.connectedCount == 1
        }
        let peer = try #require(phone.syncStatus.peers.first)
        #expect(peer.address == "127.0.0.1:\(port)")
        #expect(peer.direction == .outbound)
        #expect(peer.replica == hub.replicaID)
        #expect(peer.lastError == nil)
        let inbound = try #require(hub.syncStatus.peers.first)
        #expect(inbound.direction == .inbound)
        #expect(inbound.replica == phone.replicaID)
        #expect(hub.digest == phone.digest)

        await phone.shutdown()
        let seen = await updates.value
        #expect(seen.contains { $0.connectedCount == 1 }, "the sequence showed the connection")
        #expect(seen.last?.connectedCount == 0, "and ended with it closed")
        #expect(phone.syncStatus.connectedCount == 0)
        try await SyncFixture.wait("the hub to see the phone leave") { hub.syncStatus.connectedCount == 0 }
        await #expect(throws: WeftError.self) { try await phone.connect(to: "127.0.0.1:\(port)", token: Self.secret) }
        await hub.shutdown()
        #expect(hub.syncStatus.listeningAddress == nil)
    }

    /// The Combine form of the status: the status now, each change, and completion at shutdown.
    @Test func theStatusPublisherShowsTheConnectionAndFinishesAtShutdown() async throws {
        let hub = try Replica.inMemory()
        let phone = try Replica.inMemory()
        let seen = StatusLog()
        let cancellable = phone.syncStatusPublisher().sink(
            receiveCompletion: { _ in seen.finish() }, receiveValue: { seen.add($0) })
        try await SyncFixture.wait("the status now, on the replica's callback queue") { seen.statuses.count == 1 }
        let port = try await hub.listen(on: "127.0.0.1:0", token: Self.secret)
        try await phone.connect(to: "127.0.0.1:\(port)", token: Self.secret)
        try await SyncFixture.wait("the publisher to show the connection") {
            seen.statuses.contains { $0.connectedCount == 1 }
        }
        await phone.shutdown()
        try await SyncFixture.wait("the completion") { seen.isFinished }
        #expect(seen.statuses.last?.connectedCount == 0, "it ended with the connection closed")
        let lateSeen = StatusLog()
        let late = phone.syncStatusPublisher().sink(
            receiveCompletion: { _ in lateSeen.finish() }, receiveValue: { lateSeen.add($0) })
        try await SyncFixture.wait("a subscriber after shutdown gets the completion") { lateSeen.isFinished }
        late.cancel()
        cancellable.cancel()
        await hub.shutdown()
    }

    /// A second `shutdown()` made while the first one is stopping sync waits for sync to stop too: it
    /// returned at once, with the session still open and the status still connected. The first
    /// shutdown is held on the loop thread by a log handler that blocks there.
    @Test func aSecondShutdownWaitsUntilTheFirstStoppedSync() async throws {
        let hub = try Replica.inMemory()
        let phone = try Replica.inMemory()
        let gate = LoopGate()
        var options = ReplicaSyncOptions()
        options.logger = Logger(label: "weft.sync.test") { _ in GateHandler(gate: gate) }
        try phone.configureSync(options)
        let port = try await hub.listen(on: "127.0.0.1:0", token: Self.secret)
        try await phone.connect(to: "127.0.0.1:\(port)", token: Self.secret)
        try await SyncFixture.wait("connected") { phone.syncStatus.connectedCount == 1 }

        gate.arm()
        let first = Task { await phone.shutdown() }
        try await SyncFixture.wait("the first shutdown to hold the loop") { gate.isHolding }
        let second = Task {
            await phone.shutdown()
            return (gate.wasReleased, phone.syncStatus.connectedCount)
        }
        try await Task.sleep(for: .milliseconds(300))
        gate.release()
        let (released, connected) = await second.value
        await first.value
        #expect(released, "the second shutdown returned while sync was still stopping")
        #expect(connected == 0)
        await hub.shutdown()
    }

    /// Holds the thread that logs once armed, until released (at most 10 s).
    final class LoopGate: @unchecked Sendable {
        private let lock = NSLock()
        private var armed = false
        private var holding = false
        private var released = false
        private let semaphore = DispatchSemaphore(value: 0)

        func arm() { lock.withLock { armed = true } }

        func holdIfArmed() {
            let hold = lock.withLock {
                guard armed, !holding else { return false }
                holding = true
                return true
            }
            if hold { _ = semaphore.wait(timeout: .now() + 10) }
        }

        func release() {
            lock.withLock { released = true }
            semaphore.signal()
        }

        var isHolding: Bool { lock.withLock { holding } }
        var wasReleased: Bool { lock.withLock { released } }
    }

    /// A log handler that holds the logging thread at the first line once its gate is armed.
    struct GateHandler: LogHandler {
        let gate: LoopGate
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) { gate.holdIfArmed() }
    }

    /// What a status publisher delivered, from any thread.
    final class StatusLog: @unchecked Sendable {
        private let lock = NSLock()
        private var seen: [SyncDriverStatus] = []
        private var finished = false

        func add(_ status: SyncDriverStatus) { lock.withLock { seen.append(status) } }
        func finish() { lock.withLock { finished = true } }
        var statuses: [SyncDriverStatus] { lock.withLock { seen } }
        var isFinished: Bool { lock.withLock { finished } }
    }

    @Test func aWrongTokenNeverConnectsAndTheStatusSaysWhy() async throws {
        let hub = try Replica.inMemory()
        let phone = try Replica.inMemory()
        var quiet = ReplicaSyncOptions()
        quiet.logger = Logger(label: "weft.sync.test", factory: SwiftLogNoOpLogHandler.init)
        try hub.configureSync(quiet)
        try phone.configureSync(quiet)
        let port = try await hub.listen(on: "127.0.0.1:0", token: Self.secret)
        try await phone.connect(to: "127.0.0.1:\(port)", token: "another secret of enough length")
        try await SyncFixture.wait("the refusal in the phone's status") {
            phone.syncStatus.peers.first?.lastError != nil
        }
        #expect(phone.syncStatus.connectedCount == 0)
        #expect(hub.syncStatus.connectedCount == 0)
        await phone.shutdown()
        await hub.shutdown()
    }

    @Test func badAddressesTokensAndLateConfigurationAreTypedErrors() async throws {
        let replica = try Replica.inMemory()
        for address in ["127.0.0.1", ":7700", "127.0.0.1:70000", "127.0.0.1:port"] {
            let error = await #expect(throws: WeftError.self) { try await replica.listen(on: address) }
            #expect(error?.code == .sync, "\(address)")
        }
        let zero = await #expect(throws: WeftError.self) {
            try await replica.connect(to: "127.0.0.1:0", token: Self.secret)
        }
        #expect(zero?.code == .sync)
        let short = await #expect(throws: WeftError.self) {
            try await replica.connect(to: "127.0.0.1:1", token: "short")
        }
        #expect(short?.code == .sync)

        var options = ReplicaSyncOptions()
        options.tokens = ["north": "too short"]
        try replica.configureSync(options)
        let filed = await #expect(throws: WeftError.self) { try await replica.listen(on: "127.0.0.1:0") }
        #expect(filed?.code == .sync)
        options.tokens = ["north": Self.secret]
        try replica.configureSync(options)
        try await replica.listen(on: "127.0.0.1:0")
        let bracketed = try _SyncAddress.parse("[::1]:7700", ports: 1...65_535)
        #expect(bracketed.host == "::1" && bracketed.port == 7700)
        #expect(throws: WeftError.self) { try replica.configureSync(ReplicaSyncOptions()) }
        let again = await #expect(throws: WeftError.self) { try await replica.listen(on: "127.0.0.1:0") }
        #expect(again?.code == .sync)
        await replica.shutdown()
        let late = await #expect(throws: WeftError.self) { try await replica.listen(on: "127.0.0.1:0") }
        #expect(late?.code == .shutDown)
    }
}
