import Foundation
import Testing
import WeftCore

@_spi(Engine) @testable import Weft

/// `runTransaction` with its defaults on replicas that sync: `.committed` only once the outcome can no
/// longer change (the write is stable), so two racers for the last units are never both told they won,
/// and a reservation reported committed is never rejected later, even when a third replica that sold
/// units offline comes back.
@Suite(.timeLimit(.minutes(5)), .serialized) struct DataNodeTransactionFinalityTests {
    private static let secret = "a long secret shared by the whole group"
    private static let waitLimit = Duration.seconds(20)

    /// Takes `units` when at least that many are left.
    private static func take(_ units: Int64) -> (Value) -> TransactionOperation {
        { current in
            guard let left = current.intValue, left >= units else { return .abort }
            return .set(.int(left - units))
        }
    }

    private static func node(_ replica: Replica, _ path: String) throws -> DataNode {
        try #require(replica.root.relativeNode(for: path))
    }

    @Test func twoReplicasRacingForTheLastUnitsAreNeverBothToldTheyCommitted() async throws {
        let shop = try Replica.inMemory()
        let till = try Replica.inMemory()
        let port = try await shop.listen(on: "127.0.0.1:0", token: Self.secret)
        try await till.connect(to: "127.0.0.1:\(port)", token: Self.secret, waitUntilConnected: Self.waitLimit)
        let rounds = 200
        let concurrentRounds = 10
        var committedTotal = 0
        for group in 0..<(rounds / concurrentRounds) {
            let indices = (0..<concurrentRounds).map { group * concurrentRounds + $0 }
            for index in indices { try await Self.node(shop, "race/\(index)").set(3) }
            try await shop.waitUntilSynced(timeout: Self.waitLimit)
            let results = try await withThrowingTaskGroup(of: (TransactionResult, TransactionResult).self) { tasks in
                for index in indices {
                    let (left, right) = (try Self.node(shop, "race/\(index)"), try Self.node(till, "race/\(index)"))
                    tasks.addTask {
                        async let first = left.runTransaction(Self.take(2))
                        async let second = right.runTransaction(Self.take(2))
                        return try await (first, second)
                    }
                }
                return try await tasks.reduce(into: []) { $0.append($1) }
            }
            for (first, second) in results {
                #expect(first.waitedFor == .stable && second.waitedFor == .stable, "replicas that sync wait for stable")
                #expect(!(first.isCommitted && second.isCommitted), "both racers were told they took the last units")
                #expect([first, second].filter(\.isCommitted).count == 1, "one racer wins")
                #expect(![first.status, second.status].contains(.pending))
                committedTotal += [first, second].filter(\.isCommitted).count
            }
        }
        #expect(committedTotal == rounds)
        try await till.waitUntilSynced(timeout: Self.waitLimit)
        for index in 0..<rounds {
            #expect(try await Self.node(shop, "race/\(index)").value() == .int(1))
            #expect(try await Self.node(till, "race/\(index)").value() == .int(1))
        }
        await till.shutdown()
        await shop.shutdown()
    }

    @Test func aReservationReportedCommittedIsNeverRejectedWhenAPartitionedReplicaRejoins() async throws {
        let folder = NSTemporaryDirectory() + "weft-finality-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let hub = try Replica.inMemory()
        var hubSync = ReplicaSyncOptions()
        hubSync.role = .hub
        try hub.configureSync(hubSync)
        let port = try await hub.listen(on: "127.0.0.1:0", token: Self.secret)
        let address = "127.0.0.1:\(port)"
        let north = try Replica.inMemory()
        let south = try Replica.inMemory()
        for leaf in [north, south] {
            try await leaf.connect(to: address, token: Self.secret, waitUntilConnected: Self.waitLimit)
        }
        let storePath = folder + "/store.sqlite"
        var store = try Replica.open(at: storePath)
        try await store.connect(to: address, token: Self.secret, waitUntilConnected: Self.waitLimit)

        var committed: [WriteReceipt] = []
        var expectedStock: [Int64] = []
        var retriedWinners = 0
        let rounds = 12
        for round in 0..<rounds {
            let path = "stock/\(round)"
            try await Self.node(hub, path).set(5)
            try await hub.waitUntilSynced(timeout: Self.waitLimit)
            // The partition: the store goes offline, and sells one unit there (stamped before the racers').
            await store.shutdown()
            store = try Replica.open(at: storePath)
            try await Self.node(store, path).increment(by: -1)
            async let first = Self.node(north, path).runTransaction(Self.take(3))
            async let second = Self.node(south, path).runTransaction(Self.take(3))
            // The racers cannot be told anything final while a member of the group is away.
            try await Task.sleep(for: .milliseconds(50))
            try await store.connect(to: address, token: Self.secret, waitUntilConnected: Self.waitLimit)
            let results = try await [first, second]
            let winners = results.filter(\.isCommitted)
            #expect(winners.count <= 1, "round \(round): 5 - 1 leaves room for one reservation, not two")
            #expect(!results.contains { $0.status == .pending })
            committed += winners.compactMap(\.receipt)
            // A winner that ran more than once lost its first attempt to a write it had not seen: mostly
            // the store's offline sale, stamped before it and arriving with the store.
            retriedWinners += winners.filter { $0.attempts > 1 }.count
            expectedStock.append(4 - 3 * Int64(winners.count))
        }
        for replica in [hub, north, south, store] { try await replica.waitUntilSynced(timeout: Self.waitLimit) }
        #expect(committed.count >= rounds / 2, "reservations go through once the store is back")
        #expect(retriedWinners > 0, "the offline sale rejected some first attempts: the case under test occurred")
        for receipt in committed {
            #expect(receipt.status == .stable, "a reservation reported committed was later \(receipt.status)")
        }
        for round in 0..<rounds {
            for replica in [hub, north, south, store] {
                #expect(try await Self.node(replica, "stock/\(round)").value() == .int(expectedStock[round]))
            }
        }
        for replica in [store, north, south, hub] { await replica.shutdown() }
    }

    @Test func aReplicaThatNeverSyncedWaitsForDurableAndAnOfflineOneReportsPending() async throws {
        let alone = try Replica.inMemory()
        let local = try await Self.node(alone, "seats").runTransaction { _ in .set(.int(9)) }
        #expect(local.isCommitted)
        #expect(local.waitedFor == .durable)

        // Connected once, then its peer is gone: nothing can become stable.
        let hub = try Replica.inMemory()
        let phone = try Replica.inMemory()
        let port = try await hub.listen(on: "127.0.0.1:0", token: Self.secret)
        try await phone.connect(to: "127.0.0.1:\(port)", token: Self.secret, waitUntilConnected: Self.waitLimit)
        await hub.shutdown()
        let offline = try await Self.node(phone, "seats").runTransaction(timeout: .milliseconds(200)) { _ in
            .set(.int(4))
        }
        #expect(offline.status == .pending)
        #expect(offline.waitedFor == .stable)
        #expect(offline.value == .int(4))
        let receipt = try #require(offline.receipt)
        #expect(receipt.status == .durable || receipt.status == .acknowledged)
        // A caller may still ask for less.
        let quick = try await Self.node(phone, "seats").runTransaction(waitingFor: .durable) { _ in .set(.int(3)) }
        #expect(quick.isCommitted && quick.waitedFor == .durable)
        await phone.shutdown()
        await alone.shutdown()
    }
}
