extension PathIndex {
    /// An optional stamp in 16 bytes: no replica has id 0, so a zero replica marks an empty slot.
    struct StampSlot {
        private var time: UInt64 = 0
        private var replica: UInt64 = 0

        init() {}

        @inline(__always) init(_ stamp: Stamp?) {
            guard let stamp else { return }
            time = stamp.time
            replica = stamp.replica.rawValue
        }

        @inline(__always) var stamp: Stamp? {
            replica == 0 ? nil : Stamp(time: time, replica: ReplicaID(nonZero: replica))
        }
    }

    struct OriginSequence {
        var origin: ReplicaID
        var sequence: UInt64
    }

    /// An op anchored at a node: its stamp, and its sequence, which finds it in its origin's log
    /// without a search.
    struct Anchored: Hashable {
        var stamp: Stamp
        var sequence: UInt64
    }

    /// The highest sequence per origin of the ops a node summarizes. The origin raised last is held
    /// inline: most nodes see one or two origins, ops come in runs of one origin, and an inline entry
    /// spares a heap object, and a cache miss, on every level an op walks through.
    struct OriginSequences {
        /// The origin raised last, as raw bits (0 when none: no replica has id 0, and an optional entry
        /// would take 8 bytes more in every node).
        private var firstOrigin: UInt64 = 0
        private var firstSequence: UInt64 = 0
        private var rest: [OriginSequence] = []

        /// No origin was raised.
        var isEmpty: Bool { firstOrigin == 0 }

        private var first: OriginSequence? {
            firstOrigin == 0
                ? nil : OriginSequence(origin: ReplicaID(nonZero: firstOrigin), sequence: firstSequence)
        }

        private mutating func setFirst(_ origin: ReplicaID, _ sequence: UInt64) {
            firstOrigin = origin.rawValue
            firstSequence = sequence
        }

        /// Records that `origin` reached `sequence` here.
        @inline(__always) mutating func raise(origin: ReplicaID, sequence: UInt64) {
            guard let head = first else {
                setFirst(origin, sequence)
                return
            }
            if head.origin == origin {
                if head.sequence < sequence { firstSequence = sequence }
                return
            }
            // The origin found moves to the inline place: ops come in runs of one origin (sync sends
            // an origin's ops in sequence order), and the rest of a run then stays off the heap.
            for i in rest.indices where rest[i].origin == origin {
                setFirst(origin, max(rest[i].sequence, sequence))
                rest[i] = head
                return
            }
            setFirst(origin, sequence)
            rest.append(head)
        }

        /// Calls `body` with each origin and its sequence, in no particular order.
        func forEach(_ body: (OriginSequence) -> Void) {
            guard let first else { return }
            body(first)
            for entry in rest { body(entry) }
        }

        /// True when `read` holds every origin's sequence.
        func isCovered(by read: VersionVector) -> Bool {
            guard let first else { return true }
            return read[first.origin] >= first.sequence && rest.allSatisfy { read[$0.origin] >= $0.sequence }
        }
    }
}
