import Testing
import WeftTestSupport

@testable import WeftCore

/// The engine's log split by origin: ops found by sequence and by stamp, gaps, compaction, and the
/// refusal of ops that break their origin's order.
@Suite struct OriginLogTests {
    let alice = ReplicaID(rawValue: 0xA11CE)!

    func op(at millis: UInt64, sequence: UInt64) throws -> Op {
        try .make(.set(.int(Int64(millis))), at: "/a", origin: alice, millis: millis, sequence: sequence)
    }

    @Test func opsAreFoundBySequenceAndByStampAcrossGaps() throws {
        var log = OriginLog()
        for sequence: UInt64 in [1, 2, 5, 6, 9] { log.add(try op(at: sequence * 10, sequence: sequence)) }
        #expect(log.contiguous == 2)
        #expect(log.last == 9)
        for sequence: UInt64 in [1, 2, 5, 6, 9] {
            let expected = try op(at: sequence * 10, sequence: sequence)
            #expect(log.op(at: sequence) == expected)
            #expect(log.op(stamped: expected.stamp) == expected)
        }
        #expect(log.op(at: 3) == nil)
        #expect(log.op(stamped: Stamp(millis: 30, counter: 0, replica: alice)) == nil)
        #expect(log.op(stamped: Stamp(millis: 95, counter: 0, replica: alice)) == nil)
        log.add(try op(at: 30, sequence: 3))
        log.add(try op(at: 40, sequence: 4))
        #expect(log.contiguous == 6)
        var seen: [UInt64] = []
        log.forEachOp { seen.append($0.sequence) }
        #expect(seen == [1, 2, 3, 4, 5, 6, 9])
    }

    @Test func anOpBreakingItsOriginsOrderIsRefusedEvenAcrossAGap() throws {
        var log = OriginLog()
        log.add(try op(at: 10, sequence: 1))
        log.add(try op(at: 50, sequence: 5))
        #expect(log.fits(try op(at: 20, sequence: 3)))
        #expect(!log.fits(try op(at: 60, sequence: 3)), "a later stamp than sequence 5's")
        #expect(!log.fits(try op(at: 5, sequence: 3)), "an earlier stamp than sequence 1's")
        #expect(!log.fits(try op(at: 11, sequence: 1)), "sequence 1 is held by another stamp")
        #expect(log.fits(try op(at: 10, sequence: 1)), "the same op fits its own place")
    }

    @Test func compactedSequencesAreForgottenAndRefused() throws {
        var log = OriginLog()
        for sequence: UInt64 in 1...8 { log.add(try op(at: sequence * 10, sequence: sequence)) }
        for sequence: UInt64 in 1...6 { log.remove(sequence: sequence) }
        #expect(log.op(at: 3) == nil)
        #expect(log.op(stamped: Stamp(millis: 30, counter: 0, replica: alice)) == nil)
        #expect(log.op(stamped: Stamp(millis: 70, counter: 0, replica: alice)) == (try op(at: 70, sequence: 7)))
        #expect(!log.fits(try op(at: 35, sequence: 3)), "a compacted place takes no op")
        #expect(log.contiguous == 8)
    }

    @Test func theEngineRefusesAnOpClaimingAnotherOpsPlace() throws {
        let engine = MergeEngine()
        engine.apply([try op(at: 10, sequence: 1)])
        let impostor = try op(at: 12, sequence: 1)
        let report = engine.apply([impostor])
        #expect(report.refused == [impostor.stamp])
        #expect(engine.value(at: try Path("/a")) == .int(10))
        #expect(engine.apply([try op(at: 10, sequence: 1)]).duplicates == 1)
    }
}
