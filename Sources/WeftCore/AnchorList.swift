import CPrefetch

extension PathIndex {
    /// The ops anchored at one node, ascending by stamp, held in short chunks.
    ///
    /// Ops mostly arrive in stamp order and append. A late op goes into the middle: a hot counter holds
    /// thousands of increments, and inserting into one array moved half of it for every late increment;
    /// a chunk moves at most ``chunkMax`` × 2 entries. A short list stays one array.
    struct AnchorList {
        /// Entries a chunk takes by appending; a chunk that grows past twice this by insertions splits.
        static let chunkMax = 64

        /// The entries while there are at most twice ``chunkMax`` of them (most nodes hold a handful:
        /// one array, one allocation); empty once ``chunks`` hold them.
        private var flat: [Anchored] = []
        /// Non-empty chunks, each ascending, every entry of a chunk before every entry of the next.
        private var chunks: [[Anchored]] = []
        /// The last stamp of each chunk: the search for a chunk reads one array instead of a chunk each
        /// step (each a cache miss).
        private var tails: [Stamp] = []
        /// Number of entries.
        private(set) var count = 0
        /// Where ``flat``'s entries were when it last changed, for ``prefetchAppend()`` only: reading
        /// the array for it would take a reference, a wait on the very line it asks for. It may be
        /// stale (a prefetch of any address is harmless) and is never read through.
        private var flatBase: UnsafeRawPointer?

        var isEmpty: Bool { count == 0 }

        /// The greatest entry.
        var last: Anchored? { chunks.isEmpty ? flat.last : chunks.last?.last }

        /// Every entry, ascending.
        var all: [Anchored] { chunks.isEmpty ? flat : chunks.flatMap { $0 } }

        private var chunkCount: Int { chunks.isEmpty ? (flat.isEmpty ? 0 : 1) : chunks.count }

        private func chunk(_ position: Int) -> [Anchored] { chunks.isEmpty ? flat : chunks[position] }

        /// Asks for the lines an append touches to be brought into the cache: the array's header (its
        /// reference count, count and capacity, in the ``PathIndex/arrayHeaderBytes`` before the
        /// entries) and its last entry. A short list only: a long one is a hot counter's. Mutating only
        /// so that callers reach the list in place: reading a copy of it would take a reference to each
        /// of its arrays, each an atomic wait on the cold line this asks for.
        @inline(__always) mutating func prefetchAppend() {
            guard let flatBase, count > 0 else { return }
            weft_prefetch(flatBase - PathIndex.arrayHeaderBytes)
            weft_prefetch(flatBase - 8)
            weft_prefetch(flatBase + MemoryLayout<Anchored>.stride * (count - 1))
        }

        /// Records where ``flat``'s entries are now, after it changed.
        private mutating func noteFlatBase() {
            flatBase = flat.withUnsafeBufferPointer { $0.baseAddress.map(UnsafeRawPointer.init) }
        }

        /// Inserts an entry at its place in stamp order.
        mutating func insert(_ anchored: Anchored) {
            count += 1
            let stamp = anchored.stamp
            if chunks.isEmpty {
                if let tail = flat.last, tail.stamp > stamp {
                    flat.insert(anchored, at: Self.index(in: flat, firstAbove: stamp))
                } else {
                    flat.append(anchored)
                }
                if flat.count > 2 * Self.chunkMax {
                    chunks = stride(from: 0, to: flat.count, by: Self.chunkMax).map {
                        Array(flat[$0..<min($0 + Self.chunkMax, flat.count)])
                    }
                    tails = chunks.map { $0[$0.count - 1].stamp }
                    flat = []
                    flatBase = nil
                } else {
                    noteFlatBase()
                }
                return
            }
            let lastChunk = chunks.count - 1
            guard tails[lastChunk] > stamp else {
                if chunks[lastChunk].count < Self.chunkMax {
                    chunks[lastChunk].append(anchored)
                    tails[lastChunk] = stamp
                } else {
                    chunks.append([anchored])
                    tails.append(stamp)
                }
                return
            }
            // Not after the last chunk's tail, so not the new tail of its chunk either.
            let target = chunkIndex(firstAbove: stamp, upTo: lastChunk)
            chunks[target].insert(anchored, at: Self.index(in: chunks[target], firstAbove: stamp))
            if chunks[target].count > 2 * Self.chunkMax {
                let upper = Array(chunks[target][Self.chunkMax...])
                chunks[target].removeLast(chunks[target].count - Self.chunkMax)
                chunks.insert(upper, at: target + 1)
                tails.insert(chunks[target][Self.chunkMax - 1].stamp, at: target)
            }
        }

