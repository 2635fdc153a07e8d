/// The ops of one origin by sequence number, and the gap-free prefix: the engine's log, split by origin.
///
/// Ops sit in an array indexed by sequence: an origin's ops mostly arrive in sequence order, so
/// recording one is an append, and the log grows without the rehashing a table keyed by stamp needs.
/// An origin's stamps grow with its sequence (``fits(_:)`` refuses an op that breaks this), so an op is
/// found from its stamp by binary search.
struct OriginLog {
    /// Highest sequence recorded (0 when none).
    var last: UInt64 { first + UInt64(slots.count) - 1 }

    /// Ops of sequences `first`, `first + 1`, …; nil where unknown or compacted.
    private var slots: [Op?] = []
    /// Leading slots known to be forgotten (compacted).
    private var cleared = 0
    /// Sequence of `slots[0]`.
    private(set) var first: UInt64
    /// Highest sequence with no gap below it.
    private(set) var contiguous: UInt64 = 0
    /// How many partial ops (``Op/isPartial``) the slots hold.
    private(set) var partialCount = 0

    init(contiguous: UInt64 = 0) {
        self.contiguous = contiguous
        self.first = contiguous + 1
    }

    /// The stamp of the op with this sequence, if known and not compacted.
    subscript(sequence: UInt64) -> Stamp? { stamp(at: sequence) }

    /// The slot of this sequence, if the array has one.
    private func slot(of sequence: UInt64) -> Int? {
        guard sequence >= first, sequence - first < UInt64(slots.count) else { return nil }
        return Int(sequence - first)
    }

    /// The stamp of the op with this sequence, if known and not compacted (without copying the op).
    func stamp(at sequence: UInt64) -> Stamp? { slot(of: sequence).flatMap { slots[$0]?.stamp } }

    /// True when the op with this sequence is held. (Comparing a slot with nil would copy the op, a
    /// reference taken on its body; reading its stamp does not.)
    private func holds(_ sequence: UInt64) -> Bool { slot(of: sequence).map { slots[$0]?.stamp != nil } ?? false }

    /// The op with this sequence, if known and not compacted.
    func op(at sequence: UInt64) -> Op? { slot(of: sequence).flatMap { slots[$0] } }

    /// The op with this stamp, if known and not compacted.
    func op(stamped stamp: Stamp) -> Op? { slot(stamped: stamp).flatMap { slots[$0] } }

    /// True when the op with this stamp is known and not compacted.
    func contains(_ stamp: Stamp) -> Bool { slot(stamped: stamp) != nil }

    /// The slot of the op with this stamp: a binary search that reads stamps only (copying an op
    /// would retain its path and value). An op stamped after the last one held, the usual case for a
    /// new op, is answered at once.
    private func slot(stamped stamp: Stamp) -> Int? {
        if let lastStamp = slots.last??.stamp, stamp > lastStamp { return nil }
        var low = cleared
        var high = slots.count
        while low < high {
            let middle = (low + high) / 2
            var probe = middle
            while probe < high, slots[probe]?.stamp == nil { probe += 1 }
            guard probe < high, let probeStamp = slots[probe]?.stamp else {
                high = middle
                continue
            }
            if probeStamp == stamp { return probe }
            if probeStamp < stamp { low = probe + 1 } else { high = middle }
        }
        return nil
    }

    /// Calls `body` with every op held, in sequence order.
    func forEachOp(_ body: (Op) -> Void) {
        for slot in slots[cleared...] { if let op = slot { body(op) } }
    }

    /// Calls `body` with every op held stamped at or before `stamp`, in sequence order: a prefix of the
    /// log, since an origin's stamps grow with its sequence.
    func forEachOp(through stamp: Stamp, _ body: (Op) -> Void) {
        for slot in slots[cleared...] {
            guard let op = slot else { continue }
            if op.stamp > stamp { return }
            body(op)
        }
    }

    /// False when the op's sequence is compacted or held by another op, or when a known op of the same
    /// origin with a lower sequence has a later stamp, or one with a higher sequence an earlier stamp.
    func fits(_ op: Op) -> Bool {
        guard op.sequence >= first else { return false }
        let offset = Int(op.sequence - first)
        // Only the neighbours' stamps are read: binding a neighbour would copy it, a reference taken on
        // its body.
        if offset < slots.count, let held = slots[offset]?.stamp { return held == op.stamp }
        var below = min(offset, slots.count) - 1
        while below >= cleared, slots[below]?.stamp == nil { below -= 1 }
        if below >= cleared, let previous = slots[below]?.stamp, previous >= op.stamp { return false }
        var above = offset + 1
        while above < slots.count, slots[above]?.stamp == nil { above += 1 }
        if above < slots.count, let next = slots[above]?.stamp, next <= op.stamp { return false }
        return true
    }

    mutating func add(_ op: Op) {
        guard op.sequence >= first else { return }
        let offset = Int(op.sequence - first)
        if op.isPartial { partialCount += 1 }
        if offset >= slots.count {
            if offset > slots.count { slots.append(contentsOf: repeatElement(nil, count: offset - slots.count)) }
            slots.append(op)
        } else {
            if slots[offset]?.isPartial == true { partialCount -= 1 }
            slots[offset] = op
        }
        while holds(contiguous + 1) { contiguous += 1 }
    }

    /// Forgets a compacted op; drops the forgotten prefix once it is large.
    mutating func remove(sequence: UInt64) {
        guard sequence >= first, sequence - first < UInt64(slots.count) else { return }
        if slots[Int(sequence - first)]?.isPartial == true { partialCount -= 1 }
        slots[Int(sequence - first)] = nil
        while cleared < slots.count, slots[cleared]?.stamp == nil, first + UInt64(cleared) <= contiguous {
            cleared += 1
        }
        if cleared > 0, cleared >= slots.count / 2 {
            slots.removeFirst(cleared)
            first += UInt64(cleared)
            cleared = 0
        }
    }
}
