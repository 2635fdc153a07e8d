extension PathIndex {
    /// The ops anchored at one node, ascending by stamp, held in short chunks.
    ///
    /// Ops mostly arrive in stamp order and append to the last chunk. A late op goes into the middle:
    /// a hot counter holds thousands of increments, and inserting into one array moved half of it for
    /// every late increment; a chunk moves at most ``chunkMax`` × 2 entries.
    struct AnchorList {
        /// Entries a chunk takes by appending; a chunk that grows past twice this by insertions splits.
        static let chunkMax = 64

        /// Non-empty chunks, each ascending, every entry of a chunk before every entry of the next.
        private var chunks: [[Anchored]] = []
        /// Number of entries.
        private(set) var count = 0

        var isEmpty: Bool { count == 0 }

        /// The greatest entry.
        var last: Anchored? { chunks.last?.last }

        /// Every entry, ascending.
        var all: [Anchored] { chunks.flatMap { $0 } }

        /// Inserts an entry at its place in stamp order.
        mutating func insert(_ anchored: Anchored) {
            count += 1
            let stamp = anchored.stamp
            guard let lastChunk = chunks.indices.last, let tail = chunks[lastChunk].last, tail.stamp > stamp else {
                if let lastChunk = chunks.indices.last, chunks[lastChunk].count < Self.chunkMax {
                    chunks[lastChunk].append(anchored)
                } else {
                    var chunk: [Anchored] = []
                    chunk.reserveCapacity(Self.chunkMax)
                    chunk.append(anchored)
                    chunks.append(chunk)
                }
                return
            }
            let chunk = chunkIndex(firstAbove: stamp, upTo: lastChunk)
            let position = Self.index(in: chunks[chunk], firstAtOrAbove: stamp)
            chunks[chunk].insert(anchored, at: position)
            if chunks[chunk].count > 2 * Self.chunkMax {
                let upper = Array(chunks[chunk][Self.chunkMax...])
                chunks[chunk].removeLast(chunks[chunk].count - Self.chunkMax)
                chunks.insert(upper, at: chunk + 1)
            }
        }

        /// The first entry stamped after `stamp`.
        func first(after stamp: Stamp) -> Anchored? {
            guard let lastChunk = chunks.indices.last, let tail = chunks[lastChunk].last, tail.stamp > stamp else {
                return nil
            }
            let chunk = chunks[chunkIndex(firstAbove: stamp, upTo: lastChunk)]
            return chunk[Self.index(in: chunk, firstAbove: stamp)]
        }

        /// Calls `body` with every entry stamped after `stamp` (every entry when nil), ascending.
        func forEach(after stamp: Stamp?, _ body: (Anchored) -> Void) {
            guard let lastChunk = chunks.indices.last else { return }
            var chunk = 0
            var position = 0
            if let stamp {
                guard let tail = chunks[lastChunk].last, tail.stamp > stamp else { return }
                chunk = chunkIndex(firstAbove: stamp, upTo: lastChunk)
                position = Self.index(in: chunks[chunk], firstAbove: stamp)
            }
            for entry in chunks[chunk][position...] { body(entry) }
            for later in chunks[(chunk + 1)...] {
                for entry in later { body(entry) }
            }
        }

        /// Calls `body` with the entries stamped at or before `stamp`, descending, until it returns false.
        func reverseForEach(through stamp: Stamp, _ body: (Anchored) -> Bool) {
            guard let lastChunk = chunks.indices.last else { return }
            var chunk = lastChunk
            var position = chunks[lastChunk].count
            if let tail = chunks[lastChunk].last, tail.stamp > stamp {
                chunk = chunkIndex(firstAbove: stamp, upTo: lastChunk)
                position = Self.index(in: chunks[chunk], firstAbove: stamp)
            }
            while true {
                for entry in chunks[chunk][..<position].reversed() where !body(entry) { return }
                guard chunk > 0 else { return }
                chunk -= 1
                position = chunks[chunk].count
            }
        }

        func allSatisfy(_ predicate: (Anchored) -> Bool) -> Bool {
            chunks.allSatisfy { $0.allSatisfy(predicate) }
        }

        /// Drops the entries stamped at or before `frontier`.
        mutating func removeThrough(_ frontier: Stamp) {
            var dropped = 0
            while let first = chunks.first, let tail = first.last, tail.stamp <= frontier {
                dropped += first.count
                chunks.removeFirst()
            }
            if !chunks.isEmpty {
                let cut = Self.index(in: chunks[0], firstAbove: frontier)
                chunks[0].removeFirst(cut)
                dropped += cut
            }
            count -= dropped
        }

        /// The first chunk whose last entry is stamped after `stamp`; the chunk `upTo` must be one.
        private func chunkIndex(firstAbove stamp: Stamp, upTo last: Int) -> Int {
            var low = 0
            var high = last
            while low < high {
                let middle = (low + high) / 2
                if let tail = chunks[middle].last, tail.stamp <= stamp { low = middle + 1 } else { high = middle }
            }
            return low
        }

        /// Position of the first entry of `chunk` stamped after `stamp` (`chunk.count` when none).
        private static func index(in chunk: [Anchored], firstAbove stamp: Stamp) -> Int {
            var low = 0
            var high = chunk.count
            while low < high {
                let middle = (low + high) / 2
                if chunk[middle].stamp <= stamp { low = middle + 1 } else { high = middle }
            }
            return low
        }

        /// Position of the first entry of `chunk` stamped at or after `stamp`.
        private static func index(in chunk: [Anchored], firstAtOrAbove stamp: Stamp) -> Int {
            var low = 0
            var high = chunk.count
            while low < high {
                let middle = (low + high) / 2
                if chunk[middle].stamp < stamp { low = middle + 1 } else { high = middle }
            }
            return low
        }
    }
}
