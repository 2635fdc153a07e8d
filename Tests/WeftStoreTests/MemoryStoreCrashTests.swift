import Testing
import WeftCore

@testable import WeftStore

/// The disk model of `MemoryStore`.
@Suite struct MemoryStoreCrashTests {
    private let replica = Sample.replica(1)

    private func commitOp(_ store: MemoryStore, sequence: UInt64) throws {
        var batch = Sample.batch([Sample.setOp(origin: 1, sequence: sequence, millis: 10 * sequence)], status: .durable)
        batch.treeWrites = [.init(path: Sample.path("/n"), value: .int(Int64(sequence)))]
        batch.clockTime = 10 * sequence << 16
        try store.commit(batch)
    }

    @Test func aCrashDropsEveryUnsyncedCommitInNormalDurability() throws {
        let store = MemoryStore(replica: replica, durability: .normal)
        try commitOp(store, sequence: 1)
        try store.checkpoint()
        try commitOp(store, sequence: 2)
        try commitOp(store, sequence: 3)
        #expect(store.unsyncedCommitCount == 2)
        #expect(store.crash() == 2)
        #expect(try store.allOps().map(\.op.sequence) == [1])
        #expect(try store.readTree() == Sample.json(#"{"n":1}"#))
        #expect(store.identity.clockTime == 10 << 16)
        // The store works after the restart, and sequence 2 can be written again.
        try commitOp(store, sequence: 2)
        #expect(try store.opCount() == 2)
    }

    @Test func aCrashKeepsAPrefixOfTheUnsyncedCommitsWhenAsked() throws {
        let store = MemoryStore(replica: replica, durability: .normal)
        for sequence in 1...4 as ClosedRange<UInt64> { try commitOp(store, sequence: sequence) }
        #expect(store.crash(keepingUnsyncedCommits: 2) == 2)
        #expect(try store.allOps().map(\.op.sequence) == [1, 2])
        #expect(try store.readTree() == Sample.json(#"{"n":2}"#))
        #expect(store.crash() == 0)
        #expect(try store.opCount() == 2)
    }

    @Test func everyCommitSyncedAtAnyEarlierCheckpointSurvivesACrash() throws {
        // The synced state is built only when a crash needs it: commits synced at several checkpoints,
        // then a crash keeping one unsynced commit, then another crash.
        let store = MemoryStore(replica: replica, durability: .normal)
        for sequence in 1...6 as ClosedRange<UInt64> {
            try commitOp(store, sequence: sequence)
            if sequence % 2 == 0 { try store.checkpoint() }
        }
        try commitOp(store, sequence: 7)
        try commitOp(store, sequence: 8)
        #expect(store.crash(keepingUnsyncedCommits: 1) == 1)
        #expect(try store.allOps().map(\.op.sequence) == Array(1...7))
        #expect(try store.readTree() == Sample.json(#"{"n":7}"#))
        try commitOp(store, sequence: 8)
        #expect(store.crash() == 1)
        #expect(try store.allOps().map(\.op.sequence) == Array(1...7))
        try commitOp(store, sequence: 8)
        try store.checkpoint()
        #expect(store.crash() == 0)
        #expect(try store.allOps().map(\.op.sequence) == Array(1...8))
        #expect(try store.readTree() == Sample.json(#"{"n":8}"#))
    }

    @Test func fullDurabilitySyncsEveryCommit() throws {
        let store = MemoryStore(replica: replica, durability: .full)
        for sequence in 1...3 as ClosedRange<UInt64> { try commitOp(store, sequence: sequence) }
        #expect(store.unsyncedCommitCount == 0)
        #expect(store.crash() == 0)
        #expect(try store.opCount() == 3)
    }

    @Test func closingSyncsAndReopeningKeepsEverything() throws {
        let store = MemoryStore(replica: replica)
        try commitOp(store, sequence: 1)
        try store.close()
        #expect(throws: StoreError.closed(path: "memory")) { try store.opCount() }
        store.crash()
        #expect(try store.opCount() == 1)
    }

    @Test func tooManyUnsyncedCommitsSyncOnTheirOwn() throws {
        let store = MemoryStore(replica: replica)
        for sequence in 1...UInt64(StoreLimits.memoryUnsyncedCommitsMax) { try commitOp(store, sequence: sequence) }
        #expect(store.unsyncedCommitCount == 0)
        store.crash()
        #expect(try store.opCount() == StoreLimits.memoryUnsyncedCommitsMax)
    }

    @Test func aFullSimulatedDiskRefusesTheCommitAndKeepsTheRest() throws {
        let store = MemoryStore(replica: replica, bytesMax: 4_000)
        let big = Value.string(String(repeating: "y", count: 1_000))
        var sequence: UInt64 = 0
        var refused: StoreError?
        while refused == nil, sequence < 100 {
            sequence += 1
            do {
                try store.commit(
                    Sample.batch([Sample.setOp(origin: 1, sequence: sequence, millis: sequence, value: big)]))
            } catch let error as StoreError {
                refused = error
            }
        }
        #expect(refused == .diskFull(path: "memory", operation: "committing a batch"))
        #expect(try store.opCount() == Int(sequence) - 1)
        #expect(try store.bytesOnDisk() <= 4_000)
        // Compaction frees room.
        var compact = StoreBatch()
        compact.frontier = Sample.stamp(sequence, 1)
        try store.commit(compact)
        try store.commit(
            Sample.batch([Sample.setOp(origin: 1, sequence: sequence + 1, millis: sequence + 1, value: big)]))
    }

    @Test func theSizeModelFollowsTheTree() throws {
        let store = MemoryStore(replica: replica)
        #expect(try store.bytesOnDisk() == 0)
        try store.commit(Sample.treeBatch([("/a", .int(1))]))
        let one = try store.bytesOnDisk()
        #expect(one > 0)
        try store.commit(Sample.treeBatch([("/a/b", .int(1))]))
        #expect(try store.bytesOnDisk() > one)
        try store.commit(Sample.treeBatch([("/", .null)]))
        #expect(try store.bytesOnDisk() == 0)
    }
}
