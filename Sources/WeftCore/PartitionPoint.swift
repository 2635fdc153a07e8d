extension RandomAccessCollection {
    /// The first index whose element satisfies `isPast`, in a collection where every element that does
    /// comes after every element that does not (a binary search); `endIndex` when none does.
    ///
    /// ```swift
    /// [1, 3, 3, 7].partitionPoint { $0 > 3 }   // 3
    /// ```
    @inlinable public func partitionPoint(where isPast: (Element) throws -> Bool) rethrows -> Index {
        var low = startIndex
        var remaining = count
        while remaining > 0 {
            let half = remaining / 2
            let middle = index(low, offsetBy: half)
            if try isPast(self[middle]) {
                remaining = half
            } else {
                low = index(after: middle)
                remaining -= half + 1
            }
        }
        return low
    }
}