        /// The first entry stamped after `stamp`.
        func first(after stamp: Stamp) -> Anchored? {
            guard let tail = last, tail.stamp > stamp else { return nil }
            let found = chunk(chunkIndex(firstAbove: stamp, upTo: chunkCount - 1))
            return found[Self.index(in: found, firstAbove: stamp)]
        }

        /// The last entry stamped before `stamp`.
        func last(before stamp: Stamp) -> Anchored? {
            var found: Anchored?
            reverseForEach(through: stamp) { entry in
                guard entry.stamp < stamp else { return true }
                found = entry
                return false
            }
            return found
        }

        /// Calls `body` with every entry stamped after `stamp` (every entry when nil), ascending.
        func forEach(after stamp: Stamp?, _ body: (Anchored) -> Void) {
            guard let tail = last else { return }
            var start = 0
            var position = 0
            if let stamp {
                guard tail.stamp > stamp else { return }
                start = chunkIndex(firstAbove: stamp, upTo: chunkCount - 1)
                position = Self.index(in: chunk(start), firstAbove: stamp)
            }
            for entry in chunk(start)[position...] { body(entry) }
            for later in (start + 1)..<chunkCount {
                for entry in chunks[later] { body(entry) }
            }
        }

        /// Calls `body` with the entries stamped after `stamp`, ascending, until it returns false; true
        /// when it never did.
        func allSatisfy(after stamp: Stamp, _ body: (Anchored) -> Bool) -> Bool {
            guard let tail = last, tail.stamp > stamp else { return true }
            let start = chunkIndex(firstAbove: stamp, upTo: chunkCount - 1)
            let position = Self.index(in: chunk(start), firstAbove: stamp)
            for entry in chunk(start)[position...] where !body(entry) { return false }
            for later in (start + 1)..<chunkCount {
                for entry in chunks[later] where !body(entry) { return false }
            }
            return true
        }

        /// Calls `body` with the entries stamped at or before `stamp`, descending, until it returns false.
        func reverseForEach(through stamp: Stamp, _ body: (Anchored) -> Bool) {
            guard let tail = last else { return }
            var current = chunkCount - 1
            var end = chunk(current).count
            if tail.stamp > stamp {
                current = chunkIndex(firstAbove: stamp, upTo: current)
                end = Self.index(in: chunk(current), firstAbove: stamp)
            }
            while true {
                for entry in chunk(current)[..<end].reversed() where !body(entry) { return }
                guard current > 0 else { return }
                current -= 1
                end = chunk(current).count
            }
        }

        func allSatisfy(_ predicate: (Anchored) -> Bool) -> Bool {
            chunks.isEmpty ? flat.allSatisfy(predicate) : chunks.allSatisfy { $0.allSatisfy(predicate) }
        }

        /// Drops the entries stamped at or before `frontier`.
        mutating func removeThrough(_ frontier: Stamp) {
            if chunks.isEmpty {
                let cut = Self.index(in: flat, firstAbove: frontier)
                flat.removeFirst(cut)
                count -= cut
                noteFlatBase()
                return
            }
            var dropped = 0
            while let first = chunks.first, let tail = tails.first, tail <= frontier {
                dropped += first.count
                chunks.removeFirst()
                tails.removeFirst()
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
            guard !chunks.isEmpty else { return 0 }
            return tails[..<last].partitionPoint { $0 > stamp }
        }

        /// Position of the first entry of `chunk` stamped after `stamp` (`chunk.count` when none). Also
        /// the place to insert an entry stamped `stamp`: no two ops share a stamp.
        private static func index(in chunk: [Anchored], firstAbove stamp: Stamp) -> Int {
            chunk.partitionPoint { $0.stamp > stamp }
        }
    }
}
