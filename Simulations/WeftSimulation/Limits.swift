/// Named limits of the simulator. `SimulationLimitsTests` asserts how they relate.
///
/// One tick is one simulated millisecond. The simulation jumps from event to event, so idle time
/// costs nothing; these bounds say how much simulated time and work a run may take.
public enum SimulationLimits {
    /// Fewest replicas in one run.
    public static let replicasMin = 2
    /// Most replicas in one run.
    public static let replicasMax = 16
    /// Most simulated ticks of the healing phase before a run is declared not converging.
    public static let ticksMaxConvergence = 20_000

    // MARK: - Runs

    /// Most ops the workload writes in one run (all replicas together).
    public static let opsMax = 1_000_000
    /// Shortest fault phase, in ticks.
    public static let ticksFaultMin: UInt64 = 200
    /// Longest fault phase, in ticks.
    public static let ticksFaultMax: UInt64 = 600_000
    /// Most events one run may handle before it is declared runaway (a livelock is a failure too).
    public static let eventsMax = 50_000_000
    /// Most fault episodes (partitions, clogs, crashes, clock jumps) one scenario may schedule.
    public static let episodesMax = 256
    /// Replicas beyond which a mesh is a ring with chords instead of a full mesh (links grow as n²).
    public static let fullMeshReplicasMax = 6
    /// Chords added to a ring-shaped mesh, per replica.
    public static let meshChordsPerReplica = 1

    // MARK: - Network

    /// Smallest base one-way latency of a link, in ticks.
    public static let latencyTicksMin: UInt64 = 1
    /// Largest base one-way latency of a link, and largest jitter, in ticks.
    public static let latencyTicksMax: UInt64 = 40
    /// Largest extra delay of a delayed frame, in ticks.
    public static let delaySpikeTicksMax: UInt64 = 400
    /// Largest probability of each per-frame fault (drop, duplicate, reorder, delay spike).
    public static let frameFaultRateMax = 0.05
    /// Ticks after which a connection whose stream was damaged (a frame dropped, duplicated or
    /// reordered) is torn down, as a transport would after detecting it.
    public static let damageResetTicks: UInt64 = 30
    /// Ticks a dial waits before it gives up on an unreachable peer.
    public static let connectTimeoutTicks: UInt64 = 100
    /// First backoff of a redial, in ticks (doubled per failed attempt, jittered).
    public static let redialTicksMin: UInt64 = 10
    /// Longest backoff of a redial, in ticks.
    public static let redialTicksMax: UInt64 = 800

    // MARK: - Sessions

    /// Smallest receive window drawn for sessions, in bytes.
    public static let windowBytesMin = 1024
    /// Largest receive window drawn for sessions, in bytes.
    public static let windowBytesMax = 256 * 1024
    /// Fewest ops per batch frame drawn for sessions.
    public static let batchOpsMin = 1
    /// Most ops per batch frame drawn for sessions.
    public static let batchOpsMax = 256
    /// Shortest keep-alive interval drawn for sessions, in ticks.
    public static let pingIntervalTicksMin: UInt64 = 50
    /// Longest keep-alive interval drawn for sessions, in ticks.
    public static let pingIntervalTicksMax: UInt64 = 400
    /// Longest idle or handshake timeout a scenario may give its sessions, in ticks (drawn ones stay
    /// well below; a longer one could not fire before the convergence bound).
    public static let sessionTimeoutTicksMax: UInt64 = 10_000

    // MARK: - Replicas, disks and clocks

    /// Shortest interval between two fsyncs of a replica whose commits are not synced one by one,
    /// in ticks.
    public static let syncIntervalTicksMin: UInt64 = 2
    /// Longest interval between two fsyncs, in ticks.
    public static let syncIntervalTicksMax: UInt64 = 100
    /// Longest time a crashed replica stays down, in ticks.
    public static let downTicksMax: UInt64 = 3_000
    /// Largest clock offset of a replica from simulated time, in milliseconds (well within the
    /// drift a replica accepts, so skew alone never makes peers refuse each other).
    public static let clockOffsetMillisMax: Int64 = 15_000
    /// Largest clock jump, in milliseconds; the offset stays within ``clockOffsetMillisMax``.
    public static let clockJumpMillisMax: Int64 = 10_000
    /// Maximum drift replicas accept in the simulation, in milliseconds.
    public static let driftMillisMax: UInt64 = 60_000
    /// Most ticks a clock may run beyond the drift limit in a "beyond drift" jump; peers refuse its
    /// stamps until their own clocks catch up, which must fit in the convergence bound.
    public static let beyondDriftMillisMax: UInt64 = 3_000
    /// Simulated wall time at tick 0, in milliseconds since the epoch.
    public static let epochMillis: UInt64 = 1_700_000_000_000

    // MARK: - Checkers

    /// Ticks between two continuous checks.
    public static let checkIntervalTicks: UInt64 = 100
    /// Most full reference-fold checks during one run (each folds every op a replica knows).
    public static let foldChecksPerRunMax = 6
    /// Most ops re-delivered by one duplicate-delivery check.
    public static let duplicateCheckOpsMax = 32
    /// Events between two checks of a merge engine's invariants (each checks one replica, in turn);
    /// 0 turns them off.
    public static let invariantCheckIntervalEvents = 64

    // MARK: - Shrinking and swarms

    /// Most simulations one shrink may run.
    public static let shrinkRunsMax = 2_000
    /// Most seeds one swarm may run.
    public static let swarmSeedsMax = 10_000_000
}
