/// The hybrid logical clock of one replica (Kulkarni et al., 2014).
///
/// It never reads the time itself: callers pass the wall clock in milliseconds. Every stamp it makes is
/// greater than every stamp it made or received before, even when the wall clock goes back.
///
/// ```swift
/// var clock = HybridClock(replica: id)
/// let a = try clock.next(wallMillis: 1000)
/// try clock.receive(remoteStamp, wallMillis: 1001)
/// let b = try clock.next(wallMillis: 999)   // still > a and > remoteStamp
/// ```
public struct HybridClock: Sendable, Hashable {
    /// The replica whose stamps this clock makes.
    public let replica: ReplicaID
    /// The packed time (millis << 16 | counter) of the greatest stamp made or received so far.
    public private(set) var lastTime: UInt64
    /// How far a remote stamp may run ahead of the local wall clock before it is refused.
    public var driftMillisMax: UInt64

    /// A clock that resumes after `lastTime` (0 for a new replica).
    public init(replica: ReplicaID, lastTime: UInt64 = 0, driftMillisMax: UInt64 = CoreLimits.driftMillisMaxDefault) {
        self.replica = replica
        self.lastTime = lastTime
        self.driftMillisMax = driftMillisMax
    }

    /// The greatest stamp made or received so far, as this replica's stamp.
    public var last: Stamp { Stamp(time: lastTime, replica: replica) }

    /// A new stamp for a local event (the HLC send rule).
    /// - Throws: ``CoreError/clockExhausted`` past the 48-bit millisecond range.
    public mutating func next(wallMillis: UInt64) throws -> Stamp {
        try reserve(count: 1, wallMillis: wallMillis)
    }

    /// Reserves `count` consecutive stamps and returns the first; the others follow it by counter.
    ///
    /// A batch uses this to give each push inside it a distinct push id.
    /// - Throws: ``CoreError/clockExhausted``.
    public mutating func reserve(count: Int, wallMillis: UInt64) throws -> Stamp {
        precondition(count >= 1, "reserve at least one stamp")
        precondition(count <= Int(CoreLimits.stampCounterMax), "reserve at most one millisecond of stamps")
        let wall = min(wallMillis, CoreLimits.stampMillisMax) << 16
        var first = max(wall, lastTime &+ 1)
        // Keep the whole range inside one millisecond so the counters of the range are consecutive.
        let counter = first & 0xFFFF
        if counter + UInt64(count) - 1 > UInt64(CoreLimits.stampCounterMax) {
            first = ((first >> 16) + 1) << 16
        }
        guard first >> 16 <= CoreLimits.stampMillisMax, first > lastTime else { throw CoreError.clockExhausted }
        // Parenthesized: the last stamp of the 48-bit range is `UInt64.max`, and `first + count` would overflow.
        lastTime = first + (UInt64(count) - 1)
        precondition(lastTime >= first, "clock range overflow")
        return Stamp(time: first, replica: replica)
    }

    /// Takes a remote stamp into account (the HLC receive rule), so later local stamps exceed it.
    /// - Throws: ``CoreError/clockDrift(aheadMillis:maxMillis:)`` when `remote` is more than
    ///   ``driftMillisMax`` ahead of `wallMillis`; the clock is then unchanged.
    public mutating func receive(_ remote: Stamp, wallMillis: UInt64) throws {
        try check(remote, wallMillis: wallMillis)
        if remote.time > lastTime { lastTime = remote.time }
    }

    /// Checks a remote stamp against the drift limit without adopting it.
    /// - Throws: ``CoreError/clockDrift(aheadMillis:maxMillis:)``.
    public func check(_ remote: Stamp, wallMillis: UInt64) throws {
        if remote.millis > wallMillis, remote.millis - wallMillis > driftMillisMax {
            throw CoreError.clockDrift(aheadMillis: remote.millis - wallMillis, maxMillis: driftMillisMax)
        }
    }
}
