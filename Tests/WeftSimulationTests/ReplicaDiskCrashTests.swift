import Foundation
import Testing
import WeftTestSupport
import WeftCore
import WeftStore
@testable import WeftSimulation

@Suite struct ReplicaDiskCrashTests {
    static let id = ReplicaID(rawValue: 0xA1)!

    static func ops(_ count: Int) -> [Op] {
        (1...count).map { index in
            .make(
                .set(.int(Int64(index))), at: (try? Path("/c/k\(index)")) ?? .root, origin: id,
                millis: 1_000 + UInt64(index), sequence: UInt64(index))
        }
    }

    /// Commits ops one per commit, with the tree change each makes.
    static func commitOneByOne(_ ops: [Op], to disk: any ReplicaDisk) throws {
        for op in ops {
            guard case .set(let value) = op.kind else { continue }
            try disk.commit(
                [op], encodings: nil, changes: [Change(path: op.path, old: .null, new: value)], clockTime: op.stamp.time
            )
        }
    }

    static func disks() throws -> [(String, any ReplicaDisk)] {
        [
            ("simulated", SimulatedDisk()),
            ("memory store", StoreDisk(memoryFor: id, durability: .normal, name: "test")),
        ]
    }

    @Test func aCrashKeepsTheSyncedCommitsAndAPrefixOfTheOthers() throws {
        for (name, disk) in try Self.disks() {
            let ops = Self.ops(6)
            try Self.commitOneByOne(Array(ops[..<2]), to: disk)
            try disk.sync()
            try Self.commitOneByOne(Array(ops[2...]), to: disk)
            #expect(disk.unsyncedCommitCount == 4, "\(name)")
            #expect(disk.crash(keepingUnsyncedCommits: 1) == 3, "\(name)")
            let recovered = try disk.recover()
            #expect(recovered.ops == Array(ops[..<3]), "\(name)")
            #expect(recovered.clockTime == ops[2].stamp.time, "\(name)")
            if disk.storesTree {
                #expect(recovered.tree == ReferenceFold.fold(recovered.ops, registry: FunctionRegistry()).state)
            }
            disk.close()
        }
    }

    @Test func aSQLiteStoreKeepsEveryCommitAcrossACrashOfTheProcess() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "weft-sim-disk-test-\(ProcessInfo.processInfo.processIdentifier)"
        ).path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let disk = try StoreDisk(sqliteAt: folder + "/r0.sqlite", replica: Self.id)
        let ops = Self.ops(5)
        try Self.commitOneByOne(ops, to: disk)
        #expect(disk.unsyncedCommitCount == 0)
        #expect(disk.crash(keepingUnsyncedCommits: 0) == 0)
        let recovered = try disk.recover()
        #expect(recovered.ops == ops)
        #expect(recovered.tree == ReferenceFold.fold(ops, registry: FunctionRegistry()).state)
        disk.close()
    }

    @Test func aReplicaOnAMemoryStoreRecoversWhatItSynced() throws {
        var profile = Scenario.draw(seed: 1, options: ScenarioOptions()).replicas[0]
        profile.syncsEveryCommit = false
        profile.storage = .memoryStore
        let replica = SimulatedReplica(
            index: 0, id: Self.id, profile: profile,
            disk: StoreDisk(memoryFor: Self.id, durability: .normal, name: "r0"), sabotage: nil,
            members: [Self.id], hubs: [])
        let write = WritePlan.Write(
            index: 0, tick: 0, writer: 0, path: try Path("/counters/c0"), kind: .increment(by: .int(2), from: .int(0)))
        for tick in 0..<4 { _ = try replica.write(write, now: UInt64(tick)) }
        #expect(try replica.sync())
        for tick in 4..<7 { _ = try replica.write(write, now: UInt64(tick)) }
        #expect(replica.durable.vector[Self.id] == 4)
        let lost = replica.crash(keepingUnsyncedCommits: 1)
        #expect(lost.map(\.sequence) == [6, 7])
        #expect(replica.durable.vector[Self.id] == 5)
        let recovered = try replica.restart()
        #expect(recovered.ops.count == 5)
        #expect(replica.engine.state.value(at: try Path("/counters/c0")) == .int(10))
        let (next, _, _) = try replica.write(write, now: 8)
        #expect(next.sequence == 6, "the sequences of the lost ops are used again")
        #expect(next.stamp > recovered.ops.last!.stamp)
    }
}
