import Foundation
import Testing
import WeftCore
import WeftStore

@_spi(Engine) @testable import Weft

/// The parts of the replica engine, each on its own: the pending rows of group commit, the durable
/// ledger, the receipt book and the change notifier.
@Suite struct ReplicaPartsTests {
    private func write(_ path: String, _ value: Value, oneRow: Bool = false) -> StoreBatch.TreeWrite {
        StoreBatch.TreeWrite(path: Sample.path(path), value: value, replacesScalar: oneRow)
    }

    private func op(_ sequence: UInt64) -> OpRecord {
        OpRecord(Sample.remote(3, sequence: sequence, millis: 1_000 + sequence, path: "/k", .set(.int(1))))
    }

    @Test func pendingRowsAreCutIntoBatchesAtEntryBoundariesAndIsolatedEntriesGoAlone() {
        let batches = pending(opsMax: 2).batches()
        #expect(batches.map(\.storeBatch.ops.count) == [2, 2, 1, 0, 0])
        #expect(batches.map(\.entries) == [2, 2, 1, 1, 1])
        #expect(batches[3].storeBatch.frontier != nil && batches[3].maintenance == .vacuum)
        #expect(batches.map(\.storeBatch.clockTime) == [2, 4, 5, 6, 7])
        // Of the one-row writes at /k in a batch, only the last is sent; the full write stays.
        #expect(batches[0].storeBatch.treeWrites.map(\.value) == [.int(1), .int(2)])
        #expect(batches[1].storeBatch.treeWrites.map(\.value) == [.int(4)])
        #expect(pending(opsMax: 100).batches().map(\.entries) == [5, 1, 1])
    }

    @Test func anEntryLargerThanABatchGoesAloneAndRowsWrittenOneByOneStayWithTheirEntry() {
        var pending = PendingCommits(opsMax: 3)
        var single = CommitEntry(clockTime: 1)
        single.records = [op(1)]
        pending.append(single)
        for sequence in 2...5 as ClosedRange<UInt64> { pending.append(record: op(sequence)) }
        pending.append(treeWrite: write("/k", .int(5)))
        pending.closeEntry(clockTime: 2)
        pending.append(record: op(6))
        pending.closeEntry(clockTime: 3)
        let batches = pending.batches()
        #expect(batches.map { $0.storeBatch.ops.map(\.op.sequence) } == [[1], [2, 3, 4, 5], [6]])
        #expect(batches.map(\.storeBatch.treeWrites.count) == [0, 1, 0])
        #expect(batches.map(\.storeBatch.clockTime) == [1, 2, 3])
        #expect(pending.opCount == 6 && pending.entryCount == 3)
    }

    /// Five one-op entries writing /k, a compaction, and an empty entry.
    private func pending(opsMax: Int) -> PendingCommits {
        var pending = PendingCommits(opsMax: opsMax)
        for sequence in 1...5 as ClosedRange<UInt64> {
            var entry = CommitEntry(clockTime: sequence)
            entry.records = [op(sequence)]
            entry.treeWrites = [write("/k", .int(Int64(sequence)), oneRow: sequence > 1)]
            pending.append(entry)
        }
        var compaction = CommitEntry(clockTime: 6)
        compaction.frontier = Stamp(millis: 1_002, counter: 0, replica: Sample.replica(3))
        compaction.maintenance = .vacuum
        pending.append(compaction)
        pending.append(CommitEntry(clockTime: 7))
        return pending
    }

    @Test func liveWritesKeepFullWritesAndTheLastOneRowWriteOfAPath() {
        let writes = [
            write("/a", .int(1), oneRow: true), write("/a/b", .int(2)), write("/a", .int(3), oneRow: true),
            write("/c", .null, oneRow: true), write("/c", .int(4)),
        ]
        let live = PendingCommits.liveWrites(writes[...])
        #expect(live == [write("/a/b", .int(2)), write("/a", .int(3), oneRow: true), write("/c", .int(4))])
    }

    /// Random runs over a few paths, some in a slice that does not start at 0: the same writes as the
    /// rule read plainly (a one-row write goes when a later write has its path).
    @Test func liveWritesMatchThePlainRuleOnRandomRuns() {
        var rng = SeededGenerator(seed: 41)
        let paths = ["/a", "/a/b", "/c", "/d/e", "/d"]
        for run in 0..<300 {
            let count = Int(rng.below(40))
            var writes: [StoreBatch.TreeWrite] = []
            for number in 0..<count {
                let path = paths[Int(rng.below(UInt64(paths.count)))]
                writes.append(write(path, .int(Int64(number)), oneRow: rng.below(3) != 0))
            }
            let skip = run % 3 == 0 ? min(count, 2) : 0
            let slice = writes[skip...]
            var expected: [StoreBatch.TreeWrite] = []
            for index in slice.indices {
                let replaced = slice[(index + 1)...].contains { $0.path == slice[index].path }
                if !(replaced && slice[index].replacesScalar) { expected.append(slice[index]) }
            }
            #expect(PendingCommits.liveWrites(slice) == expected, "run \(run)")
        }
    }

