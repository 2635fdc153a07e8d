/// The events of one subscriber waiting for delivery, bounded by ``WeftLimits/subscriberEventsBufferedMax``.
///
/// A subscriber that falls behind gets coalesced events: only the latest value change, and only the
/// latest event of each child. Coalescing never drops a node's last event while the nodes number at most
/// ``WeftLimits/subscriberEventsCoalescedMax``: a list kept from additions and removals stays right
/// however many children change at once. Beyond that the oldest go (value changes are never lost: the
/// latest is always kept).
struct EventBuffer {
    private var events: [DataEvent] = []
    private var head = 0
    /// The count past which events are coalesced.
    let capacity: Int
    /// The most events kept once coalesced.
    let coalescedMax: Int
    /// The count past which the next coalescing runs: at least twice what the last one kept, so that a
    /// buffer holding one event for each of many nodes does not coalesce on every append.
    private var threshold: Int

    init(
        capacity: Int = WeftLimits.subscriberEventsBufferedMax,
        coalescedMax: Int = WeftLimits.subscriberEventsCoalescedMax
    ) {
        precondition(capacity >= 2, "an event buffer holds at least two events")
        precondition(coalescedMax >= capacity, "coalescing keeps at least a buffer's worth")
        self.capacity = capacity
        self.coalescedMax = coalescedMax
        threshold = capacity
    }

    /// Number of events waiting.
    var count: Int { events.count - head }

    var isEmpty: Bool { count == 0 }

    mutating func append(contentsOf new: [DataEvent]) {
        events.append(contentsOf: new)
        if count > threshold { coalesce() }
    }

    /// Removes and returns up to `limit` events, oldest first.
    mutating func take(_ limit: Int) -> [DataEvent] {
        let end = head + min(limit, count)
        let taken = Array(events[head..<end])
        head = end
        if head == events.count {
            events.removeAll(keepingCapacity: events.count <= capacity)
            head = 0
            threshold = capacity
        } else if head > events.count / 2 {
            events.removeFirst(head)
            head = 0
        }
        return taken
    }

    mutating func removeAll() {
        events = []
        head = 0
        threshold = capacity
    }

    /// Keeps the last event of each node (the subscribed node for value changes, a child for child
    /// events), in the order of those last events; then at most `coalescedMax`, the newest.
    private mutating func coalesce() {
        var seen = Set<DataNode>()
        var kept: [DataEvent] = []
        for event in events[head...].reversed() where seen.insert(event.node).inserted {
            kept.append(event)
        }
        kept.reverse()
        if kept.count > coalescedMax { kept.removeFirst(kept.count - coalescedMax) }
        events = kept
        head = 0
        threshold = max(capacity, 2 * kept.count)
        precondition(count <= coalescedMax, "coalesced events exceed the buffer")
    }
}
