import WeftCore

/// A subscribed node as one webhook delivery carries it: its value, what the value reflects, and the ops
/// that changed it since the previous delivery.
///
/// ```swift
/// let changes = replica.changes(at: orders, since: cursorVector)
/// print(changes.stamps.map(\.text), changes.isComplete)
/// ```
public struct NodeChanges: Sendable, Hashable {
    /// The node's value (null when absent).
    public var value: Value
    /// The replica's version vector when the value was read: the next delivery's `since`.
    public var vector: VersionVector
    /// The stamps of the applied ops whose anchors are related to the node (an ancestor, itself or a
    /// descendant) and that `since` did not cover, in stamp order: at most
    /// ``WeftLimits/deliveryStampsMax``, the latest.
    public var stamps: [Stamp]
    /// False when some such ops are left out: past the cap, past ``WeftLimits/deliveryStampsScanMax`` ops
    /// read, or folded into the base by a compaction (their stamps are gone).
    public var isComplete: Bool
}

extension Replica {
    /// The value at `path` and the stamps of the ops that changed it since `since`, read together so that
    /// the value reflects exactly the ops listed (and those before them).
    ///
    /// Reads each origin's log backwards from its latest op, so the cost is the ops made since `since`,
    /// at most ``WeftLimits/deliveryStampsScanMax``; rejected ops and calls waiting for their function
    /// changed nothing and are not listed. Waits for the load.
    ///
    /// ```swift
    /// let changes = replica.changes(at: try Path("/orders"), since: VersionVector())
    /// ```
    public func changes(
        at path: Path, since: VersionVector, stampsMax: Int = WeftLimits.deliveryStampsMax,
        scanMax: Int = WeftLimits.deliveryStampsScanMax
    ) -> NodeChanges {
        condition.lock()
        defer { condition.unlock() }
        waitForLoad()
        guard let engine else { return NodeChanges(value: .null, vector: VersionVector(), stamps: [], isComplete: true) }
        let vector = engine.versionVector
        var stamps: [Stamp] = []
        var isComplete = true
        var scanned = 0
        for (origin, latest) in vector.entries.sorted(by: { $0.key < $1.key }) {
            var sequence = latest
            var found = 0
            while sequence > since[origin] {
                guard scanned < scanMax else {
                    isComplete = false
                    break
                }
                scanned += 1
                // A compaction folded this op and every earlier one of the origin: their stamps are gone.
                guard let stamp = engine.stamp(of: origin, sequence: sequence), let op = engine.op(for: stamp) else {
                    isComplete = false
                    break
                }
                if engine.outcome(of: stamp) == .applied, op.hasAnchor(relatedTo: path) {
                    // The origin's latest `stampsMax` are all that can be among the latest overall.
                    guard found < stampsMax else {
                        isComplete = false
                        break
                    }
                    stamps.append(stamp)
                    found += 1
                }
                sequence -= 1
            }
        }
        stamps.sort()
        if stamps.count > stampsMax {
            stamps.removeFirst(stamps.count - stampsMax)
            isComplete = false
        }
        return NodeChanges(value: engine.value(at: path), vector: vector, stamps: stamps, isComplete: isComplete)
    }
}
