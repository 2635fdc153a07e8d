import Testing
import WeftCore

@testable import WeftStore

/// The op log, run against both stores.
@Suite struct StoreOpLogTests {
    @Test(arguments: StoreKind.allCases)
    func opsOfEveryKindComeBackEqualAndInStampOrder(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        let a = Sample.path("/a")
        let ops = [
            Sample.setOp(origin: 2, sequence: 1, millis: 300, value: Sample.json(#"{"x":[1,2.5,"s",true]}"#)),
            Op(stamp: Sample.stamp(100, 3), sequence: 1, path: a, kind: .increment(by: .int(5), from: .int(0))),
            Op(
                stamp: Sample.stamp(200, 3), sequence: 2, path: a,
                kind: .merge([MergeChild(relative: Sample.path("b/c"), value: .string("v"))])),
            Op(
                stamp: Sample.stamp(250, 4), sequence: 1, path: a,
                kind: .transaction(read: VersionVector([Sample.replica(3): 2]), result: .bool(false))),
            Op(
                stamp: Sample.stamp(260, 4), sequence: 2, path: a,
                kind: .call(FunctionCall(name: "transfer", version: 2, arguments: .double(1.5)))),
            Op(
                stamp: Sample.stamp(270, 4), sequence: 3, path: .root,
                kind: .batch([.set(a, .null), .increment(Sample.path("/n"), by: .double(0.5), from: .int(1))])),
        ]
        try fixture.store.commit(Sample.batch(ops))
        let back = try fixture.store.allOps()
        #expect(back.map(\.op) == ops.sorted { $0.stamp < $1.stamp })
        #expect(back.allSatisfy { $0.status == nil })
        #expect(try fixture.store.opCount() == 6)

        try fixture.reopen()
        #expect(try fixture.store.allOps().map(\.op) == ops.sorted { $0.stamp < $1.stamp })
    }

    @Test(arguments: StoreKind.allCases)
    func opsByOriginComeInSequenceOrderAfterTheGivenSequence(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        var ops: [Op] = []
        for sequence in 1...10 as ClosedRange<UInt64> {
            ops.append(Sample.setOp(origin: 7, sequence: sequence, millis: 1000 + sequence * 10))
            ops.append(Sample.setOp(origin: 8, sequence: sequence, millis: 1000 + sequence * 10 + 5))
        }
        // Arrival order differs from sequence order.
        try fixture.store.commit(Sample.batch(Array(ops.reversed().prefix(8))))
        try fixture.store.commit(Sample.batch(Array(ops.reversed().dropFirst(8))))

        let after3 = try fixture.store.ops(from: Sample.replica(7), after: 3, limit: 4)
        #expect(after3.map(\.op.sequence) == [4, 5, 6, 7])
        #expect(after3.allSatisfy { $0.op.origin == Sample.replica(7) })
        #expect(try fixture.store.ops(from: Sample.replica(8), after: 9, limit: 100).map(\.op.sequence) == [10])
        #expect(try fixture.store.ops(from: Sample.replica(8), after: 10, limit: 100).isEmpty)
        #expect(try fixture.store.ops(from: Sample.replica(9), after: 0, limit: 100).isEmpty)
    }

    @Test(arguments: StoreKind.allCases)
    func theLogIsPagedInLogOrderAndReadWholeInStampOrder(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        let ops = (1...25 as ClosedRange<UInt64>).map {
            Sample.setOp(origin: $0 % 3 + 1, sequence: $0, millis: 5000 - $0)
        }
        // One op per origin and sequence: make the sequences per origin distinct.
        let unique = Dictionary(grouping: ops, by: \.origin).flatMap { _, list in
            list.sorted { $0.stamp < $1.stamp }.enumerated().map { index, op in
                Op(stamp: op.stamp, sequence: UInt64(index + 1), path: op.path, kind: op.kind)
            }
        }
        try fixture.store.commit(Sample.batch(unique))
        var seen: [Op] = []
        var cursor: LogPosition?
        while true {
            let page = try fixture.store.ops(after: cursor, limit: 7)
            if page.isEmpty { break }
            seen += page.map(\.op)
            cursor = page.last.map { LogPosition(of: $0.op) }
        }
        // Pages continue one another in log order (origin, then sequence) and hold every op once.
        #expect(seen.map { LogPosition(of: $0) } == unique.map { LogPosition(of: $0) }.sorted())
        #expect(try fixture.store.allOps().map(\.op.stamp) == unique.map(\.stamp).sorted())
        let middle = seen[10].stamp
        #expect(try fixture.store.op(middle)?.op.stamp == middle)
        #expect(try fixture.store.op(Sample.stamp(1, 99)) == nil)
    }

    @Test(arguments: StoreKind.allCases)
    func aDuplicateOpIsStoredOnce(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        let op = Sample.setOp(origin: 5, sequence: 1, millis: 10)
        try fixture.store.commit(Sample.batch([op, op]))
        try fixture.store.commit(Sample.batch([op]))
        #expect(try fixture.store.opCount() == 1)
        #expect(try fixture.store.allOps().map(\.op) == [op])
    }

    @Test(arguments: StoreKind.allCases)
    func aSecondOpAtTheSamePlaceOfAnOriginIsRefusedAndTheBatchLeavesNoTrace(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        let first = Sample.setOp(origin: 5, sequence: 1, millis: 10)
        try fixture.store.commit(Sample.batch([first]))
        var batch = Sample.batch([
            Sample.setOp(origin: 6, sequence: 1, millis: 11), Sample.setOp(origin: 5, sequence: 1, millis: 12),
        ])
        batch.treeWrites = [.init(path: Sample.path("/x"), value: .int(1))]
        #expect(throws: StoreError.conflictingOp(origin: Sample.replica(5), sequence: 1)) {
            try fixture.store.commit(batch)
        }
        #expect(try fixture.store.allOps().map(\.op) == [first])
        #expect(try fixture.store.readTree() == .null)
    }

    @Test(arguments: StoreKind.allCases)
    func anOpAtOrBelowTheFrontierIsRefused(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        var compact = StoreBatch()
        compact.frontier = Sample.stamp(100, 1)
        try fixture.store.commit(compact)
        let late = Sample.setOp(origin: 2, sequence: 1, millis: 50)
        #expect(throws: StoreError.opBelowFrontier(stamp: late.stamp, frontier: Sample.stamp(100, 1))) {
            try fixture.store.commit(Sample.batch([late]))
        }
        #expect(try fixture.store.opCount() == 0)
    }

    @Test(arguments: StoreKind.allCases)
    func aRecordMadeFromWireBytesStoresThoseBytes(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        let op = Sample.setOp(origin: 3, sequence: 1, millis: 42, value: .string("from the wire"))
        var batch = StoreBatch()
        batch.ops = [OpRecord(op, encoded: OpCodec.encode(op))]
        try fixture.store.commit(batch)
        #expect(try fixture.store.op(op.stamp)?.op == op)
    }
}
