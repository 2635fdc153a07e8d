import Foundation
import Testing
import WeftCore
import WeftStore

@_spi(Engine) @testable import Weft

/// The door of the sync layer: remote ops, the log read for peers, acknowledgement and stability.
@Suite(.timeLimit(.minutes(5))) struct ReplicaRemoteTests {
    @Test(arguments: ReplicaKind.allCases)
    func remoteOpsMergePersistAndReachListenersAsNotPending(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        let replica = fixture.replica
        let heard = Heard()
        let token = replica.addChangeListener { heard.add($0) }
        let now = fixture.clock.now
        let ops = [
            Sample.remote(5, sequence: 2, millis: now - 10, path: "/a/y", .set(.int(2))),
            Sample.remote(5, sequence: 1, millis: now - 20, path: "/a/x", .set(.int(1))),
            Sample.remote(6, sequence: 1, millis: now - 15, path: "/c", .increment(by: .int(3), from: .int(0))),
        ]
        let report = try replica.applyRemote(ops)
        #expect(report.outcomes.count == 3)
        #expect(replica.value(at: Sample.path("/")) == Sample.json(#"{"a":{"x":1,"y":2},"c":3}"#))
        #expect(replica.versionVector == VersionVector([Sample.replica(5): 2, Sample.replica(6): 1]))

        let again = try replica.applyRemote(ops)
        #expect(again.duplicates == 3)
        #expect(again.changes.isEmpty)
        try await replica.flush()
        #expect(replica.durableVersionVector == replica.versionVector)
        await replica.shutdown()
        #expect(heard.batches.count == 1)
        #expect(heard.batches.allSatisfy { !$0.isLocalPending })

        let store = try fixture.openStore()
        #expect(try store.opCount() == 3)
        #expect(try store.allOps().allSatisfy { $0.status == nil })
        #expect(try Sample.foldOfStore(store) == Sample.json(#"{"a":{"x":1,"y":2},"c":3}"#))
        try store.close()
        token.cancel()
        await fixture.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func aRemoteStampTooFarAheadRefusesTheWholeCallAndChangesNothing(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        let replica = fixture.replica
        let now = fixture.clock.now
        let ops = [
            Sample.remote(5, sequence: 1, millis: now, path: "/a", .set(.int(1))),
            Sample.remote(5, sequence: 2, millis: now + 3_600_000, path: "/b", .set(.int(2))),
        ]
        let error = #expect(throws: WeftError.self) { try replica.applyRemote(ops) }
        #expect(error?.code == .clockRefused)
        #expect(error?.message.contains("ahead of the local clock") == true)
        #expect(replica.snapshot() == .null)
        let local = try replica.submit(path: Sample.path("/c"), kind: .set(.int(3)))
        #expect(local.stamp.millis == now, "the refused stamp was not adopted")
        await fixture.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func aLateSetRevisesALocalIncrementToRejected(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        let replica = fixture.replica
        let now = fixture.clock.now
        let increment = try replica.submit(path: Sample.path("/c"), kind: .increment(by: .int(1), from: .int(0)))
        #expect(increment.status == .pending)
        try await increment.wait(for: .durable)
        let lateSet = Sample.remote(5, sequence: 1, millis: now - 100, path: "/c", .set(.string("text")))
        let report = try replica.applyRemote([lateSet])
        #expect(report.outcomes[increment.stamp] == .rejected(.notANumber(Sample.path("/c"))))
        #expect(increment.status == .rejected(.notANumber(Sample.path("/c"))))
        #expect(replica.value(at: Sample.path("/c")) == .string("text"))
        await replica.shutdown()
        let store = try fixture.openStore()
        #expect(try store.op(increment.stamp)?.status == .rejected)
        #expect(try store.readTree() == Sample.json(#"{"c":"text"}"#))
        try store.close()
        await fixture.finish()
    }

    /// Ops read off the wire keep their bytes: the store holds exactly what arrived, the report names
    /// the new ones by position, and a repeat or a duplicate in the same call is stored once.
    @Test(arguments: ReplicaKind.allCases)
    func receivedBytesAreStoredAsTheyArrived(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        let replica = fixture.replica
        let now = fixture.clock.now
        let first = Sample.remote(5, sequence: 1, millis: now - 30, path: "/a", .set(.string("é")))
        let second = Sample.remote(
            5, sequence: 2, millis: now - 20, path: "/b",
            .merge([
                MergeChild(relative: Sample.path("/x"), value: .int(1))
            ]))
        let third = Sample.remote(6, sequence: 1, millis: now - 25, path: "/c", .increment(by: .int(2), from: .int(0)))
        try replica.applyRemote([first])
        var writer = ByteWriter()
        for op in [third, first, second, third] { OpCodec.write(op, to: &writer) }
        var reader = ByteReader(writer.bytes)
        let received = try EncodedOps.read(from: &reader, countMax: 10)
        #expect(received.ops == [third, first, second, third])
        #expect(received.encodings.map(Array.init) == received.ops.map(OpCodec.encode))

        let report = try replica.applyRemote(received)
        #expect(report.admitted == [0, 2])
        #expect(report.duplicates == 2)
        try await replica.flush()
        await replica.shutdown()
        let store = try fixture.openStore()
        #expect(try store.allOps().map(\.op).sorted { $0.stamp < $1.stamp } == [first, third, second])
        try store.close()
        await fixture.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func theLogGivesOurOpsOnlyOnceTheyAreDurable(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        await fixture.replica.shutdown()
        let gate = GatedStore(try fixture.openStore())
        gate.commitGate.close()
        let replica = try Replica.open(store: gate, options: fixture.options)
        try replica.submit(path: Sample.path("/a"), kind: .set(.int(1)))
        let remote = Sample.remote(5, sequence: 1, millis: fixture.clock.now, path: "/b", .set(.int(2)))
        try replica.applyRemote([remote])
        #expect(replica.ops(from: replica.replicaID, after: 0, limit: 10).isEmpty)
        #expect(replica.ops(from: Sample.replica(5), after: 0, limit: 10) == [remote])
        gate.commitGate.open()
        try await replica.flush()
        #expect(replica.ops(from: replica.replicaID, after: 0, limit: 10).count == 1)
        await replica.shutdown()
        await fixture.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func twoReplicasExchangingTheirLogsConverge(kind: ReplicaKind) async throws {
        let left = try ReplicaFixture(kind, seed: 1)
        let right = try ReplicaFixture(kind, seed: 2)
        for round in 0..<10 {
            for index in 0..<20 {
                let path = Sample.path("/shared/k\(index % 5)")
                if index % 2 == 0 {
                    try left.replica.submit(path: path, kind: .increment(by: .int(1), from: .int(0)))
                } else {
                    try right.replica.submit(path: path, kind: .set(.int(Int64(round * 100 + index))))
                }
            }
            left.clock.advance(by: 7)
            right.clock.advance(by: 5)
            try await left.replica.flush()
            try await right.replica.flush()
            try exchange(from: left.replica, to: right.replica)
            try exchange(from: right.replica, to: left.replica)
        }
        #expect(left.replica.digest == right.replica.digest)
        #expect(left.replica.versionVector == right.replica.versionVector)
        await left.finish()
        await right.finish()
    }

    private func exchange(from source: Replica, to target: Replica) throws {
        let known = target.versionVector
        for origin in [source.replicaID, target.replicaID] {
            let ops = source.ops(from: origin, after: known[origin], limit: 1_000)
            try target.applyRemote(ops)
        }
    }

    @Test(arguments: ReplicaKind.allCases)
    func anAcknowledgementPastWhatThisReplicaWroteCountsOnlyWhatItWrote(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        let first = try fixture.replica.submit(path: Sample.path("/a"), kind: .set(.int(1)))
        try await fixture.replica.flush()
        fixture.replica.markAcknowledged(through: VersionVector([fixture.replica.replicaID: 1_000_000]))
        #expect(first.status == .acknowledged)
        let later = try fixture.replica.submit(path: Sample.path("/b"), kind: .set(.int(2)))
        try await fixture.replica.flush()
        #expect(later.status == .durable, "no one acknowledged it")
        // Nor does a restart start the next write past a gap.
        try await fixture.reopen()
        let next = try fixture.replica.submit(path: Sample.path("/c"), kind: .set(.int(3)))
        #expect(next.sequence == 3)
        await fixture.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func acknowledgementAndStabilityAdvanceReceiptsAndAreStored(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        let replica = fixture.replica
        var receipts: [WriteReceipt] = []
        for index in 0..<10 {
            receipts.append(try replica.submit(path: Sample.path("/k\(index)"), kind: .set(.int(1))))
        }
        try await replica.flush()
        replica.markAcknowledged(through: VersionVector([replica.replicaID: 6]))
        #expect(receipts[5].status == .acknowledged)
        #expect(receipts[6].status == .durable)
        #expect(try await receipts[0].wait(for: .acknowledged) == .acknowledged)
        replica.markStable(through: receipts[2].stamp)
        #expect(receipts.prefix(3).allSatisfy { $0.status == .stable })
        #expect(receipts[3].status == .acknowledged)
        await replica.shutdown()
        let store = try fixture.openStore()
        let statuses = try store.ops(from: replica.replicaID, after: 0, limit: 10).map(\.status)
        #expect(
            statuses == [.stable, .stable, .stable] + Array(repeating: .acknowledged, count: 3)
                + Array(repeating: .durable, count: 4))
        try store.close()
        await fixture.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func anOpClaimingThePlaceOfAnotherIsRefused(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        let replica = fixture.replica
        let now = fixture.clock.now
        try replica.applyRemote([Sample.remote(5, sequence: 1, millis: now, path: "/a", .set(.int(1)))])
        let impostor = Sample.remote(5, sequence: 1, millis: now + 1, path: "/a", .set(.int(666)))
        let error = #expect(throws: WeftError.self) { try replica.applyRemote([impostor]) }
        #expect(error?.code == .sync)
        #expect(replica.value(at: Sample.path("/a")) == .int(1))
        try await replica.flush()
        await fixture.finish()
    }

    /// The same stamp and place with another body is no duplicate: a replica that took it as one kept
    /// its body while replicas that met the other body first kept that one, for ever.
    @Test(arguments: ReplicaKind.allCases)
    func anOpRepeatedWithAnotherBodyIsRefused(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        let replica = fixture.replica
        let now = fixture.clock.now
        let held = Sample.remote(5, sequence: 1, millis: now, path: "/a", .set(.int(1)))
        try replica.applyRemote([held])
        let forged = Sample.remote(5, sequence: 1, millis: now, path: "/a", .set(.int(666)))
        let error = #expect(throws: WeftError.self) { try replica.applyRemote([forged]) }
        #expect(error?.code == .sync)
        #expect(error?.message.contains("another body") == true)
        let again = try replica.applyRemote([held])
        #expect(again.duplicates == 1, "the op itself is still a duplicate")
        #expect(replica.value(at: Sample.path("/a")) == .int(1))
        await fixture.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func anOpOfOurOwnAboveAGapIsRefusedAndOurWritesStayDurable(kind: ReplicaKind) async throws {
        // Taken, it left a gap in our own sequence for ever: every later write of ours stayed pending
        // (the durable frontier cannot pass a gap) and never left the replica. Weft's sessions refuse
        // gaps before this; an app's own transport calls `applyRemote` directly.
        let fixture = try ReplicaFixture(kind)
        let replica = fixture.replica
        for value in 1...3 { try replica.submit(path: Sample.path("/a"), kind: .set(.int(Int64(value)))) }
        try await replica.flush()
        let id = replica.replicaID
        let now = fixture.clock.now
        let beyond = Op(
            stamp: Stamp(millis: now + 10, counter: 0, replica: id), sequence: 6, path: Sample.path("/b"),
            kind: .set(.int(9)))
        let next = Op(
            stamp: Stamp(millis: now + 5, counter: 0, replica: id), sequence: 4, path: Sample.path("/c"),
            kind: .set(.int(4)))
        let error = #expect(throws: WeftError.self) { try replica.applyRemote([beyond, next]) }
        #expect(error?.code == .sync)
        #expect(
            error?.message
                == "a peer sent op 6 of this replica (\(id)), but its own ops end at 4: op 5 would be missing for ever; "
                + "the peer's log is broken or forged")
        #expect(replica.value(at: Sample.path("/b")) == .null)
        #expect(replica.value(at: Sample.path("/c")) == .null, "nothing of a refused batch is applied")

        // Our own op 4 coming back in sequence (a crash lost it here) is taken, and so are our writes.
        try replica.applyRemote([next])
        fixture.clock.advance(by: 20)
        let write = try replica.submit(path: Sample.path("/d"), kind: .set(.int(5)))
        try await replica.flush()
        #expect(write.status == .durable)
        #expect(replica.durableVersionVector[id] == 5)
        await fixture.finish()
    }

    @Test(arguments: ReplicaKind.allCases)
    func aCallWaitsForItsFunctionAndAppliesOnceRegistered(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        let replica = fixture.replica
        let call = FunctionCall(name: "double", version: 2, arguments: .null)
        let op = Sample.remote(5, sequence: 1, millis: fixture.clock.now, path: "/n", .call(call))
        try replica.applyRemote([
            Sample.remote(5, sequence: 2, millis: fixture.clock.now + 1, path: "/m", .set(.int(1)))
        ])
        let report = try replica.applyRemote([op])
        #expect(report.outcomes[op.stamp] == .waiting)
        try replica.submit(path: Sample.path("/n"), kind: .set(.int(21)))
        try replica.register(name: "double", version: 2) { value, _ in
            guard case .int(let number) = value else { return nil }
            return .int(number * 2)
        }
        // The call is stamped before the local set: it doubles null (refused), and the set wins.
        #expect(replica.value(at: Sample.path("/n")) == .int(21))
        try await fixture.reopen()
        #expect(fixture.replica.value(at: Sample.path("/n")) == .int(21))
        #expect(fixture.replica.versionVector[Sample.replica(5)] == 2)
        await fixture.finish()
    }
}
