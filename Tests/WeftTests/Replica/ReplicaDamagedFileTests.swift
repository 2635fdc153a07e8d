import Foundation
import Testing
import WeftCore

@_spi(Engine) @testable import Weft

/// A replica's file damaged at random, a few bytes at a time, in place (so that it is not taken for a
/// copy): opening it gives a typed error, or the replica loads, or its load fails with a typed error
/// that every later write and node read repeats. It never crashes, and a write on a replica that loaded becomes
/// durable: no damage may leave a write waiting for ever (one did, before the load checked the
/// replica's own ops for a gap).
@Suite(.timeLimit(.minutes(5))) struct ReplicaDamagedFileTests {
    @Test func aFileDamagedAtRandomOpensLoadsOrFailsWithATypedErrorAndNeverHangsAWrite() async throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("weft.sqlite").path
        let replica = try Replica.open(at: path)
        for index in 0..<300 {
            try await #require(replica.node(for: "/items/i\(index % 50)"))
                .set(json: #"{"name":"item \#(index)","n":\#(index)}"#, waitingFor: .pending)
            try await #require(replica.node(for: "/counters/c\(index % 7)")).increment(by: 1, waitingFor: .pending)
            _ = try await #require(replica.node(for: "/log"))
                .push("entry \(index) " + String(repeating: "x", count: index % 90), waitingFor: .pending)
        }
        await replica.shutdown()
        let original = try Data(contentsOf: URL(fileURLWithPath: path))

        var generator = SeededGenerator(seed: 0xDA_3A6E)
        var outcomes: [String: Int] = [:]
        for round in 0..<150 {
            var damaged = original
            for _ in 0..<generator.int(in: 1...8) {
                // One edit in ten lands in the 100-byte header, the rest anywhere.
                let bound = generator.chance(0.1) ? 100 : damaged.count
                let at = Int(generator.below(UInt64(bound)))
                damaged[at] =
                    generator.chance(0.5)
                    ? UInt8(truncatingIfNeeded: generator.next()) : damaged[at] ^ 1 << UInt8(generator.below(8))
            }
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            try handle.truncate(atOffset: 0)
            try handle.write(contentsOf: damaged)
            try handle.close()
            try? FileManager.default.removeItem(atPath: path + "-wal")
            try? FileManager.default.removeItem(atPath: path + "-shm")

            let reopened: Replica
            do {
                reopened = try Replica.open(at: path)
            } catch let error as WeftError {
                #expect(
                    [.notAWeftDatabase, .newerSchema, .storage].contains(error.code), "round \(round): \(error)")
                outcomes["refused at open", default: 0] += 1
                continue
            }
            do {
                try await reopened.waitUntilLoaded()
                _ = try await reopened.root.value()
                // Waiting for `.durable` would hang on such damage; a flush returns once the write is
                // committed, and its receipt must then say so.
                let receipt = try await #require(reopened.node(for: "/counters/c1")).set(7, waitingFor: .pending)
                try await reopened.flush()
                #expect(receipt.status == .durable, "round \(round): a committed write is not durable")
                outcomes["loaded, and a write became durable", default: 0] += 1
            } catch let error as WeftError {
                #expect(error.code == .storage, "round \(round): \(error)")
                let write = #expect(throws: WeftError.self) {
                    try reopened.submit(path: Sample.path("/a"), kind: .set(.int(1)))
                }
                #expect(write?.code == error.code, "round \(round): a failed load fails every write")
                // Not an empty tree: the app would take the damage for data that vanished.
                let read = await #expect(throws: WeftError.self) { try await reopened.root.value() }
                #expect(read?.code == error.code, "round \(round): a failed load fails every read of a node")
                outcomes["load failed", default: 0] += 1
            }
            await reopened.shutdown()
        }
        // The rounds cover each ending, so that none of the checks above is vacuous.
        #expect(outcomes.count == 3, "\(outcomes)")
        #expect(outcomes.values.allSatisfy { $0 >= 10 }, "\(outcomes)")
    }
}