    @Test func theDurableLedgerAdvancesOnlyOverGapFreePrefixes() {
        var ledger = DurableLedger()
        let origin = Sample.replica(9)
        ledger.add(origin: origin, sequence: 2)
        ledger.add(origin: origin, sequence: 4)
        #expect(ledger.vector[origin] == 0)
        ledger.add(origin: origin, sequence: 1)
        #expect(ledger.vector[origin] == 2)
        ledger.add(origin: origin, sequence: 3)
        #expect(ledger.vector[origin] == 4)
        ledger.add(origin: origin, sequence: 2)
        #expect(ledger.vector[origin] == 4)
    }

    @Test func theReceiptBookDerivesStatusesFromFrontiersAndRejections() throws {
        let book = ReceiptBook(durableThrough: 2)
        let stamp = Stamp(millis: 1, counter: 0, replica: Sample.replica(1))
        let receipts = (1...10 as ClosedRange<UInt64>).map { WriteReceipt(stamp: stamp, sequence: $0, book: book) }
        #expect(receipts.map(\.status) == [.durable, .durable] + Array(repeating: .pending, count: 8))
        book.markDurable(through: 4)
        book.markDurable(through: 3)
        #expect(receipts[3].status == .durable)
        #expect(receipts[4].status == .pending)
        book.advance(through: 5, to: .acknowledged)
        #expect(receipts[4].status == .acknowledged)
        book.reject(sequence: 6, because: .staleRead(.root))
        #expect(receipts[5].status == .rejected(.staleRead(.root)))
        book.advance(through: 3, to: .stable)
        #expect(receipts.prefix(3).allSatisfy { $0.status == .stable })
        #expect(receipts[3].status == .acknowledged)
        book.advance(through: 2, to: .stable)
        #expect(receipts[2].status == .stable, "frontiers never move back")
        book.markDurable(through: 6)
        book.revive(sequence: 6)
        #expect(receipts[5].status == .durable, "a late op revised the rejection")
    }

    @Test func theReceiptBookWakesWaitersAndObserversAndFailsWhatIsNotDurable() async throws {
        let book = ReceiptBook()
        let stamp = Stamp(millis: 1, counter: 0, replica: Sample.replica(1))
        let first = WriteReceipt(stamp: stamp, sequence: 1, book: book)
        let third = WriteReceipt(stamp: stamp, sequence: 3, book: book)
        let statuses = Collector<WriteStatus>()
        first.observe { statuses.append($0) }
        let waitFirst = Task { try await first.wait(for: .stable) }
        let waitThird = Task { try await third.wait(for: .durable) }
        #expect(await eventually { book.heldCount == 3 })
        book.markDurable(through: 1)
        book.advance(through: 1, to: .acknowledged)
        book.fail(from: 2, WeftError(.storage, "disk gone"))
        #expect(await weftErrorCode { _ = try await waitThird.value } == .storage)
        book.advance(through: 1, to: .stable)
        #expect(try await waitFirst.value == .stable)
        #expect(await statuses.wait(for: 3) == [.durable, .acknowledged, .stable])
        #expect(book.heldCount == 0, "a stable write's observer is let go")
        #expect(first.status == .stable)
    }

    @Test func aSlowListenerGetsFewerLargerBatchesInOrder() async {
        let notifier = ChangeNotifier()
        let gate = Gate(open: false)
        let heard = Heard()
        let token = notifier.add { batch in
            gate.pass()
            heard.add(batch)
        }
        let total = WeftLimits.changeBatchesQueuedMax * 3
        for index in 0..<total {
            let change = Change(path: Sample.path("/n"), old: .null, new: .int(Int64(index)))
            notifier.post(ChangeBatch(changes: [change], isLocalPending: true, outcomes: [:]))
        }
        gate.open()
        await notifier.waitUntilDelivered()
        let batches = heard.batches
        #expect(batches.count <= 2 * WeftLimits.changeBatchesQueuedMax, "\(batches.count) batches for \(total) posts")
        #expect(batches.flatMap(\.changes).map(\.new) == (0..<total).map { Value.int(Int64($0)) })
        token.cancel()
    }
}
