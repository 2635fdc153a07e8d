/// One scheduled fault: what happens, when it starts and how long it lasts.
///
/// Episodes end by the end of the fault phase at the latest; healing lifts whatever is left.
///
/// ```swift
/// Episode(startTick: 300, durationTicks: 500, fault: .partition(side: [0, 2], symmetric: true))
/// ```
public struct Episode: Codable, Sendable, Hashable {
    /// Tick at which the fault starts.
    public var startTick: UInt64
    /// Ticks it lasts (for a crash, the time the replica stays down; a permanent clock jump has 0).
    public var durationTicks: UInt64
    /// What happens.
    public var fault: Fault

    /// An episode from its parts.
    public init(startTick: UInt64, durationTicks: UInt64, fault: Fault) {
        self.startTick = startTick
        self.durationTicks = durationTicks
        self.fault = fault
    }

    /// Tick at which the fault is lifted.
    public var endTick: UInt64 { startTick + durationTicks }

    func validate(replicaCount: Int, ticksFault: UInt64, topology: Topology) throws {
        guard startTick < ticksFault, durationTicks <= SimulationLimits.ticksFaultMax else {
            throw SimulationError.invalidScenario(reason: "episode at tick \(startTick) is outside the fault phase")
        }
        guard fault.replicas.allSatisfy({ (0..<replicaCount).contains($0) }) else {
            throw SimulationError.invalidScenario(reason: "episode \(fault) names a replica that does not exist")
        }
        switch fault {
        case .partition(let side, _):
            guard !side.isEmpty, side.count < replicaCount else {
                throw SimulationError.invalidScenario(reason: "a partition needs replicas on both sides")
            }
            guard Set(side).count == side.count else {
                throw SimulationError.invalidScenario(reason: "a partition names each replica once")
            }
        case .clog(let from, let to):
            guard from != to else { throw SimulationError.invalidScenario(reason: "a clog joins two replicas") }
        case .clockJump(_, let delta):
            guard delta.magnitude <= UInt64(SimulationLimits.clockJumpMillisMax) else {
                throw SimulationError.invalidScenario(reason: "clock jump of \(delta) ms is too large")
            }
        case .clockBeyondDrift(_, let beyond):
            guard (1...SimulationLimits.beyondDriftMillisMax).contains(beyond) else {
                throw SimulationError.invalidScenario(
                    reason: "a clock may run 1...\(SimulationLimits.beyondDriftMillisMax) ms beyond the drift limit")
            }
        case .crash(let replica, let hub):
            guard hub else { break }
            guard topology == .hub else {
                throw SimulationError.invalidScenario(reason: "a hub crash needs the hub topology")
            }
            guard replica == Scenario.hubIndex else {
                throw SimulationError.invalidScenario(reason: "a hub crash names the hub, r\(Scenario.hubIndex)")
            }
        case .isolate: break
        }
    }
}

/// The kinds of scheduled fault.
public enum Fault: Codable, Sendable, Hashable, CustomStringConvertible {
    /// Cuts `side` from the other replicas: both ways when symmetric, otherwise only what `side`
    /// sends is lost (what it receives still arrives).
    case partition(side: [Int], symmetric: Bool)
    /// Cuts one replica from every other, both ways.
    case isolate(replica: Int)
    /// Stalls the direction `from` → `to` (bytes wait, nothing is lost).
    case clog(from: Int, to: Int)
    /// Power loss: the replica stops, loses what it had not synced, and restarts after the episode.
    /// `hub` marks the crash of the hub of a star.
    case crash(replica: Int, hub: Bool)
    /// The replica's wall clock jumps by `deltaMillis` for good (backwards when negative).
    case clockJump(replica: Int, deltaMillis: Int64)
    /// For the episode's duration, the replica's wall clock runs `beyondMillis` further ahead of the
    /// slowest clock than peers accept: they refuse its stamps (a clock-drift error) until their
    /// own clocks catch up.
    case clockBeyondDrift(replica: Int, beyondMillis: UInt64)

    /// Replicas the fault names.
    public var replicas: [Int] {
        switch self {
        case .partition(let side, _): return side
        case .isolate(let replica), .crash(let replica, _), .clockJump(let replica, _),
            .clockBeyondDrift(let replica, _):
            return [replica]
        case .clog(let from, let to): return [from, to]
        }
    }

    /// The coverage counter an occurrence of this fault raises.
    var counter: CoverageCounter {
        switch self {
        case .partition(_, let symmetric): return symmetric ? .partitionsSymmetric : .partitionsAsymmetric
        case .isolate: return .isolations
        case .clog: return .clogs
        case .crash(_, let hub): return hub ? .hubCrashes : .crashes
        case .clockJump(_, let delta): return delta >= 0 ? .clockJumpsForward : .clockJumpsBackward
        case .clockBeyondDrift: return .clockJumpsBeyondDrift
        }
    }

    /// A short text for logs and reports.

    public var description: String {
        switch self {
        case .partition(let side, let symmetric):
            return "\(symmetric ? "symmetric" : "asymmetric") partition of \(side)"
        case .isolate(let replica): return "isolation of r\(replica)"
        case .clog(let from, let to): return "clog r\(from)→r\(to)"
        case .crash(let replica, let hub): return hub ? "crash of hub r\(replica)" : "crash of r\(replica)"
        case .clockJump(let replica, let delta): return "clock jump of r\(replica) by \(delta) ms"
        case .clockBeyondDrift(let replica, let beyond):
            return "clock of r\(replica) \(beyond) ms beyond the drift limit"
        }
    }
}

/// Errors of the simulator's own inputs (a schedule file, options); failures of the code under test
/// are ``SimulationFailure``s in a report, not errors.
public enum SimulationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A scenario breaks a limit or names something that does not exist.
    case invalidScenario(reason: String)
    /// A schedule file could not be read or parsed.
    case unreadableSchedule(path: String, reason: String)
    /// A shrink started from a run that does not fail.
    case runDoesNotFail(seed: UInt64)

    /// A short text for logs and reports.

    public var description: String {
        switch self {
        case .invalidScenario(let reason): return "invalid scenario: \(reason)"
        case .unreadableSchedule(let path, let reason): return "cannot read schedule \(path): \(reason)"
        case .runDoesNotFail(let seed): return "seed \(seed) does not fail: nothing to shrink"
        }
    }
}
