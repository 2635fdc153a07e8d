import WeftSync

/// Something that happens at a tick of the simulated world.
enum Event {
    /// The workload writes its op number `index` (an index into the write plan).
    case write(index: Int)
    /// Bytes reach one side of a connection.
    case deliver(connection: Int, side: Int, bytes: [UInt8])
    /// The transport under one side of a connection closed (the peer's FIN, or a reset).
    case transportClosed(connection: Int, side: Int)
    /// A session timer fires, unless rescheduled or cancelled since (`generation`).
    case timer(connection: Int, side: Int, timer: SyncTimer, generation: UInt64)
    /// The initiator of a link dials.
    case dial(link: Int)
    /// A damaged connection is torn down.
    case reset(connection: Int)
    /// A replica's fsync timer fires, unless it crashed since (`generation`).
    case sync(replica: Int, generation: UInt64)
    /// A replica's log grew: its sessions hear of it (one group commit).
    case logGrew(replica: Int)
    /// A scheduled fault starts or ends.
    case episodeStart(index: Int)
    case episodeEnd(index: Int)
    /// A crashed replica restarts.
    case restart(replica: Int)
    /// The continuous checkers run, and after healing the convergence test.
    case check
    /// The fault phase ends.
    case heal

    /// A small number naming the kind of event, for the trace hash.
    var code: UInt64 {
        switch self {
        case .write: return 1
        case .deliver: return 2
        case .transportClosed: return 3
        case .timer: return 4
        case .dial: return 5
        case .reset: return 6
        case .sync: return 7
        case .logGrew: return 8
        case .episodeStart: return 9
        case .episodeEnd: return 10
        case .restart: return 11
        case .check: return 12
        case .heal: return 13
        }
    }
}

/// The events to come, in order of tick, then of scheduling (a binary min-heap). Ties never depend
/// on anything but the order events were scheduled in, so a run is reproducible.
struct EventQueue {
    private struct Entry {
        let tick: UInt64
        let order: UInt64
        let event: Event

        func precedes(_ other: Entry) -> Bool { tick != other.tick ? tick < other.tick : order < other.order }
    }

    private var heap: [Entry] = []
    private var scheduled: UInt64 = 0

    /// Events waiting.
    var count: Int { heap.count }
    var isEmpty: Bool { heap.isEmpty }

    /// Schedules `event` at `tick`.
    mutating func schedule(_ event: Event, at tick: UInt64) {
        scheduled += 1
        heap.append(Entry(tick: tick, order: scheduled, event: event))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// The earliest event and its tick.
    /// The event ``next()`` would return, left in the queue.
    func peek() -> (tick: UInt64, event: Event)? { heap.first.map { ($0.tick, $0.event) } }

    mutating func next() -> (tick: UInt64, event: Event)? {
        guard let first = heap.first else { return nil }
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1
                let right = left + 1
                var smallest = parent
                if left < heap.count, heap[left].precedes(heap[smallest]) { smallest = left }
                if right < heap.count, heap[right].precedes(heap[smallest]) { smallest = right }
                if smallest == parent { break }
                heap.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return (first.tick, first.event)
    }
}
