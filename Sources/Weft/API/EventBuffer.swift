/// The events of one subscriber waiting for delivery, bounded by ``WeftLimits/subscriberEventsBufferedMax``.
///
/// A subscriber that falls behind gets coalesced events: only the latest value change, and only the
/// latest event of each child. A subscriber so far behind that even the coalesced events exceed half the
/// limit loses the oldest of them (value changes are never lost: the latest is always kept).
struct EventBuffer {
    private var events: [DataEvent] = []
    private var head = 0
    let capacity: Int

    init(capacity: Int = WeftLimits.subscriberEventsBufferedMax) {
        precondition(capacity >= 2, "an event buffer holds at least two events")
        self.capacity = capacity
    }

    /// Number of events waiting.
    var count: Int { events.count - head }

    var isEmpty: Bool { count == 0 }

    mutating func append(contentsOf new: [DataEvent]) {
        events.append(contentsOf: new)
        if count > capacity { coalesce() }
    }

    /// Removes and returns up to `limit` events, oldest first.
    mutating func take(_ limit: Int) -> [DataEvent] {
        let end = head + min(limit, count)
        let taken = Array(events[head..<end])
        head = end
        if head == events.count {
            events.removeAll(keepingCapacity: events.count <= capacity)
            head = 0
        } else if head > events.count / 2 {
            events.removeFirst(head)
            head = 0
        }
        return taken
    }

    mutating func removeAll() {
        events = []
        head = 0
    }

    /// Keeps the last event of each node (the subscribed node for value changes, a child for child
    /// events), in the order of those last events; then at most half the capacity, the newest.
    private mutating func coalesce() {
        var seen = Set<DataNode>()
        var kept: [DataEvent] = []
        for event in events[head...].reversed() where seen.insert(event.node).inserted {
            kept.append(event)
        }
        kept.reverse()
        let half = capacity / 2
        if kept.count > half { kept.removeFirst(kept.count - half) }
        events = kept
        head = 0
        precondition(count <= capacity, "coalesced events exceed the buffer")
    }
}
