import Testing

@testable import WeftCore

/// The binary search the ordered lists share.
@Suite struct PartitionPointTests {
    @Test func findsTheFirstElementPastTheSplitAgainstALinearScan() {
        let sorted = [1, 3, 3, 3, 7, 8, 8, 12]
        for probe in -1...13 {
            let linear = sorted.firstIndex { $0 > probe } ?? sorted.endIndex
            #expect(sorted.partitionPoint { $0 > probe } == linear, "probe \(probe)")
        }
        #expect([Int]().partitionPoint { $0 > 0 } == 0)
        // On a slice, the index is the slice's own.
        let slice = sorted[2..<6]
        #expect(slice.partitionPoint { $0 > 3 } == 4)
        #expect(slice.partitionPoint { $0 > 100 } == 6)
        #expect(slice.partitionPoint { _ in true } == 2)
    }
}
