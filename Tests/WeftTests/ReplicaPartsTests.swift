import Foundation
import Testing
import WeftCore
import WeftStore

@testable import Weft

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
        var pending = PendingCommits()
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

        let batches = pending.batches(opsMax: 2)
        #expect(batches.map(\.storeBatch.ops.count) == [2, 2, 1, 0, 0])
        #expect(batches.map(\.entries) == [2, 2, 1, 1, 1])
        #expect(batches[3].storeBatch.frontier != nil && batches[3].maintenance == .vacuum)
        #expect(batches.map(\.storeBatch.clockTime) == [2, 4, 5, 6, 7])
        // Of the one-row writes at /k in a batch, only the last is sent; the full write stays.
        #expect(batches[0].storeBatch.treeWrites.map(\.value) == [.int(1), .int(2)])
        #expect(batches[1].storeBatch.treeWrites.map(\.value) == [.int(4)])
        #expect(pending.batches(opsMax: 100).map(\.entries) == [5, 1, 1])
    }

    @Test func liveWritesKeepFullWritesAndTheLastOneRowWriteOfAPath() {
        let writes = [
            write("/a", .int(1), oneRow: true), write("/a/b", .int(2)), write("/a", .int(3), oneRow: true),
            write("/c", .null, oneRow: true), write("/c", .int(4)),
        ]
        let live = PendingCommits.liveWrites(writes[...])
        #expect(live == [write("/a/b", .int(2)), write("/a", .int(3), oneRow: true), write("/c", .int(4))])
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

    @Test func theReceiptBookAdvancesRejectsAndForgetsStableAndReleasedReceipts() throws {
        let book = ReceiptBook()
        let stamp = Stamp(millis: 1, counter: 0, replica: Sample.replica(1))
        var kept: [WriteReceipt] = []
        for sequence in 1...3_000 as ClosedRange<UInt64> {
            let receipt = WriteReceipt(stamp: stamp)
            book.track(receipt, sequence: sequence)
            if sequence <= 10 { kept.append(receipt) }
        }
        #expect(book.count < 3_000, "receipts the app released are swept")
        book.advance(through: 5, to: .acknowledged)
        #expect(kept[4].status == .acknowledged)
        #expect(kept[5].status == .pending)
        book.reject(sequence: 6, because: .staleRead(.root))
        #expect(kept[5].status == .rejected(.staleRead(.root)))
        book.advance(through: 3, to: .stable)
        #expect(kept.prefix(3).allSatisfy { $0.status == .stable })
        #expect(kept[3].status == .acknowledged)
        book.advance(through: 2, to: .stable)
        book.advance(through: 4, to: .acknowledged)
        #expect(kept[3].status == .acknowledged)
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
